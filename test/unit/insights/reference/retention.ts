/**
 * Retention from an in-memory event list with plain loops (query-api.md §1.9): cohorts by the
 * target event's period (or the first target event ever), value k = cohort members who did the
 * returning event in the period k later. The property tests compare the API with it.
 */
import { bucketWallOf, type ResolvedDateRange } from '../../../../src/insights/time/index.js';
import type { RefEvent } from './funnels.js';

export interface RefRetention {
  target: string;
  returning: string;
  firstTime: boolean;
  totalIntervals: number;
  minimumOccurrences: number;
  cumulative: boolean;
  /** Periods as bucketWallOf sees them (interval, zone, week start). */
  bucketing: ResolvedDateRange;
  /** Wall-clock starts of the cohort rows; events count when in [start, end). */
  rowWalls: number[];
  start: number;
  end: number;
}

export function referenceRetention(spec: RefRetention, events: RefEvent[]): number[][] {
  const rowOf = (ts: number) => (ts >= spec.start && ts < spec.end ? spec.rowWalls.indexOf(bucketWallOf(spec.bucketing, ts)) : -1);
  const cohorts = new Map<string, Set<number>>();
  const returnCounts = new Map<string, Map<number, number>>();
  const firstTarget = new Map<string, number>();
  for (const e of events) {
    if (e.event === spec.target && e.ts < spec.end) {
      if (spec.firstTime) firstTarget.set(e.person, Math.min(firstTarget.get(e.person) ?? Infinity, e.ts));
      else if (rowOf(e.ts) >= 0) cohorts.set(e.person, (cohorts.get(e.person) ?? new Set()).add(rowOf(e.ts)));
    }
    if (e.event === spec.returning && rowOf(e.ts) >= 0) {
      const counts = returnCounts.get(e.person) ?? new Map<number, number>();
      counts.set(rowOf(e.ts), (counts.get(rowOf(e.ts)) ?? 0) + 1);
      returnCounts.set(e.person, counts);
    }
  }
  for (const [person, first] of firstTarget) if (rowOf(first) >= 0) cohorts.set(person, new Set([rowOf(first)]));

  const values = spec.rowWalls.map(() => new Array<number>(spec.totalIntervals).fill(0));
  for (const [person, rows] of cohorts) {
    const returned = [...(returnCounts.get(person) ?? new Map<number, number>())].filter(([, n]) => n >= spec.minimumOccurrences).map(([row]) => row);
    for (const i of rows) {
      values[i][0]++;
      for (let k = 1; k < spec.totalIntervals; k++) {
        const hit = spec.cumulative ? returned.some((row) => row >= i + k) : returned.includes(i + k);
        if (hit) values[i][k]++;
      }
    }
  }
  return values;
}

/**
 * With a property breakdown: the retention of each value over the events carrying it (an actor
 * counts apart under each value, as PostHog groups by actor and value; a missing value is ""),
 * values ranked by total cohort size then value, those past `limit` summed into `other`.
 */
export function referenceRetentionByValue(spec: RefRetention, events: RefEvent[], valueOf: (e: RefEvent) => string, limit: number, other: string): Map<string, number[][]> {
  const byValue = new Map<string, RefEvent[]>();
  for (const e of events) byValue.set(valueOf(e), [...(byValue.get(valueOf(e)) ?? []), e]);
  const size = (values: number[][]) => values.reduce((sum, row) => sum + row[0], 0);
  const all = [...byValue].map(([value, list]) => [value, referenceRetention(spec, list)] as const).filter(([, values]) => size(values) > 0);
  all.sort(([a, x], [b, y]) => size(y) - size(x) || (a < b ? -1 : a > b ? 1 : 0));
  const out = new Map(all.slice(0, limit));
  const rest = all.slice(limit);
  if (rest.length > 0) out.set(other, rest[0][1].map((row, i) => row.map((_, k) => rest.reduce((sum, [, values]) => sum + values[i][k], 0))));
  return out;
}
