/**
 * compareFilter (query-api.md §1.4.6): the previous period is the same wall-clock length right
 * before the range; with `compare_to` (`-1w`, `-14d`, …) the whole range moves back by that much.
 */
import { validationError } from '../../kernel/errors.js';
import { addUnits, toInstant, toWall, type CalendarUnit, type ResolvedDateRange } from '../time/index.js';

const SHIFT = /^-(\d{1,4})([hdwmqy])$/;
const UNITS: Record<string, CalendarUnit> = { h: 'hour', d: 'day', w: 'week', m: 'month', q: 'quarter', y: 'year' };

export function checkCompareTo(compareTo: string | null): void {
  if (compareTo !== null && !SHIFT.test(compareTo)) {
    throw validationError('compare_to must be a relative shift back such as "-1w", "-14d" or "-1m".', 'compareFilter.compare_to', 'invalid_date');
  }
}

export function previousRange(range: ResolvedDateRange, compareTo: string | null): ResolvedDateRange {
  const tz = range.timeZone;
  const wall = (instant: number) => toWall(instant, tz);
  let shift: (w: number) => number;
  const match = compareTo ? SHIFT.exec(compareTo) : null;
  if (match) {
    const unit = UNITS[match[2]];
    const n = Number(match[1]);
    shift = (w) => addUnits(unit, -n, w);
  } else {
    const length = wall(range.to) - wall(range.from);
    shift = (w) => w - length;
  }
  return {
    ...range,
    from: toInstant(shift(wall(range.from)), tz),
    readFrom: toInstant(shift(wall(range.readFrom)), tz),
    to: toInstant(shift(wall(range.to)), tz),
  };
}
