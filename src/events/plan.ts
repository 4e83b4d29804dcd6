/**
 * An events request compiled to IR over `events e`: the filter conditions (plain parameters,
 * `properties`, `where`), the optional `select` list and `orderBy`. Compiling is dialect-neutral;
 * statements.ts builds the statements the store's dialect prints.
 */
import {
  compileFilters,
  compileOrderBy,
  compileSelect,
  compileWhere,
  EventsScope,
  groupByFor,
  HogQLError,
  ir,
  type CompileContext,
  type SelectResult,
} from '../hogql/index.js';
import { actionCondition } from '../actions/condition.js';
import { groupReader } from './group-filters.js';
import type { EventsQuery } from './types.js';

type IrExpr = ir.IrExpr;

export interface QueryPlan {
  projectId: number;
  /** Conjunction of every filter (the project is the table's own scope); null = all events. */
  where: ir.IrExpr | null;
  /** The scope the filters were compiled in: its lazy joins serve every statement that filters. */
  filters: EventsScope;
  /** Only event columns decide the filters: rows already counted keep their answer. */
  stable: boolean;
  select: (SelectResult & { groupBy: IrExpr[]; having: IrExpr | null; grouped: boolean; scope: EventsScope }) | null;
  /** `orderBy` other than newest first; null = newest first (keyset pages). */
  orderBy: { items: ir.IrOrder[]; scope: EventsScope } | null;
  /** The parameter carrying HogQL, blamed for errors the store raises while running it. */
  hogqlAttr: string | null;
}

const timestampColumn = ir.column('e', 'events', 'timestamp', 'DateTime');
const instant = (text: string) => ir.constant(text, 'DateTime');

export function buildPlan(query: EventsQuery, ctx: CompileContext): QueryPlan {
  const filters = new EventsScope(ctx, query.projectId);
  const conditions: Array<IrExpr | null> = [];
  if (query.after) conditions.push(ir.op('>', [timestampColumn, instant(query.after)]));
  if (query.before) conditions.push(ir.op('<', [timestampColumn, instant(query.before)]));
  if (query.event !== null) conditions.push(ir.op('=', [ir.column('e', 'events', 'event', 'String'), ir.constant(query.event, 'String')]));
  if (query.distinctId !== null) conditions.push(ir.op('=', [ir.column('e', 'events', 'distinct_id', 'String'), ir.constant(query.distinctId, 'String')]));
  if (query.personId !== null) conditions.push(personCondition(query.projectId, query.personId));
  if (query.actionSteps !== null) conditions.push(actionCondition(query.actionSteps, filters.filterSources(), 'action_id'));
  if (query.properties !== null) conditions.push(compileFilters(query.properties, filters, query.groupValues ? { group: groupReader(query.groupValues) } : {}));
  const where = query.where ? compileWhere(query.where, filters) : null;
  if (where) conditions.push(where.where);

  let select: QueryPlan['select'] = null;
  const selectScope = new EventsScope(ctx, query.projectId);
  if (query.select) {
    const compiled = compileSelect(query.select, selectScope);
    const having = where?.having ?? null;
    const groupBy = where ? groupByFor(compiled, where) : compiled.groupBy;
    select = { ...compiled, groupBy, having, grouped: compiled.hasAggregate || having !== null, scope: selectScope };
  } else if (where?.having) {
    throw new HogQLError('where uses an aggregate function; that needs a select list to group by', null, 'where');
  }
  let orderBy: QueryPlan['orderBy'] = null;
  if (query.orderBy && !isNewestFirst(query.orderBy)) {
    const scope = select?.grouped ? selectScope : new EventsScope(ctx, query.projectId);
    orderBy = { items: compileOrderBy(query.orderBy, scope, select?.grouped === true), scope };
  }
  return {
    projectId: query.projectId,
    where: ir.allOf(conditions),
    filters,
    stable: !filters.needsPerson && query.personId === null,
    select,
    orderBy,
    hogqlAttr: query.select ? 'select' : query.where ? 'where' : query.orderBy ? 'orderBy' : query.properties !== null ? 'properties' : null,
  };
}

/** `["-timestamp"]`, PostHog's default, is the keyset walk's own order. */
function isNewestFirst(orderBy: string[]): boolean {
  return orderBy.length === 1 && orderBy[0].replace(/\s+/g, '') === '-timestamp';
}

/** Every distinct id the person has now, after merges. */
function personCondition(projectId: number, personId: string): IrExpr {
  const ids = ir.select({
    columns: [{ expr: ir.column('d', 'person_distinct_ids', 'distinct_id', 'String'), name: 'distinct_id' }],
    from: { kind: 'table', table: 'person_distinct_ids', alias: 'd', projectId },
    where: ir.op('=', [ir.column('d', 'person_distinct_ids', 'person_id', 'UUID'), ir.constant(personId, 'UUID')]),
  });
  return ir.op('in', [ir.column('e', 'events', 'distinct_id', 'String'), { kind: 'subquery', query: ids, type: 'String' }]);
}
