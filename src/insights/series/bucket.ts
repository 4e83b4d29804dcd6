/**
 * Interval buckets in SQL: the IR that truncates an event's timestamp to the start of its
 * bucket on the project's wall clock, and the decoding of what comes back into the wall value
 * time/buckets.ts uses — so SQL bucketing and the bucket list meet on the same keys.
 */
import { ir } from '../../hogql/index.js';
import { timestampMs } from '../../hogql/dates.js';
import { toWall, type Interval, type WeekStartDay } from '../time/index.js';
import { TIMESTAMP } from './scope.js';

/**
 * The start of the bucket holding `ts`: DateTime (minute, hour) or Date (day, week, month).
 * Day buckets are wall dates, not the instant of their midnight: the engine then groups by a
 * cheap truncation of the shifted timestamp, where an instant would convert every row back
 * from wall clock to UTC through the time-zone library (~4× the whole query's time at 10M
 * events in Europe/Paris; docs/benchmarks.md "insights"). A day whose midnight the clock
 * skips keeps its date too.
 */
export function bucketExpr(interval: Interval, timeZone: string, weekStartDay: WeekStartDay, ts: ir.IrExpr = TIMESTAMP): ir.IrExpr {
  const tz = ir.constant(timeZone, 'String');
  switch (interval) {
    case 'minute':
      return ir.call('dateTrunc', [ir.constant('minute', 'String'), ts, tz], 'DateTime');
    case 'hour':
      return ir.call('toStartOfHour', [ts, tz], 'DateTime');
    case 'day':
      return ir.call('toDate', [ts, tz], 'Date');
    case 'week':
      return ir.call('toStartOfWeek', [ts, tz, ir.constant(weekStartDay, 'Integer')], 'Date');
    case 'month':
      return ir.call('toStartOfMonth', [ts, tz], 'Date');
  }
}

/** The wall value (time/calendar.ts) of a decoded bucket start: DateTime text is an instant, Date text a wall date. */
export function bucketWall(value: unknown, timeZone: string): number {
  const text = String(value);
  if (text.length === 10) return Date.parse(`${text}T00:00:00Z`);
  return toWall(timestampMs(text), timeZone);
}
