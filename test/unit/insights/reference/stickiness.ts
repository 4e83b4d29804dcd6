/** Reference stickiness: per person, the number of range buckets with at least `min` events. */
import { buckets, bucketWallOf, resolveDateRange, type DateRangeInput, type Interval } from '../../../../src/insights/time/index.js';
import { personsAfterMerges, type RefEvent } from './events.js';

export function referenceStickiness(all: RefEvent[], q: { event: string; interval: Interval; dateRange: DateRangeInput; timeZone: string; min: number; now: Date }): number[] {
  const range = resolveDateRange(q.dateRange, { interval: q.interval, timeZone: q.timeZone, weekStartDay: 0, now: q.now });
  const list = buckets(range);
  const personOf = personsAfterMerges(all);
  const perPerson = new Map<string, Map<number, number>>();
  for (const e of all) {
    if (e.event !== q.event || e.ts < range.readFrom || e.ts >= range.to) continue;
    const person = personOf(e.distinct_id);
    const counts = perPerson.get(person) ?? new Map<number, number>();
    perPerson.set(person, counts);
    const wall = bucketWallOf(range, e.ts);
    counts.set(wall, (counts.get(wall) ?? 0) + 1);
  }
  const data = list.map(() => 0);
  for (const counts of perPerson.values()) {
    const n = [...counts.values()].filter((c) => c >= q.min).length;
    if (n > 0) data[n - 1] += 1;
  }
  return data;
}
