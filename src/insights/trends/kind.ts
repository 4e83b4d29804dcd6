/**
 * TrendsQuery (query-api.md §1.7): per series and period one statement computed in the engine
 * (grouped by bucket and breakdown values), then in JS only what is per series and small:
 * the top-N breakdown values and "other", formulas, cumulative and smoothing, result objects.
 */
import { ir } from '../../hogql/index.js';
import { validationError } from '../../kernel/errors.js';
import { timestampMs } from '../../hogql/dates.js';
import type { InsightContext, KindResponse, QueryKind } from '../types.js';
import { cohortDisplayName, withCohort } from '../node-fields.js';
import { bucketCount, MAX_BUCKETS, buckets, describeRange, resolveDateRange, startOf, toWall, wantsEarliest, type Bucket, type ResolvedDateRange } from '../time/index.js';
import { bucketWall } from '../series/bucket.js';
import { InsightScope } from '../series/scope.js';
import { seriesName, type SeriesNode } from '../series/node.js';
import { parseTrends, TOTAL_VALUE_DISPLAYS, type TrendsNode } from './node.js';
import { ACTIVE_DAYS, activeUsersStatement, earliestStatement, firstSeenStatement, firstTimeStatement, seriesStatement, topBreakdowns, type SeriesStatement } from './statements.js';
import { breakdownExpr, breakdownLabel, breakdownValue, cohortValue, OTHER_MARKER, rankBreakdowns, type Ranked } from './breakdown.js';
import { trendsActors, trendsActorsGroupType } from './actors.js';
import { checkCompareTo, previousRange } from './compare.js';
import { evaluateFormula } from './formula.js';
import { actionOf, cumulative, resultObject, smooth, type PeriodContext, type SeriesValues } from './results.js';

const MINUTE = 60;

export const trendsKind: QueryKind<TrendsNode> = {
  kind: 'TrendsQuery',
  parse(node) {
    const parsed = parseTrends(node);
    checkCompareTo(parsed.compare?.compareTo ?? null);
    return parsed;
  },
  run: runTrends,
  actors: trendsActors,
  actorsGroupType: trendsActorsGroupType,
  freshForSeconds(node) {
    if (node.interval === 'minute') return MINUTE;
    const range = resolveDateRange(node.dateRange, { interval: node.interval, timeZone: 'UTC', weekStartDay: 0, now: new Date(), earliest: 0 });
    return node.interval === 'hour' || range.to - range.from <= 7 * 86_400_000 + 1 ? 3 * MINUTE : 15 * MINUTE;
  },
};

const isTotalValue = (node: TrendsNode) => TOTAL_VALUE_DISPLAYS.has(node.display);

/** WAU/MAU at an interval as long as their window is plain DAU (PostHog converts them silently). */
export function effectiveMath(math: string, interval: ResolvedDateRange['interval'], totalValue: boolean): string {
  if (totalValue && math in ACTIVE_DAYS) return 'dau';
  if (math === 'weekly_active' && (interval === 'week' || interval === 'month')) return 'dau';
  if (math === 'monthly_active' && interval === 'month') return 'dau';
  return math;
}

async function runTrends(node: TrendsNode, ctx: InsightContext): Promise<KindResponse> {
  const totalValue = isTotalValue(node);
  const interval = totalValue ? 'day' : node.interval;
  const earliest = wantsEarliest(node.dateRange) ? await findEarliest(node, ctx) : undefined;
  const range = resolveDateRange(node.dateRange, {
    interval,
    timeZone: ctx.project.timeZone,
    weekStartDay: ctx.project.weekStartDay,
    now: ctx.now,
    exact: node.display === 'BoldNumber',
    earliest,
  });
  if (bucketCount(range) > MAX_BUCKETS) {
    throw validationError(`The range holds more than ${MAX_BUCKETS} ${interval} intervals; use a longer interval or a shorter range.`, 'interval');
  }
  const periods: PeriodContext[] = [{ node, range, buckets: buckets(range), totalValue, compareLabel: node.compare ? 'current' : null, cohortNames: ctx.cohortNames }];
  if (node.compare) {
    const previous = previousRange(range, node.compare.compareTo);
    periods.push({ node, range: previous, buckets: buckets(previous), totalValue, compareLabel: 'previous', cohortNames: ctx.cohortNames });
  }
  let hasMore = false;
  const results: Record<string, unknown>[] = [];
  for (const period of periods) {
    const perSeries: SeriesValues[][] = [];
    for (const [index, series] of node.series.entries()) perSeries.push(await computeSeries(node, series, index, period, ctx));
    const ranked = perSeries.map((groups) => topValues(node, groups));
    hasMore ||= ranked.some((r) => r.hadOther);
    results.push(...(node.formulas.length > 0 ? formulaResults(period, ranked.map((r) => r.groups)) : seriesResults(period, ranked.map((r) => r.groups))));
  }
  return { results, hasMore, resolved_date_range: describeRange(range) };
}

