/**
 * Checks one events-API expression without building a statement: known fields, known functions
 * with the right number of arguments, no aggregate inside an aggregate, and no bare field next
 * to an aggregate.
 */
import type { Expr } from './ast.js';
import { EventsScope, checkAggregateFields } from './compile.js';
import type { CompileContext } from './context.js';

export interface ExprInfo {
  hasAggregate: boolean;
  needsPerson: boolean;
}

const DEFAULT_CONTEXT: CompileContext = { propertyType: () => null, now: new Date(0) };

export function validateExpr(expr: Expr, ctx: CompileContext = DEFAULT_CONTEXT): ExprInfo {
  const scope = new EventsScope(ctx, 0);
  const resolver = scope.resolver();
  resolver.resolve(expr);
  checkAggregateFields(resolver);
  return { hasAggregate: resolver.hasAggregate, needsPerson: scope.needsPerson };
}
