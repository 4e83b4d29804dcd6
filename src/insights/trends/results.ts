/** Series objects of a trends response (query-api.md §1.7.3). */
import { describeRange, type Bucket, type ResolvedDateRange } from '../time/index.js';
import { seriesId, seriesName, seriesType, type SeriesNode } from '../series/node.js';
import type { TrendsNode } from './node.js';

export interface SeriesValues {
  /** Breakdown values (empty without breakdowns). */
  values: string[];
  data: number[];
  /** The math over the whole range (total-value displays). */
  aggregated: number;
}

export interface PeriodContext {
  node: TrendsNode;
  range: ResolvedDateRange;
  buckets: Bucket[];
  totalValue: boolean;
  /** 'current' | 'previous' when comparing. */
  compareLabel: 'current' | 'previous' | null;
  /** Names of the cohorts of a cohort breakdown, for labels. */
  cohortNames?: ReadonlyMap<number, string> | null;
}

export function actionOf(series: SeriesNode, order: number, buckets: Bucket[]) {
  return {
    days: buckets.map((b) => b.iso),
    id: seriesId(series),
    type: seriesType(series),
    order,
    name: seriesName(series),
    custom_name: series.custom_name,
    math: series.math,
    math_property: series.math_property,
    math_hogql: series.math_hogql,
    math_group_type_index: series.math_group_type_index,
    properties: {},
  };
}

export function filterEcho(p: PeriodContext) {
  const range = describeRange(p.range);
  return {
    insight: 'TRENDS',
    interval: p.range.interval,
    date_from: range.date_from,
    date_to: range.date_to,
    display: p.node.display,
    ...(p.node.breakdowns.length > 0 && { breakdown: p.node.breakdowns.flatMap((b) => (b.cohorts ? b.cohorts.map(String) : [b.property])), breakdown_type: p.node.breakdowns[0].type }),
    ...(p.node.compare && { compare: true }),
  };
}

/** One result object; `label` and `breakdown_value` already decided by the caller. */
export function resultObject(
  p: PeriodContext,
  fields: { label: string; order: number; action: unknown; breakdownValue?: unknown; data: number[]; aggregated: number },
): Record<string, unknown> {
  const result: Record<string, unknown> = {
    data: p.totalValue ? [] : fields.data,
    labels: p.totalValue ? [] : p.buckets.map((b) => b.label),
    days: p.totalValue ? [] : p.buckets.map((b) => b.day),
    count: p.totalValue ? 0 : countOf(p.node, fields.data),
    label: fields.label,
    filter: filterEcho(p),
    action: fields.action,
    order: fields.order,
  };
  if (p.totalValue) result.aggregated_value = fields.aggregated;
  if (fields.breakdownValue !== undefined) result.breakdown_value = fields.breakdownValue;
  if (p.compareLabel) {
    result.compare = true;
    result.compare_label = p.compareLabel;
  }
  return result;
}

/** Sum of the data; the last value for the cumulative display. */
function countOf(node: TrendsNode, data: number[]): number {
  if (node.display === 'ActionsLineGraphCumulative') return data.length > 0 ? data[data.length - 1] : 0;
  return data.reduce((a, b) => a + b, 0);
}

/** Running sum (cumulative display). */
export const cumulative = (data: number[]): number[] => {
  let sum = 0;
  return data.map((v) => (sum += v));
};

/** Moving average of the last `n` buckets, floored (trendsFilter.smoothingIntervals). */
export function smooth(data: number[], n: number): number[] {
  if (n <= 1) return data;
  return data.map((_, i) => {
    const window = data.slice(Math.max(0, i - n + 1), i + 1);
    return Math.floor(window.reduce((a, b) => a + b, 0) / window.length);
  });
}
