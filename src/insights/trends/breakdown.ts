/**
 * Breakdowns (query-api.md §1.4.5, §1.7.3): each value is the property's text, with null or ""
 * as PostHog's null marker; the top `breakdown_limit` values (by total over the range) are kept
 * and the rest summed into the "other" series. Order: by total descending then value, the null
 * value after the regular ones, "other" last.
 */
import { ir } from '../../hogql/index.js';
import type { InsightScope } from '../series/scope.js';
import type { Breakdown } from './node.js';

export const NULL_MARKER = '$$_posthog_breakdown_null_$$';
export const OTHER_MARKER = '$$_posthog_breakdown_other_$$';

/** The breakdown value of an event: its text, or the null marker. */
export function breakdownExpr(scope: InsightScope, breakdown: Breakdown, attr: string): ir.IrExpr {
  if (breakdown.type === 'cohort') throw new Error('a cohort breakdown has no value per event (cohortCondition)');
  const raw =
    breakdown.type === 'hogql'
      ? scope.hogqlText(breakdown.property, attr)
      : breakdown.type === 'group'
        ? scope.groupPropertyText(breakdown.property, breakdown.groupTypeIndex!)
        : scope.propertyText(breakdown.type, breakdown.property);
  // One read of the property per row (JSON extraction is the cost of a breakdown).
  return ir.call('coalesce', [ir.call('__nullIfEmpty', [raw], 'String'), ir.constant(NULL_MARKER, 'String')], 'String');
}

/** The events of one value of a cohort breakdown (`all`: every event); null for all. */
export function cohortCondition(scope: InsightScope, value: string, attr: string): ir.IrExpr | null {
  return value === 'all' ? null : scope.filters([{ type: 'cohort', key: 'id', value: Number(value) }], attr);
}

/** `breakdown_value` as PostHog gives it for a cohort: the id as a number, or "all". */
export const cohortValue = (value: string): number | string => (value === 'all' ? 'all' : Number(value));

export interface Ranked<T> {
  values: string[];
  total: number;
  item: T;
}

const isNullValue = (values: string[]) => values.every((v) => v === NULL_MARKER);

/** The kept entries in display order, and the ones beyond the limit. */
export function rankBreakdowns<T>(entries: Ranked<T>[], limit: number): { kept: Ranked<T>[]; rest: Ranked<T>[] } {
  const byTotal = [...entries].sort((a, b) => b.total - a.total || compareValues(a.values, b.values));
  const kept = byTotal.slice(0, limit);
  const rest = byTotal.slice(limit);
  kept.sort((a, b) => Number(isNullValue(a.values)) - Number(isNullValue(b.values)));
  return { kept, rest };
}

/** Value order for equal totals: text order, the null marker after any text. */
export function compareValues(a: string[], b: string[]): number {
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue;
    if (a[i] === NULL_MARKER || b[i] === NULL_MARKER) return a[i] === NULL_MARKER ? 1 : -1;
    return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

/** `breakdown_value`: the string for one breakdown, the list for several. */
export const breakdownValue = (values: string[]): string | string[] => (values.length === 1 ? values[0] : values);
/** Label text of a value: the string, or the parts joined with `::`. */
export const breakdownLabel = (values: string[]): string => values.join('::');