async function findEarliest(node: TrendsNode, ctx: InsightContext): Promise<number | null> {
  const scope = new InsightScope(ctx);
  const events = node.series.map((s, i) => scope.seriesCondition(s, `series.${i}`) ?? ir.TRUE);
  const rows = await ctx.run(earliestStatement(scope, ir.anyOf(events)));
  const first = rows[0]?.first;
  return first ? timestampMs(String(first)) : null;
}

/** One series over one period: its values per breakdown value (one entry without breakdowns). */
async function computeSeries(node: TrendsNode, series: SeriesNode, index: number, period: PeriodContext, ctx: InsightContext): Promise<SeriesValues[]> {
  const cohorts = node.breakdowns[0]?.cohorts;
  // A person may be in several cohorts: one statement per cohort, each with its membership as a filter.
  if (cohorts) {
    const out: SeriesValues[] = [];
    for (const cohort of cohorts) {
      const [group] = await computeSeries({ ...node, breakdowns: [], properties: withCohort(node.properties, cohort) }, series, index, period, ctx);
      out.push({ ...group, values: [String(cohort)] });
    }
    return out;
  }
  const { range, buckets: list, totalValue } = period;
  const scope = new InsightScope(ctx);
  const breakdowns = node.breakdowns.map((b) => breakdownExpr(scope, b, b.attr));
  const where = ir.allOf([scope.seriesCondition(series, `series.${index}`), scope.filters(node.properties, 'properties'), scope.testAccounts(node.filterTestAccounts)]);
  const math = effectiveMath(series.math, range.interval, totalValue);
  const input = { scope, series: { ...series, math }, where, breakdowns, range, bucketed: !totalValue, attr: `series.${index}` };

  // Row bucket → index of the bucket it belongs to.
  const slot = new Map<number, number>();
  let statement: SeriesStatement;
  if (!totalValue && math in ACTIVE_DAYS) {
    const ends = list.map((b, i) => windowEnd(range, list, i));
    ends.forEach((end, i) => slot.set(end, i));
    statement = activeUsersStatement(input, ACTIVE_DAYS[math], ends);
  } else {
    list.forEach((b, i) => slot.set(b.wall, i));
    statement = math === 'first_time_for_user' ? firstTimeStatement(input) : countsFirstSeen(node, math) ? firstSeenStatement(input) : seriesStatement(input);
  }
  if (breakdowns.length > 0) statement = topBreakdowns(statement, breakdowns.length, node.breakdownLimit, !totalValue);
  const rows = await ctx.run(statement.query, statement.span ? { timeSpan: statement.span } : {});

  const groups = new Map<string, SeriesValues>();
  const groupOf = (values: string[]) => {
    const key = JSON.stringify(values);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { values, data: list.map(() => 0), aggregated: 0 }));
    return group;
  };
  if (node.breakdowns.length === 0) groupOf([]);
  for (const row of rows) {
    const group = groupOf(node.breakdowns.map((_, j) => String(row[`b${j}`])));
    const value = Number(row.value ?? 0);
    if (totalValue) {
      group.aggregated = value;
      continue;
    }
    const at = slot.get(bucketWall(row.bucket, range.timeZone));
    if (at !== undefined) group.data[at] += value;
  }
  return [...groups.values()];
}

/**
 * The wall value the active-users statement reports a bucket under: its last day (or, hourly,
 * its hour) — the day before the next bucket, clipped to the range.
 */
function windowEnd(range: ResolvedDateRange, list: Bucket[], i: number): number {
  if (range.interval === 'hour' || range.interval === 'minute') return startOf('hour', list[i].wall);
  return startOf('day', i + 1 < list.length ? list[i + 1].wall - 1 : toWall(range.to - 1, range.timeZone));
}

