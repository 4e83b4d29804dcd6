/**
 * StickinessQuery (query-api.md §1.11): per series, how many actors qualified in exactly n of the
 * range's intervals (an interval qualifies when the actor's event count in it meets
 * stickinessCriteria, default ≥ 1). One statement per series and period: events grouped by actor
 * and bucket, then by actor, then by n — the engine does the counting.
 */
import { ir } from '../../hogql/index.js';
import { validationError } from '../../kernel/errors.js';
import type { ActorsPoint, InsightContext, KindResponse, QueryKind } from '../types.js';
import { bucketCount, buckets, describeRange, INTERVALS, MAX_BUCKETS, resolveDateRange, type DateRangeInput, type Interval, type ResolvedDateRange } from '../time/index.js';
import { bucketExpr } from '../series/bucket.js';
import { InsightScope } from '../series/scope.js';
import { choice, optionalBoolean, optionalInteger, parseDateRange, parseSeries, record, seriesId, seriesName, seriesType, type SeriesNode } from '../series/node.js';
import { checkCompareTo, previousRange } from '../trends/compare.js';

const MATHS = ['total', 'dau', 'unique_group'] as const;
const OPERATORS = ['gte', 'lte', 'exact'] as const;

export interface StickinessNode {
  kind: 'StickinessQuery';
  series: SeriesNode[];
  interval: Interval;
  dateRange: DateRangeInput;
  properties: unknown;
  filterTestAccounts: boolean;
  criteria: { operator: (typeof OPERATORS)[number]; value: number };
  cumulative: boolean;
  /** Actors are the groups of this type instead of persons. */
  groupTypeIndex: number | null;
  compare: { compareTo: string | null } | null;
}

export function parseStickiness(node: Record<string, unknown>): StickinessNode {
  const filter = record(node.stickinessFilter, 'stickinessFilter');
  const criteria = record(filter.stickinessCriteria, 'stickinessFilter.stickinessCriteria');
  const compare = record(node.compareFilter, 'compareFilter');
  const parsed: StickinessNode = {
    kind: 'StickinessQuery',
    series: parseSeries(node.series, MATHS),
    interval: choice(node.interval, INTERVALS, 'day', 'interval'),
    dateRange: parseDateRange(node.dateRange),
    properties: node.properties ?? null,
    filterTestAccounts: optionalBoolean(node.filterTestAccounts, 'filterTestAccounts'),
    criteria: {
      operator: choice(criteria.operator, OPERATORS, 'gte', 'stickinessFilter.stickinessCriteria.operator'),
      value: optionalInteger(criteria.value, 'stickinessFilter.stickinessCriteria.value', 1, 1_000_000) ?? 1,
    },
    groupTypeIndex: optionalInteger(node.aggregation_group_type_index, 'aggregation_group_type_index', 0, 4),
    cumulative: choice(filter.computedAs, ['non_cumulative', 'cumulative'] as const, 'non_cumulative', 'stickinessFilter.computedAs') === 'cumulative',
    compare: optionalBoolean(compare.compare, 'compareFilter.compare') ? { compareTo: typeof compare.compare_to === 'string' ? compare.compare_to : null } : null,
  };
  checkCompareTo(parsed.compare?.compareTo ?? null);
  return parsed;
}

export const stickinessKind: QueryKind<StickinessNode> = {
  kind: 'StickinessQuery',
  parse: parseStickiness,
  run: runStickiness,
  actors: stickinessActors,
  actorsGroupType: (node, point) => groupIndexOf(node, node.series[point.series ?? 0]),
  freshForSeconds: (node) => (node.interval === 'hour' || node.interval === 'minute' ? 180 : 900),
};

async function runStickiness(node: StickinessNode, ctx: InsightContext): Promise<KindResponse> {
  const range = resolveDateRange(node.dateRange, { interval: node.interval, timeZone: ctx.project.timeZone, weekStartDay: ctx.project.weekStartDay, now: ctx.now });
  if (bucketCount(range) > MAX_BUCKETS) throw validationError(`The range holds more than ${MAX_BUCKETS} intervals; use a longer interval or a shorter range.`, 'interval');
  const periods: Array<{ range: ResolvedDateRange; label: 'current' | 'previous' | null }> = [{ range, label: node.compare ? 'current' : null }];
  if (node.compare) periods.push({ range: previousRange(range, node.compare.compareTo), label: 'previous' });
  const results: Record<string, unknown>[] = [];
  for (const period of periods) {
    for (const [order, series] of node.series.entries()) {
      const counts = await actorsPerIntervalCount(node, series, order, period.range, ctx);
      results.push(resultOf(node, series, order, counts, period.label));
    }
  }
  return { results, resolved_date_range: describeRange(range) };
}

