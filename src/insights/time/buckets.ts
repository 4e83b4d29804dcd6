/**
 * The buckets of a resolved range (§1.4.2, §1.7.3): every interval start from the start of the
 * interval holding date_from up to date_to, on the project's wall clock, with PostHog's `days`
 * texts and human labels. Buckets before the first event are still listed (their value is 0).
 */
import { addUnits, startOf, toInstant, toWall, wallDate, wallDateTime, DAY_MS, isoWithOffset } from './calendar.js';
import type { ResolvedDateRange } from './date-range.js';

export interface Bucket {
  /** The bucket's first instant (ms). */
  start: number;
  /** Wall-clock ms of the start in the project zone. */
  wall: number;
  /** `days` text: `YYYY-MM-DD`, or `YYYY-MM-DD HH:MM:SS` for hour and minute intervals. */
  day: string;
  /** Human label: `5-Mar-2025`, `5-Mar 14:00`, `Mar 2025`, or a week's clipped range. */
  label: string;
  /** ISO start with the zone's offset (the series' `action.days`). */
  iso: string;
}

/** Stops a runaway range (minute buckets over years) before it is computed. */
export const MAX_BUCKETS = 5_000;

/**
 * The bucket a data point names (an actors query's `day`): its index, its `days` text, its ISO
 * start, or for hour and minute buckets the date their text starts with (the first of that day).
 * -1 when it names none.
 */
export function bucketIndexOf(list: readonly Bucket[], day: string | number): number {
  if (typeof day === 'number') return Number.isInteger(day) && day >= 0 && day < list.length ? day : -1;
  return list.findIndex((b) => b.day === day || b.iso === day || b.day.startsWith(`${day} `));
}

export function bucketCount(range: ResolvedDateRange): number {
  let n = 0;
  for (let wall = firstWall(range); toInstant(wall, range.timeZone) < range.to; wall = addUnits(range.interval, 1, wall)) {
    if (!skipped(range, wall, toInstant(wall, range.timeZone)) && ++n > MAX_BUCKETS) break;
  }
  return n;
}

export function buckets(range: ResolvedDateRange): Bucket[] {
  const out: Bucket[] = [];
  for (let wall = firstWall(range); ; wall = addUnits(range.interval, 1, wall)) {
    const start = toInstant(wall, range.timeZone);
    if (start >= range.to || out.length >= MAX_BUCKETS) break;
    if (skipped(range, wall, start)) continue;
    out.push({ start, wall, day: dayText(range, wall), label: labelOf(range, wall), iso: isoWithOffset(start, range.timeZone) });
  }
  return out;
}

/** Wall start of the bucket holding an instant (the reference implementation of SQL bucketing). */
export function bucketWallOf(range: ResolvedDateRange, instant: number): number {
  return startOf(range.interval, toWall(instant, range.timeZone), range.weekStartDay);
}

/**
 * An hour (or minute) that the clock skips when DST starts has no bucket: its wall time names
 * no instant. (A day whose midnight is skipped still has one, starting when the day does.)
 */
function skipped(range: ResolvedDateRange, wall: number, start: number): boolean {
  return (range.interval === 'hour' || range.interval === 'minute') && toWall(start, range.timeZone) !== wall;
}

function firstWall(range: ResolvedDateRange): number {
  return startOf(range.interval, toWall(range.from, range.timeZone), range.weekStartDay);
}

const dayText = (range: ResolvedDateRange, wall: number) => (range.interval === 'hour' || range.interval === 'minute' ? wallDateTime(wall) : wallDate(wall));

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function labelOf(range: ResolvedDateRange, wall: number): string {
  const d = new Date(wall);
  const dayMonth = `${d.getUTCDate()}-${MONTHS[d.getUTCMonth()]}`;
  switch (range.interval) {
    case 'minute':
    case 'hour':
      return `${dayMonth} ${wallDateTime(wall).slice(11, 16)}`;
    case 'day':
      return `${dayMonth}-${d.getUTCFullYear()}`;
    case 'month':
      return `${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
    case 'week': {
      // The week's days, clipped to the range.
      const first = Math.max(wall, startOf('day', toWall(range.from, range.timeZone)));
      const last = Math.min(wall + 6 * DAY_MS, startOf('day', toWall(range.to - 1, range.timeZone)));
      return weekLabel(new Date(first), new Date(last));
    }
  }
}

/** `2–8 Mar`, `28 Feb – 6 Mar`, or `29-Dec-2024 – 4-Jan-2025`. */
function weekLabel(first: Date, last: Date): string {
  if (first.getUTCFullYear() !== last.getUTCFullYear()) {
    const full = (d: Date) => `${d.getUTCDate()}-${MONTHS[d.getUTCMonth()]}-${d.getUTCFullYear()}`;
    return `${full(first)} – ${full(last)}`;
  }
  if (first.getUTCMonth() !== last.getUTCMonth()) {
    return `${first.getUTCDate()} ${MONTHS[first.getUTCMonth()]} – ${last.getUTCDate()} ${MONTHS[last.getUTCMonth()]}`;
  }
  return `${first.getUTCDate()}–${last.getUTCDate()} ${MONTHS[last.getUTCMonth()]}`;
}
