/**
 * The statements of the events API, as IR built from a QueryPlan; the event store's dialect
 * prints them. Values are constants (bound by the dialect); the only names are the schema's
 * logical ones and our own output columns.
 */
import { EventsScope, ir, lazyJoins, type TableBinding } from '../hogql/index.js';
import type { QueryPlan } from './plan.js';
import type { Cursor } from './types.js';

type IrExpr = ir.IrExpr;
type IrOrder = ir.IrOrder;

const col = (name: string, type: ir.IrColumn['type']) => ir.column('e', 'events', name, type);
const TIMESTAMP = col('timestamp', 'DateTime');
const UUID = col('uuid', 'UUID');
const ROW_KEY = col('$row_key', 'Integer');
const FLUSH_SEQ = col('$flush_seq', 'Integer');
/** How far the store has taken flushes: rows are stamped with their flush. */
const STORE_SEQ = ir.call('__storeSeq', [], 'Integer');

const order = (desc: boolean): IrOrder[] => [
  { expr: TIMESTAMP, desc },
  { expr: UUID, desc },
];
const NEWEST_FIRST = order(true);
const OLDEST_FIRST = order(false);

/** The stored event as the list and retrieve answers need it (rows.ts reads these names). */
const EVENT_COLUMNS: ir.IrSelectColumn[] = [
  { expr: ir.cast(UUID, 'String'), name: 'id' },
  { expr: col('distinct_id', 'String'), name: 'distinct_id' },
  { expr: col('properties', 'String'), name: 'properties' },
  { expr: col('event', 'String'), name: 'event' },
  { expr: TIMESTAMP, name: 'ts' },
  { expr: col('elements_chain', 'String'), name: 'elements_chain' },
];
/** Hidden key columns of a `select` row, for the next page's cursor. */
const KEY_COLUMNS: ir.IrSelectColumn[] = [
  { expr: TIMESTAMP, name: '__ts' },
  { expr: ir.cast(UUID, 'String'), name: '__uuid' },
];

/** Column aliases c0, c1, … keep repeated or odd expression texts apart in row objects. */
export const selectColumns = (exprs: IrExpr[]): ir.IrSelectColumn[] => exprs.map((expr, i) => ({ expr, name: `c${i}` }));

/** `events e` with the lazy joins that the given scopes' fields need. */
function eventsFrom(projectId: number, ...scopes: Array<EventsScope | null | undefined>): Pick<ir.IrSelect, 'from' | 'joins'> {
  const needs: TableBinding = { alias: 'e', table: 'events', projectId, lazy: new Set() };
  for (const scope of scopes) for (const join of scope?.binding.lazy ?? []) needs.lazy.add(join);
  return { from: { kind: 'table', table: 'events', alias: 'e', projectId }, joins: lazyJoins(needs) };
}

/**
 * The current person of each event's distinct id (after merges), else the one stored with it;
 * with the scope whose joins it needs.
 */
function personId(like: EventsScope): { column: ir.IrSelectColumn; scope: EventsScope } {
  const scope = new EventsScope(like.ctx, like.binding.projectId);
  return { column: { expr: ir.cast(scope.field(['person_id'], 0), 'String'), name: 'person_id' }, scope };
}

/**
 * Count, oldest and newest timestamp of the matching rows written by flushes after `afterSeq`
 * (every row when -1), and the flush sequence they were read at — one snapshot, one statement.
 * `afterSeq` null: every matching row, without sequences (an event store that nodes share).
 */
export function statsQuery(plan: QueryPlan, afterSeq: number | null): ir.IrSelect {
  const columns = [
    { expr: ir.call('count', [], 'Integer'), name: 'n' },
    { expr: ir.call('min', [TIMESTAMP], 'DateTime'), name: 'lo' },
    { expr: ir.call('max', [TIMESTAMP], 'DateTime'), name: 'hi' },
  ];
  const from = eventsFrom(plan.projectId, plan.filters);
  if (afterSeq === null) return ir.select({ columns, ...from, where: plan.where });
  return ir.select({
    columns: [{ expr: STORE_SEQ, name: 'seq' }, ...columns],
    ...from,
    where: ir.allOf([plan.where, ir.op('>', [FLUSH_SEQ, ir.constant(Math.trunc(afterSeq), 'Integer')]), ir.op('<=', [FLUSH_SEQ, STORE_SEQ])]),
  });
}

export interface PageRequest {
  limit: number;
  offset: number;
  cursor: Cursor | null;
  /** Lower time bound (DateTime text) that lets the store skip old rows; null scans everything. */
  since: string | null;
  /** CSV rows also carry the current person id. */
  withPersonId?: boolean;
}

