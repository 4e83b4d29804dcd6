/**
 * Interval buckets in SQL: the IR that truncates an event's timestamp to the start of its
 * bucket on the project's wall clock, and the decoding of what comes back into the wall value
 * time/buckets.ts uses — so SQL bucketing and the bucket list meet on the same keys.
 */
import { ir } from '../../hogql/index.js';
import { timestampMs } from '../../hogql/dates.js';
import { toWall, type Interval, type WeekStartDay } from '../time/index.js';
import { TIMESTAMP } from './scope.js';

/** The start of the bucket holding `ts`: DateTime (minute, hour, day) or Date (week, month). */
export function bucketExpr(interval: Interval, timeZone: string, weekStartDay: WeekStartDay, ts: ir.IrExpr = TIMESTAMP): ir.IrExpr {
  const tz = ir.constant(timeZone, 'String');
  switch (interval) {
    case 'minute':
      return ir.call('toStartOfMinute', [ts], 'DateTime');
    case 'hour':
      return ir.call('toStartOfHour', [ts, tz], 'DateTime');
    case 'day':
      return ir.call('toStartOfDay', [ts, tz], 'DateTime');
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
