/**
 * Reference lifecycle: per person the set of active buckets (from one bucket before the range),
 * new in the bucket of the person's first event (when Sightline creates the person), returning
 * after an active bucket, resurrecting otherwise; dormant after an active bucket without activity.
 * With `actor`, the actors are what it names (a group key; null: the event has none) instead.
 */
import { addUnits, buckets, bucketWallOf, resolveDateRange, toInstant, type DateRangeInput, type Interval } from '../../../../src/insights/time/index.js';
import { personsAfterMerges, type RefEvent } from './events.js';

export function referenceLifecycle(
  all: RefEvent[],
  q: { event: string; interval: Interval; dateRange: DateRangeInput; timeZone: string; now: Date; createdAt: (actor: string) => number; actor?: (e: RefEvent) => string | null },
): Record<'new' | 'returning' | 'resurrecting' | 'dormant', number[]> {
  const range = resolveDateRange(q.dateRange, { interval: q.interval, timeZone: q.timeZone, weekStartDay: 0, now: q.now });
  const list = buckets(range);
  const before = addUnits(range.interval, -1, list[0].wall);
  const walls = [before, ...list.map((b) => b.wall)];
  const personOf = personsAfterMerges(all);
  const active = new Map<string, Set<number>>();
  for (const e of all) {
    if (e.event !== q.event || e.ts < toInstant(before, q.timeZone) || e.ts >= range.to) continue;
    const person = q.actor ? q.actor(e) : personOf(e.distinct_id);
    if (person === null) continue;
    const set = active.get(person) ?? new Set<number>();
    active.set(person, set);
    set.add(walls.indexOf(bucketWallOf(range, e.ts)) - 1);
  }
  const out = { new: list.map(() => 0), returning: list.map(() => 0), resurrecting: list.map(() => 0), dormant: list.map(() => 0) };
  for (const [person, set] of active) {
    const created = bucketWallOf(range, q.createdAt(person));
    for (let i = -1; i < list.length; i++) {
      if (!set.has(i)) continue;
      if (i >= 0) out[created === list[i].wall ? 'new' : set.has(i - 1) ? 'returning' : 'resurrecting'][i] += 1;
      if (i + 1 < list.length && !set.has(i + 1)) out.dormant[i + 1] -= 1;
    }
  }
  return out;
}
