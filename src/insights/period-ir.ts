/**
 * Interval buckets in a statement: the IR that truncates an instant to its bucket on the
 * project's wall clock, and the text such a value decodes to, so results can be matched with the
 * bucket list time/buckets.ts makes. Hour and day buckets come back as the bucket's first
 * instant (UTC text), week and month buckets as the wall-clock date.
 */
import { ir } from '../hogql/index.js';
import { type Interval, wallDate } from './time/index.js';

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

/** The decoded text of a bucket's value, from its first instant and wall-clock start. */
export function periodKey(interval: Interval, start: number, wall: number): string {
  if (interval === 'week' || interval === 'month') return wallDate(wall);
  return `${new Date(start).toISOString().slice(0, 19).replace('T', ' ')}.000000`;
}
