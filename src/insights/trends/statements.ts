/**
 * The statements of one trends series over one period, as IR: events grouped by bucket (or
 * not at all, for total-value displays) and breakdown values, the math computed in the engine.
 * Weekly/monthly active users pre-aggregate (actor, day) pairs and spread each pair over the
 * windows it falls in, so the look-back before date_from is one pass too.
 */
import { ir } from '../../hogql/index.js';
import { addUnits, startOf, toInstant, toWall, type ResolvedDateRange } from '../time/index.js';
import { bucketExpr } from '../series/bucket.js';
import { type InsightScope, TIMESTAMP, instantConst } from '../series/scope.js';
import type { SeriesNode } from '../series/node.js';
import { timestampText } from '../../hogql/dates.js';
import { NULL_MARKER, OTHER_MARKER } from './breakdown.js';

type IrExpr = ir.IrExpr;

const QUANTILES: Record<string, number> = { median: 0.5, p75: 0.75, p90: 0.9, p95: 0.95, p99: 0.99 };
export const ACTIVE_DAYS: Record<string, number> = { weekly_active: 7, monthly_active: 30 };
/** Count-per-actor maths: the aggregate (or quantile level) taken over the persons' event counts. */
export const COUNT_PER_ACTOR: Record<string, 'avg' | 'min' | 'max' | number> = {
  avg_count_per_actor: 'avg',
  min_count_per_actor: 'min',
  max_count_per_actor: 'max',
  median_count_per_actor: 0.5,
  p75_count_per_actor: 0.75,
  p90_count_per_actor: 0.9,
  p95_count_per_actor: 0.95,
  p99_count_per_actor: 0.99,
};

export interface SeriesStatement {
  query: ir.IrQuery;
  /** Span every timestamp read lies in (PrintOptions.timeSpan); absent when reads are unbounded. */
  span?: { from: Date; to: Date };
}

/** The aggregate of a series' math over the rows of a group, and the condition rows must meet to count. */
function aggregate(scope: InsightScope, series: SeriesNode, attr: string): { value: IrExpr; condition: IrExpr | null } {
  const distinct = (x: IrExpr) => ir.call('count', [x], 'Integer', { distinct: true });
  const present = (x: IrExpr) => ir.op('and', [ir.op('isNotNull', [x]), ir.op('!=', [x, ir.constant('', 'String')])]);
  switch (series.math) {
    case 'total':
      return { value: ir.call('count', [], 'Integer'), condition: null };
    case 'dau':
    case 'weekly_active':
    case 'monthly_active':
      return { value: distinct(scope.personId), condition: null };
    case 'unique_session': {
      const session = scope.field(['properties', '$session_id']);
      return { value: distinct(session), condition: present(session) };
    }
    case 'hogql': {
      const value = scope.hogqlAggregate(series.math_hogql ?? '', `${attr}.math_hogql`);
      return { value, condition: null };
    }
    case 'unique_group': {
      const key = scope.groupKey(series.math_group_type_index ?? 0);
      return { value: distinct(key), condition: present(key) };
    }
    default: {
      const type = series.math_property_type === 'person_properties' ? 'person' : 'event';
      const x = ir.cast(scope.propertyText(type, series.math_property ?? ''), 'Float');
      const level = QUANTILES[series.math];
      const agg = level !== undefined ? ir.call('quantile', [x], 'Float', { params: [ir.constant(level, 'Float')] }) : ir.call(series.math, [x], 'Float');
      // No value in the bucket is 0, never null (PostHog).
      return { value: ir.call('coalesce', [agg, ir.constant(0, 'Float')], 'Float'), condition: null };
    }
  }
}

export interface StatementInput {
  scope: InsightScope;
  series: SeriesNode;
  /** The series' own condition, the query's filters (built on `scope`). */
  where: IrExpr | null;
  breakdowns: IrExpr[];
  range: ResolvedDateRange;
  /** The series' request field (`series.0`), for errors. */
  attr: string;
  /** null: one value over the whole range (total-value displays). */
  bucketed: boolean;
}

const breakdownColumns = (breakdowns: IrExpr[]): ir.IrSelectColumn[] => breakdowns.map((expr, i) => ({ expr, name: `b${i}` }));

