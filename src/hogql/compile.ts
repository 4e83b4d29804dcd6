/**
 * The events API's HogQL: `select`, `where` and `orderBy` lists of expressions and the
 * `properties` filters, each compiled to IR over one events table (alias `e`, scoped to the
 * project). Fields of persons come through lazy joins recorded on the scope's binding; the
 * caller adds `lazyJoins(scope.binding)` to the FROM clause of the statement it builds.
 */
import type { Expr } from './ast.js';
import { type CompileContext } from './context.js';
import { HogQLError, errorAt, quoteForMessage } from './errors.js';
import { type PropertyAccess, type TableBinding, binding, resolveTableField, unknownField } from './fields.js';
import type { IrExpr, IrOrder } from './ir.js';
import { cast } from './ir.js';
import * as ir from './ir.js';
import { parseExpression, parseSelectItem } from './parser.js';
import { compilePropertyFilters, type FilterSources, type PropertyReader } from './property-filters.js';
import { ExprResolver, type FieldScope } from './resolver.js';
import type { HogQLType } from './types.js';

/** More expressions than this in one list is not a real query. */
export const MAX_EXPRESSIONS = 100;

/** Declared property types (from property definitions) apply to top-level keys. */
export function typedProperty(ctx: CompileContext, access: PropertyAccess): IrExpr {
  const declared = access.path.length === 1 ? ctx.propertyType(access.kind, access.path[0]) : null;
  switch (declared) {
    case 'Numeric':
      return cast(access.ir, 'Float');
    case 'Boolean':
      return cast(access.ir, 'Boolean');
    case 'DateTime':
      return cast(access.ir, 'DateTime');
    default:
      return access.ir;
  }
}

/** Field lookup against one events table, for expressions written without a FROM clause. */
export class EventsScope implements FieldScope {
  readonly binding: TableBinding;

  constructor(
    readonly ctx: CompileContext,
    projectId: number,
    alias = 'e',
  ) {
    this.binding = binding(alias, 'events', projectId);
  }

  field(names: string[], start: number): IrExpr {
    const ir = resolveTableField(this.binding, names, (access) => typedProperty(this.ctx, access));
    if (!ir) throw unknownField(names, start);
    return ir;
  }

  /** A fresh resolver (one per expression: aggregate tracking is per expression). */
  resolver(): ExprResolver {
    return new ExprResolver(this.ctx, this);
  }

  filterSources(resolver = this.resolver()): FilterSources & { elementsChain: IrExpr } {
    const reader = (names: string[]): PropertyReader => ({
      typed: this.field(names, 0),
      text: resolveTableField(this.binding, names, (access) => access.ir)!,
    });
    return {
      resolver,
      event: (key) => reader(['properties', key]),
      person: (key) => reader(['person', 'properties', key]),
      elementsChain: this.field(['elements_chain'], 0),
      cohort: (id, negated) => cohortMembership(this.field(['person_id'], 0), this.binding.projectId, id, negated),
    };
  }

  get needsPerson(): boolean {
    return this.binding.lazy.size > 0;
  }
}

/**
 * `person IN (members of the cohort)`, read from the event store's membership mirror (scoped to
 * the project like every table). A cohort that does not exist has no members.
 */
export function cohortMembership(person: IrExpr, projectId: number, cohortId: number, negated = false): IrExpr {
  const members = ir.select({
    columns: [{ name: 'person_id', expr: ir.column('cp', 'cohort_people', 'person_id', 'UUID') }],
    from: { kind: 'table', table: 'cohort_people', alias: 'cp', projectId },
    where: ir.op('=', [ir.column('cp', 'cohort_people', 'cohort_id', 'Integer'), ir.constant(cohortId, 'Integer')]),
  });
  const inside = ir.op('in', [person, { kind: 'subquery', query: members, type: 'UUID' }]);
  // A person-less event is in no cohort, so it is in "not in" (NOT IN would give NULL).
  return negated ? ir.op('not', [ir.call('coalesce', [inside, ir.constant(false, 'Boolean')], 'Boolean')]) : inside;
}

export interface SelectResult {
  /** Column names: the alias, or the expression's source text. */
  columns: string[];
  exprs: IrExpr[];
  types: HogQLType[];
  /** Non-aggregate expressions to GROUP BY, when any column aggregates; otherwise empty. */
  groupBy: IrExpr[];
  hasAggregate: boolean;
}

