/**
 * LifecycleQuery (query-api.md §1.10): each person's active intervals (an interval with a
 * matching event), read from one interval before the range; per interval in the range a person
 * is new (the interval of their created_at), returning (active in the interval before), or
 * resurrecting, and dormant (negative) in the interval after an active one without activity.
 * With `aggregation_group_type_index` the actors are that type's groups (the events' `$group_N`
 * keys), new in the interval of their key's first event. The statuses are decided in the engine
 * (statement.ts).
 */
import { ir } from '../../hogql/index.js';
import { validationError } from '../../kernel/errors.js';
import type { ActorsPoint, InsightContext, KindResponse, QueryKind } from '../types.js';
import { addUnits, bucketCount, buckets, describeRange, INTERVALS, MAX_BUCKETS, bucketIndexOf, resolveDateRange, toInstant, type Bucket, type DateRangeInput, type Interval } from '../time/index.js';
import { lifecycleStatement, type LifecyclePoint } from './statement.js';
import { InsightScope } from '../series/scope.js';
import { choice, optionalBoolean, optionalInteger, parseDateRange, parseSeries, seriesId, seriesName, seriesType, type SeriesNode } from '../series/node.js';

export interface LifecycleNode {
  kind: 'LifecycleQuery';
  series: SeriesNode[];
  interval: Interval;
  dateRange: DateRangeInput;
  properties: unknown;
  filterTestAccounts: boolean;
  /** Actors are the groups of this type instead of persons. */
  groupTypeIndex: number | null;
}

const STATUSES = ['new', 'returning', 'resurrecting', 'dormant'] as const;

export function parseLifecycle(node: Record<string, unknown>): LifecycleNode {
  return {
    kind: 'LifecycleQuery',
    // Only the first series is used, as PostHog does.
    series: parseSeries(node.series, ['total']).slice(0, 1),
    interval: choice(node.interval, INTERVALS, 'day', 'interval'),
    dateRange: parseDateRange(node.dateRange),
    properties: node.properties ?? null,
    filterTestAccounts: optionalBoolean(node.filterTestAccounts, 'filterTestAccounts'),
    groupTypeIndex: optionalInteger(node.aggregation_group_type_index, 'aggregation_group_type_index', 0, 4),
  };
}

export const lifecycleKind: QueryKind<LifecycleNode> = {
  kind: 'LifecycleQuery',
  parse: parseLifecycle,
  run: runLifecycle,
  actors: lifecycleActors,
  actorsGroupType: (node) => node.groupTypeIndex,
  freshForSeconds: (node) => (node.interval === 'hour' || node.interval === 'minute' ? 180 : 900),
};

/** The range's buckets and the lifecycle statement over them (listing one point's actors with `point`). */
function lifecycleOf(node: LifecycleNode, ctx: InsightContext, point?: (list: Bucket[]) => LifecyclePoint) {
  const { timeZone, weekStartDay } = ctx.project;
  const range = resolveDateRange(node.dateRange, { interval: node.interval, timeZone, weekStartDay, now: ctx.now });
  if (bucketCount(range) > MAX_BUCKETS) throw validationError(`The range holds more than ${MAX_BUCKETS} intervals; use a longer interval or a shorter range.`, 'interval');
  const list = buckets(range);
  const before = addUnits(range.interval, -1, list[0].wall);
  const scope = new InsightScope(ctx);
  const where = ir.allOf([
    scope.seriesCondition(node.series[0], 'series.0'),
    scope.filters(node.properties, 'properties'),
    scope.testAccounts(node.filterTestAccounts),
  ]);
  const readFrom = toInstant(before, timeZone);
  const statement = lifecycleStatement(scope, where, range, [before, ...list.map((b) => b.wall)], readFrom, point?.(list), node.groupTypeIndex);
  return { range, list, statement, timeSpan: { from: new Date(readFrom), to: new Date(range.to) } };
}

/** The actors (persons or group keys) of one status in one bucket (InsightActorsQuery `status` and `day`, a `days` entry or its index). */
function lifecycleActors(node: LifecycleNode, point: ActorsPoint, ctx: InsightContext): ir.IrQuery {
  const status = STATUSES.find((s) => s === point.status);
  if (!status) throw validationError(`status must be one of ${STATUSES.join(', ')}.`, 'source.status', 'invalid_choice');
  return lifecycleOf(node, ctx, (list) => {
    const index = point.day === null || point.day === undefined ? -1 : bucketIndexOf(list, point.day);
    if (index < 0) throw validationError(`day ${String(point.day).slice(0, 40)} is not a bucket of the query's range.`, 'source.day');
    return { index, status };
  }).statement;
}

async function runLifecycle(node: LifecycleNode, ctx: InsightContext): Promise<KindResponse> {
  const { range, list, statement, timeSpan } = lifecycleOf(node, ctx);
  const series = node.series[0];
  const rows = await ctx.run(statement, { timeSpan });
  const counts = Object.fromEntries(STATUSES.map((s) => [s, list.map(() => 0)])) as Record<(typeof STATUSES)[number], number[]>;
  for (const row of rows) {
    const at = Number(row.idx);
    const status = row.status as (typeof STATUSES)[number];
    if (at >= 0 && at < list.length && counts[status]) counts[status][at] += status === 'dormant' ? -Number(row.n) : Number(row.n);
  }
  const name = series.custom_name ?? seriesName(series);
  const results = STATUSES.map((status) => ({
    data: counts[status],
    count: counts[status].reduce((a, b) => a + b, 0),
    labels: list.map((b) => b.label),
    days: list.map((b) => b.day),
    label: `${name} - ${status}`,
    status,
    action: { id: seriesId(series), name: seriesName(series), custom_name: series.custom_name, type: seriesType(series), order: 0, math: 'total' },
  }));
  return { results, resolved_date_range: describeRange(range) };
}