/** `bucket?, b0…, value` rows: the math per bucket and breakdown value. */
export function seriesStatement(input: StatementInput): SeriesStatement {
  if (input.series.math === 'dau') return dauStatement(input);
  if (Object.hasOwn(COUNT_PER_ACTOR, input.series.math)) return countPerActorStatement(input, COUNT_PER_ACTOR[input.series.math]);
  const { scope, series, range } = input;
  const { value, condition } = aggregate(scope, series, input.attr);
  const bucket = input.bucketed ? bucketExpr(range.interval, range.timeZone, range.weekStartDay) : null;
  const where = ir.allOf([scope.timeWindow(range.readFrom, range.to), input.where, condition]);
  const query = ir.select({
    columns: [...(bucket ? [{ expr: bucket, name: 'bucket' }] : []), ...breakdownColumns(input.breakdowns), { expr: value, name: 'value' }],
    ...scope.from(),
    where,
    groupBy: [...(bucket ? [bucket] : []), ...input.breakdowns],
  });
  return { query, span: { from: new Date(range.readFrom), to: new Date(range.to) } };
}

/**
 * Unique persons per bucket and breakdown value. The events are first cut to their distinct
 * (bucket, breakdown values, distinct id, stored person) — at 10M events a third of the rows a
 * day's pageviews have — and only those meet the person mirror and the distinct count: the join
 * and the count were half the statement's time when every event went through them.
 */
function dauStatement(input: StatementInput): SeriesStatement {
  const { scope, range } = input;
  const bucket = input.bucketed ? bucketExpr(range.interval, range.timeZone, range.weekStartDay) : null;
  const where = ir.allOf([scope.timeWindow(range.readFrom, range.to), input.where]);
  const events = ir.select({
    distinct: true,
    columns: [
      ...(bucket ? [{ expr: bucket, name: 'bucket' }] : []),
      ...breakdownColumns(input.breakdowns),
      { expr: ir.column('e', 'events', 'distinct_id', 'String'), name: 'distinct_id' },
      { expr: ir.column('e', 'events', '$stored_person_id', 'UUID'), name: 'stored_person_id' },
    ],
    ...scope.from(),
    where,
  });
  const x = (name: string, type: ir.IrColumn['type']) => ir.column('x', null, name, type);
  const person = scope.personOf('x', x('distinct_id', 'String'), x('stored_person_id', 'UUID'));
  const grouped = [...(bucket ? [x('bucket', bucket.type)] : []), ...input.breakdowns.map((_, i) => x(`b${i}`, 'String'))];
  const query = ir.select({
    columns: [...(bucket ? [{ expr: grouped[0], name: 'bucket' }] : []), ...breakdownColumns(grouped.slice(bucket ? 1 : 0)), { expr: ir.call('count', [person.personId], 'Integer', { distinct: true }), name: 'value' }],
    from: { kind: 'subquery', query: events, alias: 'x' },
    joins: [person.join],
    groupBy: grouped,
  });
  return { query, span: { from: new Date(range.readFrom), to: new Date(range.to) } };
}

/**
 * Count-per-actor maths per bucket and breakdown value: each current person's events are
 * counted, then `fn` (avg, min, max, or a quantile level) is taken over those counts; a bucket
 * without events is 0 (PostHog). Two levels of GROUP BY, both in the engine.
 */
function countPerActorStatement(input: StatementInput, fn: 'avg' | 'min' | 'max' | number): SeriesStatement {
  const { scope, range } = input;
  const bucket = input.bucketed ? bucketExpr(range.interval, range.timeZone, range.weekStartDay) : null;
  // The person is resolved before the FROM clause is built: it needs its join.
  const person = scope.personId;
  const perActor = ir.select({
    columns: [...(bucket ? [{ expr: bucket, name: 'bucket' }] : []), ...breakdownColumns(input.breakdowns), { expr: ir.call('count', [], 'Integer'), name: 'n' }],
    ...scope.from(),
    where: ir.allOf([scope.timeWindow(range.readFrom, range.to), input.where]),
    groupBy: [...(bucket ? [bucket] : []), ...input.breakdowns, person],
  });
  const c = (name: string, type: ir.IrColumn['type']) => ir.column('c', null, name, type);
  const n = ir.cast(c('n', 'Integer'), 'Float');
  const agg = typeof fn === 'number' ? ir.call('quantile', [n], 'Float', { params: [ir.constant(fn, 'Float')] }) : ir.call(fn, [n], 'Float');
  const grouped = [...(bucket ? [c('bucket', bucket.type)] : []), ...input.breakdowns.map((_, i) => c(`b${i}`, 'String'))];
  const query = ir.select({
    columns: [...(bucket ? [{ expr: grouped[0], name: 'bucket' }] : []), ...breakdownColumns(grouped.slice(bucket ? 1 : 0)), { expr: ir.call('coalesce', [agg, ir.constant(0, 'Float')], 'Float'), name: 'value' }],
    from: { kind: 'subquery', query: perActor, alias: 'c' },
    groupBy: grouped,
  });
  return { query, span: { from: new Date(range.readFrom), to: new Date(range.to) } };
}