/** data[n-1] = actors that qualified in exactly n intervals. */
async function actorsPerIntervalCount(node: StickinessNode, series: SeriesNode, order: number, range: ResolvedDateRange, ctx: InsightContext): Promise<number[]> {
  const count = ir.call('count', [], 'Integer');
  const n = ir.column('a', null, 'n', 'Integer');
  const query = ir.select({ columns: [{ expr: n, name: 'n' }, { expr: count, name: 'actors' }], from: { kind: 'subquery', query: intervalsPerActor(node, series, order, range, ctx), alias: 'a' }, groupBy: [n] });
  const rows = await ctx.run(query, { timeSpan: { from: new Date(range.readFrom), to: new Date(range.to) } });
  const data = buckets(range).map(() => 0);
  for (const row of rows) {
    const at = Number(row.n) - 1;
    if (at >= 0 && at < data.length) data[at] += Number(row.actors);
  }
  return data;
}

/** `(actor, n)`: each actor with the number of the range's intervals it qualified in. */
function intervalsPerActor(node: StickinessNode, series: SeriesNode, order: number, range: ResolvedDateRange, ctx: InsightContext): ir.IrQuery {
  const scope = new InsightScope(ctx);
  const groupIndex = groupIndexOf(node, series);
  const actor = groupIndex !== null ? scope.groupKey(groupIndex) : scope.personId;
  const bucket = bucketExpr(range.interval, range.timeZone, range.weekStartDay);
  const where = ir.allOf([
    scope.timeWindow(range.readFrom, range.to),
    scope.seriesCondition(series, `series.${order}`),
    scope.filters(node.properties, 'properties'),
    scope.testAccounts(node.filterTestAccounts),
    groupIndex !== null ? ir.op('!=', [actor, ir.constant('', 'String')]) : null,
  ]);
  const count = ir.call('count', [], 'Integer');
  const cmp = { gte: '>=', lte: '<=', exact: '=' } as const;
  const perBucket = ir.select({
    columns: [{ expr: actor, name: 'actor' }, { expr: bucket, name: 'bucket' }],
    ...scope.from(),
    where,
    groupBy: [actor, bucket],
    having: ir.op(cmp[node.criteria.operator], [count, ir.constant(node.criteria.value, 'Integer')]),
  });
  const perActor = ir.column('q', null, 'actor', actor.type);
  return ir.select({
    columns: [{ expr: perActor, name: 'actor' }, { expr: count, name: 'n' }],
    from: { kind: 'subquery', query: perBucket, alias: 'q' },
    groupBy: [perActor],
  });
}

/**
 * The actors behind one point (InsightActorsQuery): of series `series`, those who qualified in
 * exactly `day` intervals (`day` or more when cumulative), in the current or previous period —
 * persons, or the group keys when the series counts groups.
 */
function stickinessActors(node: StickinessNode, point: ActorsPoint, ctx: InsightContext): ir.IrQuery {
  const order = point.series ?? 0;
  const series = node.series[order];
  if (!series) throw validationError(`The query has no series ${order}.`, 'source.series');
  let range = resolveDateRange(node.dateRange, { interval: node.interval, timeZone: ctx.project.timeZone, weekStartDay: ctx.project.weekStartDay, now: ctx.now });
  if (point.compare === 'previous') range = previousRange(range, node.compare?.compareTo ?? null);
  const intervals = buckets(range).length;
  const day = Number(point.day);
  if (!Number.isInteger(day) || day < 1 || day > intervals) throw validationError(`day must be a number of intervals from 1 to ${intervals}.`, 'source.day');
  const n = ir.column('a', null, 'n', 'Integer');
  return ir.select({
    columns: [{ expr: ir.column('a', null, 'actor', groupIndexOf(node, series) === null ? 'UUID' : 'String'), name: 'actor_id' }],
    from: { kind: 'subquery', query: intervalsPerActor(node, series, order, range, ctx), alias: 'a' },
    where: ir.op(node.cumulative ? '>=' : '=', [n, ir.constant(day, 'Integer')]),
  });
}

function resultOf(node: StickinessNode, series: SeriesNode, order: number, counts: number[], compareLabel: 'current' | 'previous' | null): Record<string, unknown> {
  const unit = node.interval;
  const data = node.cumulative ? counts.map((_, i) => counts.slice(i).reduce((a, b) => a + b, 0)) : counts;
  const result: Record<string, unknown> = {
    count: counts.reduce((a, b) => a + b, 0),
    data,
    days: counts.map((_, i) => i + 1),
    labels: counts.map((_, i) => `${i + 1} ${unit}${i === 0 ? '' : 's'}${node.cumulative ? ' or more' : ''}`),
    label: series.custom_name ?? seriesName(series),
    action: { id: seriesId(series), type: seriesType(series), order, name: seriesName(series), custom_name: series.custom_name, math: series.math, properties: {} },
  };
  if (compareLabel) {
    result.compare = true;
    result.compare_label = compareLabel;
  }
  return result;
}

/** The group type whose groups are the series' actors (`unique_group` math, or the query's aggregation), else null. */
function groupIndexOf(node: StickinessNode, series: SeriesNode | undefined): number | null {
  return series?.math === 'unique_group' ? series.math_group_type_index : node.groupTypeIndex;
}
