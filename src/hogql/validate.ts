/**
 * Checks an expression against the whitelists before any SQL is printed: known fields,
 * known functions with the right number of arguments, no aggregate inside an aggregate,
 * and no bare field next to an aggregate (DuckDB would reject it at run time).
 */
import { type Call, type Expr, children } from './ast.js';
import { errorAt, quoteForMessage } from './errors.js';
import { resolveField } from './fields.js';
import { type FunctionSpec, findFunction } from './functions.js';

export interface ExprInfo {
  hasAggregate: boolean;
  needsPerson: boolean;
}

export function validateExpr(expr: Expr): ExprInfo {
  const state: WalkState = { hasAggregate: false, needsPerson: false, fieldOutsideAggregate: null };
  walk(expr, null, state);
  if (state.hasAggregate && state.fieldOutsideAggregate) {
    const field = state.fieldOutsideAggregate;
    throw errorAt(
      `Field ${quoteForMessage(field.text)} must be inside an aggregate function in an expression that aggregates`,
      field.start,
    );
  }
  return { hasAggregate: state.hasAggregate, needsPerson: state.needsPerson };
}

interface WalkState extends ExprInfo {
  fieldOutsideAggregate: { text: string; start: number } | null;
}

function walk(expr: Expr, aggregate: FunctionSpec | null, state: WalkState): void {
  switch (expr.kind) {
    case 'field':
    case 'index': {
      const ref = resolveField(expr);
      if ((ref.kind === 'column' && ref.needsPerson) || (ref.kind === 'property' && ref.source === 'person')) {
        state.needsPerson = true;
      }
      if (!aggregate && !state.fieldOutsideAggregate) {
        const text = expr.kind === 'field' ? expr.chain.map((part) => part.name).join('.') : 'properties[…]';
        state.fieldOutsideAggregate = { text, start: expr.start };
      }
      return;
    }
    case 'star':
      throw errorAt("'*' is only allowed in count(*)", expr.start);
    case 'call':
      walkCall(expr, aggregate, state);
      return;
    default:
      for (const child of children(expr)) walk(child, aggregate, state);
  }
}

function walkCall(call: Call, aggregate: FunctionSpec | null, state: WalkState): void {
  const spec = findFunction(call.name);
  if (!spec) throw errorAt(`Unknown function ${quoteForMessage(call.name)}`, call.start);
  const star = call.args.length === 1 && call.args[0].kind === 'star';
  if (star && spec.name !== 'count') throw errorAt("'*' is only allowed in count(*)", call.args[0].start);
  const arity = star ? 0 : call.args.length;
  if (arity < spec.minArgs || arity > spec.maxArgs) {
    throw errorAt(`Function '${spec.name}' ${describeArity(spec)}, got ${arity}`, call.start);
  }
  if (spec.aggregate) {
    if (aggregate) {
      throw errorAt(`Aggregate function '${spec.name}' cannot be used inside aggregate function '${aggregate.name}'`, call.start);
    }
    state.hasAggregate = true;
  }
  spec.check?.(call);
  if (star) return;
  for (const arg of call.args) walk(arg, spec.aggregate ? spec : aggregate, state);
}

function describeArity({ minArgs, maxArgs }: FunctionSpec): string {
  const plural = (n: number) => (n === 1 ? 'argument' : 'arguments');
  if (minArgs === maxArgs) return `takes ${minArgs} ${plural(minArgs)}`;
  if (maxArgs === Infinity) return `takes at least ${minArgs} ${plural(minArgs)}`;
  return `takes ${minArgs} to ${maxArgs} arguments`;
}