/**
 * Weekly/monthly active users (`days` = 7 or 30) per bucket: actors with an event in the `days`
 * days ending with the bucket's last day (hour interval: the `days`×24 hours ending with the
 * bucket's hour). Rows `bucket, b0…, value` where `bucket` is that last day (Date) or hour (DateTime).
 */
export function activeUsersStatement(input: StatementInput, days: number, windowEnds: number[]): SeriesStatement {
  const { scope, range } = input;
  const hourly = range.interval === 'hour' || range.interval === 'minute';
  const tz = ir.constant(range.timeZone, 'String');
  const unit = hourly ? ir.call('toStartOfHour', [TIMESTAMP, tz], 'DateTime') : ir.call('toDate', [TIMESTAMP, tz], 'Date');
  const steps = hourly ? days * 24 : days;
  const lookBackFrom = hourly ? range.readFrom - steps * 3_600_000 : toInstant(addUnits('day', -steps, startOf('day', toWall(range.readFrom, range.timeZone))), range.timeZone);
  const actor = scope.personId;
  const pairs = ir.select({
    distinct: true,
    columns: [{ expr: actor, name: 'actor' }, { expr: unit, name: 'unit' }, ...breakdownColumns(input.breakdowns)],
    ...scope.from(),
    where: ir.allOf([scope.timeWindow(lookBackFrom, range.to), input.where]),
  });
  const pairColumn = (name: string, type: ir.IrColumn['type']) => ir.column('p', null, name, type);
  const step = ir.column('n', null, 'number', 'Integer');
  const windowEnd = hourly
    ? ir.call('addSeconds', [pairColumn('unit', 'DateTime'), ir.op('*', [step, ir.constant(3600, 'Integer')], 'Integer')], 'DateTime')
    : ir.call('addDays', [pairColumn('unit', 'Date'), step], 'Date');
  const ends = windowEnds.map((wall) => (hourly ? instantConst(toInstant(wall, range.timeZone)) : ir.constant(timestampText(new Date(wall)).slice(0, 10), 'Date')));
  const breakdowns = input.breakdowns.map((_, i) => pairColumn(`b${i}`, 'String'));
  const query = ir.select({
    columns: [{ expr: windowEnd, name: 'bucket' }, ...breakdownColumns(breakdowns), { expr: ir.call('count', [pairColumn('actor', 'UUID')], 'Integer', { distinct: true }), name: 'value' }],
    from: { kind: 'subquery', query: pairs, alias: 'p' },
    joins: [{ type: 'CROSS', item: { kind: 'numbers', count: ir.constant(steps, 'Integer'), alias: 'n' }, on: null }],
    where: ends.length > 0 ? ir.op('in', [windowEnd, ...ends]) : ir.constant(false, 'Boolean'),
    groupBy: [windowEnd, ...breakdowns],
  });
  return { query, span: { from: new Date(lookBackFrom), to: new Date(range.to) } };
}

/** The first event's instant among the series (for `date_from: "all"`), null when there is none. */
export function earliestStatement(scope: InsightScope, where: IrExpr | null): ir.IrQuery {
  return ir.select({ columns: [{ expr: ir.call('min', [TIMESTAMP], 'DateTime'), name: 'first' }], ...scope.from(), where });
}

/**
 * Cumulative unique actors (dau, unique_group on the cumulative display): each actor counts
 * once, in the bucket of its first event in the range; the caller sums the buckets up.
 */
export function firstSeenStatement(input: StatementInput): SeriesStatement {
  const { scope, series, range } = input;
  const actor = series.math === 'unique_group' ? scope.groupKey(series.math_group_type_index ?? 0) : scope.personId;
  const bucket = bucketExpr(range.interval, range.timeZone, range.weekStartDay);
  const { condition } = aggregate(scope, series, input.attr);
  const first = ir.call('min', [bucket], bucket.type);
  const perActor = ir.select({
    columns: [{ expr: first, name: 'bucket' }, ...breakdownColumns(input.breakdowns)],
    ...scope.from(),
    where: ir.allOf([scope.timeWindow(range.readFrom, range.to), input.where, condition]),
    groupBy: [actor, ...input.breakdowns],
  });
  const firstBucket = ir.column('f', null, 'bucket', bucket.type);
  const breakdowns = input.breakdowns.map((_, i) => ir.column('f', null, `b${i}`, 'String'));
  const query = ir.select({
    columns: [{ expr: firstBucket, name: 'bucket' }, ...breakdownColumns(breakdowns), { expr: ir.call('count', [], 'Integer'), name: 'value' }],
    from: { kind: 'subquery', query: perActor, alias: 'f' },
    groupBy: [firstBucket, ...breakdowns],
  });
  return { query, span: { from: new Date(range.readFrom), to: new Date(range.to) } };
}

