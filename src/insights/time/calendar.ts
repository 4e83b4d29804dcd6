/**
 * Calendar arithmetic in a project's time zone. A "wall" value is the wall-clock time of an
 * instant written as epoch milliseconds, as if the wall clock were UTC: truncating and adding
 * calendar units is then plain UTC Date arithmetic, and a DST change only matters when a wall
 * value is turned back into an instant.
 */
import { localToUtc, offsetMs } from '../../hogql/dates.js';

export type CalendarUnit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year';

/** 0 = weeks start on Sunday (PostHog's default), 1 = on Monday. */
export type WeekStartDay = 0 | 1;

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export const toWall = (instant: number, timeZone: string): number => instant + offsetMs(instant, timeZone);
export const toInstant = (wall: number, timeZone: string): number => localToUtc(wall, timeZone);

/** The first wall moment of the `unit` that holds `wall`. */
export function startOf(unit: CalendarUnit, wall: number, weekStartDay: WeekStartDay = 0): number {
  const d = new Date(wall);
  switch (unit) {
    case 'second':
      return Math.floor(wall / 1000) * 1000;
    case 'minute':
      return Math.floor(wall / MINUTE_MS) * MINUTE_MS;
    case 'hour':
      return Math.floor(wall / HOUR_MS) * HOUR_MS;
    case 'day':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    case 'week': {
      const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
      const back = (d.getUTCDay() - weekStartDay + 7) % 7;
      return day - back * DAY_MS;
    }
    case 'month':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    case 'quarter':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - (d.getUTCMonth() % 3), 1);
    case 'year':
      return Date.UTC(d.getUTCFullYear(), 0, 1);
  }
}

/**
 * `wall` moved by `n` units. Months and years keep the day of the month, clamped to the
 * month's last day (31 Jan + 1 month = 28/29 Feb), as PostHog's relativedelta does.
 */
export function addUnits(unit: CalendarUnit, n: number, wall: number): number {
  switch (unit) {
    case 'second':
      return wall + n * 1000;
    case 'minute':
      return wall + n * MINUTE_MS;
    case 'hour':
      return wall + n * HOUR_MS;
    case 'day':
      return wall + n * DAY_MS;
    case 'week':
      return wall + n * 7 * DAY_MS;
    case 'month':
    case 'quarter':
    case 'year': {
      const months = unit === 'month' ? n : unit === 'quarter' ? 3 * n : 12 * n;
      const d = new Date(wall);
      const target = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1));
      const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
      target.setUTCDate(Math.min(d.getUTCDate(), lastDay));
      return target.getTime() + (wall - Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
    }
  }
}

/** The instant `n` units after the instant `instant`, stepping on the wall clock (a "day" across DST is 23 or 25 hours). */
export function addInstant(unit: CalendarUnit, n: number, instant: number, timeZone: string): number {
  if (unit === 'second' || unit === 'minute' || unit === 'hour') return instant + addUnits(unit, n, 0);
  return toInstant(addUnits(unit, n, toWall(instant, timeZone)), timeZone);
}

/** The instant that starts the `unit` holding `instant`, in `timeZone`. */
export function startOfInstant(unit: CalendarUnit, instant: number, timeZone: string, weekStartDay: WeekStartDay = 0): number {
  return toInstant(startOf(unit, toWall(instant, timeZone), weekStartDay), timeZone);
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `YYYY-MM-DDTHH:MM:SS.ffffff+hh:mm` of an instant in `timeZone` (`micros` beyond the ms). */
export function isoWithOffset(instant: number, timeZone: string, micros = 0): string {
  const offset = offsetMs(instant, timeZone);
  const wall = new Date(instant + offset);
  const sign = offset < 0 ? '-' : '+';
  const minutes = Math.abs(offset) / MINUTE_MS;
  const fraction = wall.getUTCMilliseconds() * 1000 + micros;
  return (
    `${wall.getUTCFullYear()}-${pad(wall.getUTCMonth() + 1)}-${pad(wall.getUTCDate())}` +
    `T${pad(wall.getUTCHours())}:${pad(wall.getUTCMinutes())}:${pad(wall.getUTCSeconds())}` +
    (fraction ? `.${pad(fraction, 6)}` : '') +
    `${sign}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`
  );
}

/** `YYYY-MM-DD` of a wall value. */
export function wallDate(wall: number): string {
  const d = new Date(wall);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

/** `YYYY-MM-DD HH:MM:SS` of a wall value. */
export function wallDateTime(wall: number): string {
  const d = new Date(wall);
  return `${wallDate(wall)} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}