/**
 * One page of rows (events, or `select` rows with their key columns), newest first unless
 * reversed or `orderBy` says otherwise. Late materialisation: the top-N runs over row keys and
 * the sort key only, then the wide columns (the properties JSON above all) are read for just the
 * rows of the page.
 */
export function pageQuery(plan: QueryPlan, page: PageRequest): ir.IrSelect {
  const custom = plan.orderBy;
  const sort = custom ? [...custom.items.map((o) => ({ ...o })), { expr: UUID, desc: false }] : page.cursor?.reverse ? OLDEST_FIRST : NEWEST_FIRST;
  // The page's time bounds, in both queries: ClickHouse's row key (the uuid) follows the hour in
  // its sorting key, so the wide read finds the page's rows without scanning every part only when
  // it has the time range too.
  const bounds = [page.cursor ? cursorCondition(page.cursor) : null, page.since ? ir.op('>=', [TIMESTAMP, ir.constant(page.since, 'DateTime')]) : null];
  const keys = ir.select({
    columns: [{ expr: ROW_KEY, name: 'row_id' }],
    ...eventsFrom(plan.projectId, plan.filters, custom?.scope),
    where: ir.allOf([plan.where, ...bounds]),
    orderBy: sort,
    limit: ir.constant(Math.trunc(page.limit), 'Integer'),
    offset: page.offset > 0 ? ir.constant(Math.trunc(page.offset), 'Integer') : null,
  });
  const select = plan.select;
  const person = page.withPersonId && !select ? personId(plan.filters) : null;
  const columns = select ? [...selectColumns(select.exprs), ...KEY_COLUMNS] : [...EVENT_COLUMNS, ...(person ? [person.column] : [])];
  const inPage = ir.select({
    columns: [{ expr: ir.column('pg', null, 'row_id', 'Integer'), name: 'row_id' }],
    from: { kind: 'cte', name: 'page', alias: 'pg' },
  });
  return ir.select({
    ctes: [{ name: 'page', query: keys }],
    columns,
    ...eventsFrom(plan.projectId, select?.scope, person?.scope, custom?.scope),
    where: ir.allOf([ir.op('in', [ROW_KEY, { kind: 'subquery', query: inPage, type: 'Integer' }]), ...bounds]),
    orderBy: sort,
  });
}

/** Rows strictly after the position in the walk's direction (or from it, when inclusive). */
function cursorCondition(cursor: Cursor): IrExpr {
  const ts = ir.constant(cursor.timestamp.replace('T', ' '), 'DateTime');
  const uuid = ir.constant(cursor.uuid, 'UUID');
  const [wide, strict] = cursor.reverse ? (['>=', '>'] as const) : (['<=', '<'] as const);
  const tie = cursor.inclusive ? wide : strict;
  // The first, redundant bound is a plain column comparison the store can prune row groups with.
  return ir.allOf([ir.op(wide, [TIMESTAMP, ts]), ir.op('or', [ir.op(strict, [TIMESTAMP, ts]), ir.op(tie, [UUID, uuid])])])!;
}

/**
 * Aggregating `select`: groups ordered by `orderBy`, else by the first aggregate (largest
 * first), then every column; with their total.
 */
export function groupedQuery(plan: QueryPlan, limit: number, offset: number): ir.IrSelect {
  const select = plan.select!;
  const columns = selectColumns(select.exprs);
  const firstAggregate = select.exprs.findIndex((expr) => !select.groupBy.includes(expr));
  const sort: IrOrder[] = plan.orderBy
    ? plan.orderBy.items
    : [...(firstAggregate >= 0 ? [{ expr: select.exprs[firstAggregate], desc: true }] : []), ...select.exprs.map((expr) => ({ expr, desc: false }))];
  return ir.select({
    columns: [...columns, { expr: windowCount(), name: '__total' }],
    ...eventsFrom(plan.projectId, plan.filters, select.scope, plan.orderBy?.scope),
    where: plan.where,
    groupBy: select.groupBy,
    having: select.having,
    orderBy: sort,
    limit: ir.constant(Math.trunc(limit), 'Integer'),
    offset: offset > 0 ? ir.constant(Math.trunc(offset), 'Integer') : null,
  });
}

/** `count(*) OVER ()`: the number of groups, on every row. */
function windowCount(): ir.IrWindow {
  return { kind: 'window', call: ir.call('count', [], 'Integer'), partitionBy: [], orderBy: [], frame: null, type: 'Integer' };
}

export function eventByIdQuery(like: EventsScope, uuid: string): ir.IrSelect {
  const person = personId(like);
  return ir.select({
    columns: [...EVENT_COLUMNS, person.column],
    ...eventsFrom(like.binding.projectId, person.scope),
    where: ir.op('=', [UUID, ir.constant(uuid, 'UUID')]),
    limit: ir.constant(1, 'Integer'),
  });
}