/**
 * A series statement with its breakdown values cut to the top `limit` in the engine: values are
 * ranked by their total over the range (then by value, the null marker last) and the rest
 * become the "other" marker, their values summed — so a breakdown over millions of distinct
 * values returns at most limit + 1 series.
 */
export function topBreakdowns(statement: SeriesStatement, breakdowns: number, limit: number, bucketed: boolean): SeriesStatement {
  const g = (name: string, type: ir.IrColumn['type']) => ir.column('g', null, name, type);
  const values = Array.from({ length: breakdowns }, (_, i) => g(`b${i}`, 'String'));
  const value = g('value', outputType(statement.query));
  const rankOrder: ir.IrOrder[] = [
    { expr: ir.call('sum', [value], value.type), desc: true },
    ...values.flatMap((v) => [
      { expr: ir.op('=', [v, ir.constant(NULL_MARKER, 'String')]), desc: false },
      { expr: v, desc: false },
    ]),
  ];
  const ranks = ir.select({
    columns: [
      ...values.map((v, i) => ({ expr: v, name: `b${i}` })),
      { expr: { kind: 'window', call: ir.call('row_number', [], 'Integer'), partitionBy: [], orderBy: rankOrder, frame: null, type: 'Integer' }, name: 'rank' },
    ],
    from: { kind: 'cte', name: 'grouped', alias: 'g' },
    groupBy: values,
  });
  const kept = ir.op('<=', [ir.column('r', null, 'rank', 'Integer'), ir.constant(limit, 'Integer')]);
  const cut = values.map((v): ir.IrExpr => ({ kind: 'case', branches: [[kept, v]], otherwise: ir.constant(OTHER_MARKER, 'String'), type: 'String' }));
  const bucket = bucketed ? [g('bucket', bucketType(statement.query))] : [];
  const query = ir.select({
    ctes: [{ name: 'grouped', query: statement.query }],
    columns: [...bucket.map((expr) => ({ expr, name: 'bucket' })), ...cut.map((expr, i) => ({ expr, name: `b${i}` })), { expr: ir.call('sum', [value], value.type), name: 'value' }],
    from: { kind: 'cte', name: 'grouped', alias: 'g' },
    joins: [{ type: 'INNER', item: { kind: 'subquery', query: ranks, alias: 'r' }, on: ir.allOf(values.map((v, i) => ir.op('=', [v, ir.column('r', null, `b${i}`, 'String')]))) }],
    groupBy: [...bucket, ...cut],
  });
  return { query, span: statement.span };
}

const outputType = (query: ir.IrQuery) => ir.outputColumns(query).find((c) => c.name === 'value')!.expr.type;
const bucketType = (query: ir.IrQuery) => ir.outputColumns(query).find((c) => c.name === 'bucket')!.expr.type;

/**
 * first_time_for_user: persons counted in the bucket of their first matching event ever (before
 * the range end; all history, not only the range), when that falls inside the range.
 */
export function firstTimeStatement(input: StatementInput): SeriesStatement {
  const { scope, range } = input;
  // The person is resolved before the FROM clause is built: it needs its join.
  const person = scope.personId;
  const first = ir.select({
    columns: [{ expr: ir.call('min', [TIMESTAMP], 'DateTime'), name: 'first' }],
    ...scope.from(),
    where: ir.allOf([ir.op('<', [TIMESTAMP, instantConst(range.to)]), input.where]),
    groupBy: [person],
  });
  const firstColumn = ir.column('f', null, 'first', 'DateTime');
  const bucket = bucketExpr(range.interval, range.timeZone, range.weekStartDay, firstColumn);
  const bucketed = input.bucketed ? [{ expr: bucket, name: 'bucket' }] : [];
  const query = ir.select({
    columns: [...bucketed, { expr: ir.call('count', [], 'Integer'), name: 'value' }],
    from: { kind: 'subquery', query: first, alias: 'f' },
    where: ir.op('>=', [firstColumn, instantConst(range.readFrom)]),
    groupBy: input.bucketed ? [bucket] : [],
  });
  // Earlier rows are read too (the first event may be long before): no span to promise.
  return { query };
}