/** The cumulative display counts each person (or group) once, where it was first seen (PostHog). */
const countsFirstSeen = (node: TrendsNode, math: string) => node.display === 'ActionsLineGraphCumulative' && (math === 'dau' || math === 'unique_group');

/**
 * Breakdown values in display order: the engine already kept the top ones and summed the rest
 * into the "other" marker (topBreakdowns); here they are ordered, "other" last or dropped.
 */
function topValues(node: TrendsNode, groups: SeriesValues[]): { groups: SeriesValues[]; hadOther: boolean } {
  if (node.breakdowns.length === 0) return { groups, hadOther: false };
  const totalValue = isTotalValue(node);
  const isOther = (g: SeriesValues) => g.values.every((v) => v === OTHER_MARKER);
  const other = groups.find(isOther);
  const entries: Ranked<SeriesValues>[] = groups
    .filter((g) => !isOther(g))
    .map((g) => ({ values: g.values, total: totalValue ? g.aggregated : g.data.reduce((a, b) => a + b, 0), item: g }));
  const { kept } = rankBreakdowns(entries, node.breakdownLimit);
  const out = kept.map((k) => k.item);
  if (other && !node.hideOther) out.push(other);
  return { groups: out, hadOther: other !== undefined };
}

/** `breakdown_value` of a group: cohort ids as numbers, other values as they are. */
function valueOf(node: TrendsNode, values: string[]): unknown {
  return node.breakdowns[0]?.type === 'cohort' ? cohortValue(values[0]) : breakdownValue(values);
}

/** Cumulative and smoothing, applied to a finished series. */
function shaped(node: TrendsNode, data: number[]): number[] {
  const smoothed = smooth(data, node.smoothingIntervals);
  return node.display === 'ActionsLineGraphCumulative' ? cumulative(smoothed) : smoothed;
}

/** A breakdown value's label: its text (parts joined), or a cohort's name. */
function valueLabel(period: PeriodContext, values: string[]): string {
  if (period.node.breakdowns[0]?.type !== 'cohort') return breakdownLabel(values);
  const value = cohortValue(values[0]);
  return cohortDisplayName(value === 'all' ? 'all' : Number(value), period.cohortNames);
}

function seriesResults(period: PeriodContext, perSeries: SeriesValues[][]): Record<string, unknown>[] {
  const { node } = period;
  return perSeries.flatMap((groups, order) =>
    groups.map((g) => {
      const series = node.series[order];
      const name = series.custom_name ?? seriesName(series);
      const hasBreakdown = node.breakdowns.length > 0;
      const label = !hasBreakdown ? name : node.series.length === 1 ? valueLabel(period, g.values) : `${name} - ${valueLabel(period, g.values)}`;
      return resultObject(period, {
        label,
        order,
        action: actionOf(series, order, period.buckets),
        ...(hasBreakdown && { breakdownValue: valueOf(node, g.values) }),
        data: shaped(node, g.data),
        aggregated: g.aggregated,
      });
    }),
  );
}

/** Each formula over the series, per breakdown value (a value missing from a series counts 0). */
function formulaResults(period: PeriodContext, perSeries: SeriesValues[][]): Record<string, unknown>[] {
  const { node } = period;
  const keys = new Map<string, string[]>();
  for (const groups of perSeries) for (const g of groups) if (!keys.has(JSON.stringify(g.values))) keys.set(JSON.stringify(g.values), g.values);
  const lookup = perSeries.map((groups) => new Map(groups.map((g) => [JSON.stringify(g.values), g])));
  const width = period.buckets.length;
  return node.formulas.flatMap((formula, order) => {
    const name = formula.custom_name ?? `Formula (${formula.formula})`;
    const rows = [...keys].map(([key, values]) => {
      const inputs = lookup.map((m) => m.get(key));
      const data = Array.from({ length: width }, (_, i) => evaluateFormula(formula.tree, inputs.map((g) => g?.data[i] ?? 0)));
      const aggregated = evaluateFormula(formula.tree, inputs.map((g) => g?.aggregated ?? 0));
      return { values, data, aggregated };
    });
    return rows.map((r) =>
      resultObject(period, {
        label: node.breakdowns.length > 0 ? valueLabel(period, r.values) : name,
        order,
        action: null,
        ...(node.breakdowns.length > 0 && { breakdownValue: valueOf(node, r.values) }),
        data: shaped(node, r.data),
        aggregated: r.aggregated,
      }),
    );
  });
}
