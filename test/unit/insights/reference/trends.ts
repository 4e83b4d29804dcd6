/**
 * Reference trends: plain loops over an event array, bucketed with the shared time helpers
 * (resolveDateRange, buckets, bucketWallOf). Covers the math (count-per-actor too), intervals and
 * one event-property breakdown with top-N and the null/other markers.
 */
import { buckets, bucketWallOf, resolveDateRange, startOf, toWall, DAY_MS, type DateRangeInput, type Interval } from '../../../../src/insights/time/index.js';
import { personsAfterMerges, propertyText, quantile, type RefEvent } from './events.js';

export interface RefTrendsQuery {
  event: string;
  math: string;
  math_property?: string;
  interval: Interval;
  dateRange: DateRangeInput;
  timeZone: string;
  breakdown?: string;
  breakdownLimit?: number;
  now: Date;
}

export interface RefSeries {
  breakdown_value?: string;
  data: number[];
  days: string[];
}

const NULL = '$$_posthog_breakdown_null_$$';
const OTHER = '$$_posthog_breakdown_other_$$';
const QUANTILES: Record<string, number> = { median: 0.5, p75: 0.75, p90: 0.9, p95: 0.95, p99: 0.99 };
/** `<name>_count_per_actor`: the name's aggregate over each person's number of events. */
const PER_ACTOR = /^(avg|min|max|median|p75|p90|p95|p99)_count_per_actor$/;

export function referenceTrends(all: RefEvent[], q: RefTrendsQuery): RefSeries[] {
  const range = resolveDateRange(q.dateRange, { interval: q.interval, timeZone: q.timeZone, weekStartDay: 0, now: q.now });
  const list = buckets(range);
  const personOf = personsAfterMerges(all);
  const matching = all.filter((e) => e.event === q.event && e.ts < range.to);
  const valueOf = (e: RefEvent) => {
    if (!q.breakdown) return '';
    const text = propertyText(e.properties[q.breakdown]);
    return text === null || text === '' ? NULL : text;
  };
  let math = q.math;
  if (math === 'weekly_active' && (q.interval === 'week' || q.interval === 'month')) math = 'dau';
  if (math === 'monthly_active' && q.interval === 'month') math = 'dau';

  const active = math === 'weekly_active' || math === 'monthly_active';
  /** The events a bucket counts. */
  const eventsOf = (events: RefEvent[], i: number): RefEvent[] => {
    const bucket = list[i];
    if (!active) return events.filter((e) => e.ts >= range.readFrom && bucketWallOf(range, e.ts) === bucket.wall);
    const days = math === 'weekly_active' ? 7 : 30;
    const hourly = q.interval === 'hour';
    const lastWall = hourly ? bucket.wall : startOf('day', i + 1 < list.length ? list[i + 1].wall - 1 : toWall(range.to - 1, q.timeZone));
    const firstWall = hourly ? lastWall - (days * 24 - 1) * 3_600_000 : lastWall - (days - 1) * DAY_MS;
    return events.filter((e) => {
      const w = startOf(hourly ? 'hour' : 'day', toWall(e.ts, q.timeZone));
      return w >= firstWall && w <= lastWall;
    });
  };
  const valueIn = (counted: RefEvent[]): number => {
    if (math === 'total') return counted.length;
    if (math === 'dau' || active) return new Set(counted.map((e) => personOf(e.distinct_id))).size;
    const perActor = PER_ACTOR.exec(math);
    let numbers: number[];
    if (perActor) {
      const counts = new Map<string, number>();
      for (const e of counted) counts.set(personOf(e.distinct_id), (counts.get(personOf(e.distinct_id)) ?? 0) + 1);
      numbers = [...counts.values()];
    } else {
      numbers = counted.map((e) => Number(propertyText(e.properties[q.math_property!]) ?? NaN)).filter((n) => Number.isFinite(n));
    }
    const fn = perActor ? perActor[1] : math;
    if (numbers.length === 0) return 0;
    if (fn === 'sum') return numbers.reduce((a, b) => a + b, 0);
    if (fn === 'avg') return numbers.reduce((a, b) => a + b, 0) / numbers.length;
    if (fn === 'min') return Math.min(...numbers);
    if (fn === 'max') return Math.max(...numbers);
    return quantile(numbers, QUANTILES[fn]);
  };

  if (math === 'first_time_for_user') {
    const first = new Map<string, number>();
    for (const e of matching) first.set(personOf(e.distinct_id), Math.min(first.get(personOf(e.distinct_id)) ?? Infinity, e.ts));
    const data = list.map((bucket) => [...first.values()].filter((ts) => ts >= range.readFrom && bucketWallOf(range, ts) === bucket.wall).length);
    return [{ data, days: list.map((b) => b.day) }];
  }
  const values = [...new Set(matching.map(valueOf))];
  const series = values.flatMap((value) => {
    const events = matching.filter((e) => valueOf(e) === value);
    const counted = list.map((_, i) => eventsOf(events, i));
    // A breakdown value is there when some bucket counts one of its events.
    if (!counted.some((c) => c.length > 0)) return [];
    return [{ value, data: counted.map(valueIn) }];
  });
  const days = list.map((b) => b.day);
  if (!q.breakdown) return [{ data: series[0]?.data ?? list.map(() => 0), days }];

  // Top N by total, then value; null after regular values; the rest summed into other.
  const total = (s: { data: number[] }) => s.data.reduce((a, b) => a + b, 0);
  const byValue = (a: string, b: string) => (a === b ? 0 : a === NULL ? 1 : b === NULL ? -1 : a < b ? -1 : 1);
  const ranked = series.sort((a, b) => total(b) - total(a) || byValue(a.value, b.value));
  const limit = q.breakdownLimit ?? 25;
  const kept = ranked.slice(0, limit);
  const rest = ranked.slice(limit);
  const ordered = [...kept.filter((s) => s.value !== NULL), ...kept.filter((s) => s.value === NULL)];
  const out: RefSeries[] = ordered.map((s) => ({ breakdown_value: s.value, data: s.data, days }));
  if (rest.length > 0) out.push({ breakdown_value: OTHER, data: list.map((_, i) => rest.reduce((sum, s) => sum + s.data[i], 0)), days });
  return out;
}

/**
 * The groups of type `groupType` (a name, read from each event's `$groups`) behind each bucket
 * of a `unique_group` trend, sorted, keeping those whose `properties` pass `keep` (the
 * ActorsQuery filter): what ActorsQuery lists, and by its size the trend's number.
 */
export function referenceGroupsPerBucket(all: RefEvent[], q: Omit<RefTrendsQuery, 'math' | 'breakdown'>, groupType: string, keep: (key: string) => boolean = () => true): string[][] {
  const range = resolveDateRange(q.dateRange, { interval: q.interval, timeZone: q.timeZone, weekStartDay: 0, now: q.now });
  const keyOf = (e: RefEvent) => {
    const groups = e.properties.$groups as Record<string, unknown> | undefined;
    const key = groups?.[groupType];
    return typeof key === 'string' ? key : '';
  };
  return buckets(range).map((bucket) => {
    const counted = all.filter((e) => e.event === q.event && e.ts >= range.readFrom && e.ts < range.to && bucketWallOf(range, e.ts) === bucket.wall);
    return [...new Set(counted.map(keyOf))].filter((key) => key !== '' && keep(key)).sort();
  });
}
