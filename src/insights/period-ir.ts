/**
 * Interval buckets in a statement: the IR that truncates an instant to its bucket on the
 * project's wall clock, and the wall-clock start of such a value, so results can be matched with
 * the bucket list time/buckets.ts makes. Hour and day buckets come back as the bucket's first
 * instant (UTC text), week and month buckets as the wall-clock date.
 */
import { ir } from '../hogql/index.js';
import { type Interval, toWall } from './time/index.js';

export function periodOf(ts: ir.IrExpr, interval: Interval, timeZone: string, weekStartDay: 0 | 1): ir.IrExpr {
  const tz = ir.constant(timeZone, 'String');
  switch (interval) {
    case 'minute':
      throw new Error('minute buckets are not computed in statements');
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

export const periodType = (interval: Interval): 'Date' | 'DateTime' => (interval === 'week' || interval === 'month' ? 'Date' : 'DateTime');

/**
 * The wall-clock start (ms, as time/calendar.ts counts walls) of a bucket value a statement
 * returned. Matching on the wall rather than the instant keeps the repeated hour of a DST change
 * in its one wall-clock bucket whichever of its two instants the engine names.
 */
export function periodWall(interval: Interval, value: unknown, timeZone: string): number {
  const text = String(value);
  if (interval === 'week' || interval === 'month') return Date.parse(`${text.slice(0, 10)}T00:00:00Z`);
  return toWall(Date.parse(`${text.slice(0, 23).replace(' ', 'T')}Z`), timeZone);
}
