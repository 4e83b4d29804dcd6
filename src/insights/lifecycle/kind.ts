/**
 * LifecycleQuery (query-api.md §1.10): each person's active intervals (an interval with a
 * matching event), read from one interval before the range; per interval in the range a person
 * is new (the interval of their created_at), returning (active in the interval before), or
 * resurrecting, and dormant (negative) in the interval after an active one without activity.
 * The statuses are decided in the engine (statement.ts).
 */
import { ir } from '../../hogql/index.js';
import { validationError } from '../../kernel/errors.js';
import type { InsightContext, KindResponse, QueryKind } from '../types.js';
import { addUnits, bucketCount, buckets, describeRange, INTERVALS, MAX_BUCKETS, resolveDateRange, toInstant, type DateRangeInput, type Interval } from '../time/index.js';
import { lifecycleStatement } from './statement.js';
import { InsightScope } from '../series/scope.js';
import { choice, optionalBoolean, parseDateRange, parseSeries, seriesId, seriesName, seriesType, type SeriesNode } from '../series/node.js';

export interface LifecycleNode {
  kind: 'LifecycleQuery';
  series: SeriesNode[];
  interval: Interval;
  dateRange: DateRangeInput;
  properties: unknown;
  filterTestAccounts: boolean;
}

const STATUSES = ['new', 'returning', 'resurrecting', 'dormant'] as const;

export function parseLifecycle(node: Record<string, unknown>): LifecycleNode {
  if (node.aggregation_group_type_index !== undefined && node.aggregation_group_type_index !== null) {
    // Groups' lifecycles need their created_at, which the event store does not mirror yet.
    throw validationError('Lifecycle by groups is not supported yet.', 'aggregation_group_type_index', 'invalid_choice');
  }
  return {
    kind: 'LifecycleQuery',
    // Only the first series is used, as PostHog does.
    series: parseSeries(node.series, ['total']).slice(0, 1),
    interval: choice(node.interval, INTERVALS, 'day', 'interval'),
    dateRange: parseDateRange(node.dateRange),
    properties: node.properties ?? null,
    filterTestAccounts: optionalBoolean(node.filterTestAccounts, 'filterTestAccounts'),
  };
}

export const lifecycleKind: QueryKind<LifecycleNode> = {
  kind: 'LifecycleQuery',
  parse: parseLifecycle,
  run: runLifecycle,
  freshForSeconds: (node) => (node.interval === 'hour' || node.interval === 'minute' ? 180 : 900),
};

async function runLifecycle(node: LifecycleNode, ctx: InsightContext): Promise<KindResponse> {
  const { timeZone, weekStartDay } = ctx.project;
  const range = resolveDateRange(node.dateRange, { interval: node.interval, timeZone, weekStartDay, now: ctx.now });
  if (bucketCount(range) > MAX_BUCKETS) throw validationError(`The range holds more than ${MAX_BUCKETS} intervals; use a longer interval or a shorter range.`, 'interval');
  const list = buckets(range);
  const series = node.series[0];
  const before = addUnits(range.interval, -1, list[0].wall);

  const scope = new InsightScope(ctx);
  const where = ir.allOf([
    scope.seriesCondition(series, 'series.0'),
    scope.filters(node.properties, 'properties'),
    scope.testAccounts(node.filterTestAccounts),
  ]);
  const readFrom = toInstant(before, timeZone);
  const statement = lifecycleStatement(scope, where, range, [before, ...list.map((b) => b.wall)], readFrom);
  const rows = await ctx.run(statement, { timeSpan: { from: new Date(readFrom), to: new Date(range.to) } });
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