export interface WhereResult {
  /** Conjunction of the non-aggregate conditions (null if none). */
  where: IrExpr | null;
  /** Conjunction of conditions that aggregate; belongs in HAVING (null if none). */
  having: IrExpr | null;
}

export function compileSelect(sources: readonly unknown[], scope: EventsScope): SelectResult {
  const items = expressionList(sources, 'select').map((source, index) =>
    withSource('select', index, () => {
      const { expr, alias } = parseSelectItem(source);
      const { ir, hasAggregate } = resolveAlone(scope, expr, false);
      return { column: alias ?? source.trim(), ir, hasAggregate };
    }),
  );
  const hasAggregate = items.some((item) => item.hasAggregate);
  return {
    columns: items.map((item) => item.column),
    exprs: items.map((item) => item.ir),
    types: items.map((item) => item.ir.type),
    groupBy: hasAggregate ? items.filter((item) => !item.hasAggregate).map((item) => item.ir) : [],
    hasAggregate,
  };
}

export function compileWhere(sources: readonly unknown[], scope: EventsScope): WhereResult {
  const where: IrExpr[] = [];
  const having: IrExpr[] = [];
  expressionList(sources, 'where').forEach((source, index) =>
    withSource('where', index, () => {
      const { ir, hasAggregate } = resolveAlone(scope, parseExpression(source), true);
      (hasAggregate ? having : where).push(ir);
    }),
  );
  return { where: conjunction(where), having: conjunction(having) };
}

/** `orderBy`: expressions, each optionally prefixed with `-` for descending (PostHog's form). */
export function compileOrderBy(sources: readonly unknown[], scope: EventsScope, allowAggregates: boolean): IrOrder[] {
  return expressionList(sources, 'orderBy').map((source, index) =>
    withSource('orderBy', index, () => {
      const trimmed = source.trim();
      const desc = trimmed.startsWith('-');
      const { ir, hasAggregate } = resolveAlone(scope, parseExpression(desc ? trimmed.slice(1) : trimmed), false);
      if (hasAggregate && !allowAggregates) throw new HogQLError('orderBy may use aggregate functions only with an aggregating select');
      return { expr: ir, desc };
    }),
  );
}

/** `extra`: sources only some callers have (group properties, cohorts). */
export function compileFilters(json: unknown, scope: EventsScope, extra: Partial<FilterSources> = {}): IrExpr | null {
  try {
    return compilePropertyFilters(json, { ...scope.filterSources(), ...extra });
  } catch (error) {
    if (error instanceof HogQLError && error.attr === null) throw error.withSource('properties');
    throw error;
  }
}

/**
 * GROUP BY list for a select + where pair: the select's own grouping, or — when only the where
 * list aggregates (a HAVING) — every selected column.
 */
export function groupByFor(select: SelectResult, where: WhereResult): IrExpr[] {
  if (select.hasAggregate || where.having === null) return select.groupBy;
  return select.exprs;
}

/** One expression on its own: no bare field may stand next to an aggregate (nothing groups by it). */
function resolveAlone(scope: EventsScope, expr: Expr, condition: boolean): { ir: IrExpr; hasAggregate: boolean } {
  const resolver = scope.resolver();
  const ir = condition ? resolver.condition(expr) : resolver.resolve(expr);
  checkAggregateFields(resolver);
  return { ir, hasAggregate: resolver.hasAggregate };
}

export function checkAggregateFields(resolver: ExprResolver): void {
  const field = resolver.fieldOutsideAggregate;
  if (resolver.hasAggregate && field) {
    throw errorAt(`Field ${quoteForMessage(field.text)} must be inside an aggregate function in an expression that aggregates`, field.start);
  }
}

function expressionList(exprs: readonly unknown[], attr: string): string[] {
  if (!Array.isArray(exprs)) throw new HogQLError(`${attr} must be a list of expressions`, null, attr);
  if (exprs.length > MAX_EXPRESSIONS) throw new HogQLError(`${attr} has too many expressions (limit ${MAX_EXPRESSIONS})`, null, attr);
  return exprs.map((item, index) => {
    if (typeof item !== 'string') throw new HogQLError(`${attr}[${index}] must be a string`, null, attr, index);
    return item;
  });
}

function withSource<T>(attr: string, index: number, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof HogQLError) throw error.withSource(attr, index);
    throw error;
  }
}

function conjunction(parts: IrExpr[]): IrExpr | null {
  if (parts.length === 0) return null;
  return parts.length === 1 ? parts[0] : { kind: 'op', op: 'and', args: parts, type: 'Boolean' };
}
