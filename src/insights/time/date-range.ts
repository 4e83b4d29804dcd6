/**
 * A query's `dateRange` resolved to instants, as PostHog resolves it (query-api.md §1.4.1–1.4.2):
 * relative strings count back from now on the project's wall clock, `date_from` defaults to the
 * start of the day 7 days ago, `date_to` to now rounded up to the end of its day (or hour), and
 * `explicitDate` (or an exact range, as BoldNumber asks) keeps both bounds verbatim.
 */
import { validationError } from '../../kernel/errors.js';
import { parseLiteral } from '../../hogql/dates.js';
import { type CalendarUnit, addUnits, startOf, toInstant, toWall, isoWithOffset, type WeekStartDay } from './calendar.js';

export type Interval = 'minute' | 'hour' | 'day' | 'week' | 'month';
export const INTERVALS: readonly Interval[] = ['minute', 'hour', 'day', 'week', 'month'];

export interface DateRangeInput {
  date_from?: string | null;
  date_to?: string | null;
  explicitDate?: boolean | null;
}

export interface ResolveOptions {
  interval: Interval;
  timeZone: string;
  weekStartDay: WeekStartDay;
  now: Date;
  /** A rolling window: relative bounds are not snapped to day starts/ends (trends' BoldNumber). */
  exact?: boolean;
  /** The first event's instant, when `date_from` is `all` (the caller looks it up; null when there is none). */
  earliest?: number | null;
  /** Attribute prefix for errors (`dateRange.`). */
  attr?: string;
}

export interface ResolvedDateRange {
  /** The range's first instant (ms), as the caller wrote or defaulted it. */
  from: number;
  /** The first instant events are read from: `from` moved back to the start of its bucket where PostHog does. */
  readFrom: number;
  /** The first instant after the range (exclusive upper bound, ms). */
  to: number;
  interval: Interval;
  timeZone: string;
  weekStartDay: WeekStartDay;
}

const RELATIVE = /^-?(\d{0,4})([smhdwqyM])(Start|End)?$/;
const UNITS: Record<string, CalendarUnit> = { s: 'second', M: 'minute', h: 'hour', d: 'day', w: 'week', m: 'month', q: 'quarter', y: 'year' };

interface ParsedBound {
  /** Wall-clock ms in the project zone, or an instant when `instant` is set. */
  wall: number;
  relative: boolean;
  unit: CalendarUnit | null;
  dateOnly: boolean;
}

/** Does this range need the first event's time (`date_from: "all"`)? */
export const wantsEarliest = (input: DateRangeInput | null | undefined) => input?.date_from === 'all';

function parseBound(text: string, now: number, timeZone: string, attr: string): ParsedBound {
  const relative = RELATIVE.exec(text);
  if (relative) {
    const [, count, letter, snap] = relative;
    const unit = UNITS[letter];
    let wall = addUnits(unit, -Number(count || 0), toWall(now, timeZone));
    // `Start` snaps to the unit's first moment, `End` to its last (1 ms before the next one).
    if (snap === 'Start') wall = startOf(unit === 'quarter' ? 'quarter' : unit, wall);
    if (snap === 'End') wall = addUnits(unit, 1, startOf(unit, wall)) - 1;
    return { wall, relative: true, unit, dateOnly: false };
  }
  const literal = parseLiteral(text, 'UTC');
  if (!literal) throw validationError(`"${text}" is not a date: use an ISO date or date-time, "all" (date_from only), or a relative date such as "-7d", "-1mStart" or "-24h".`, attr, 'invalid_date');
  if (literal.zoned) return { wall: toWall(literal.ms, timeZone), relative: false, unit: null, dateOnly: false };
  return { wall: literal.ms, relative: false, unit: null, dateOnly: literal.dateOnly };
}

const subDay = (unit: CalendarUnit | null) => unit === 'second' || unit === 'minute' || unit === 'hour';

export function resolveDateRange(input: DateRangeInput | null | undefined, options: ResolveOptions): ResolvedDateRange {
  const { interval, timeZone, weekStartDay } = options;
  const prefix = options.attr ?? 'dateRange.';
  const now = options.now.getTime();
  const explicit = input?.explicitDate === true;
  const verbatim = explicit || options.exact === true;

  // --- date_from
  let fromWall: number;
  let fromExact = verbatim;
  const fromText = input?.date_from ?? null;
  if (fromText === null) {
    fromWall = startOf('day', addUnits('day', -7, toWall(now, timeZone)));
  } else if (fromText === 'all') {
    const first = options.earliest ?? now;
    fromWall = startOf('day', toWall(first, timeZone));
  } else {
    const bound = parseBound(fromText, now, timeZone, `${prefix}date_from`);
    fromWall = bound.wall;
    if (bound.relative && !verbatim && interval !== 'minute') {
      fromWall = startOf(subDay(bound.unit) ? 'hour' : 'day', fromWall);
    }
    // Relative hour-based bounds and minute/hour intervals read from the bound itself.
    if (bound.relative && (subDay(bound.unit) || interval === 'minute' || interval === 'hour')) fromExact = true;
  }

  // --- date_to (exclusive end)
  let toWall_: number;
  const toText = input?.date_to ?? null;
  if (toText === null) {
    toWall_ = toWall(now, timeZone);
    if (!verbatim) toWall_ = interval === 'hour' || interval === 'minute' ? roundUp('hour', toWall_) : roundUp('day', toWall_);
    else toWall_ += 1;
  } else {
    const bound = parseBound(toText, now, timeZone, `${prefix}date_to`);
    toWall_ = bound.wall;
    if (verbatim) toWall_ += bound.dateOnly ? 0 : 1;
    else if (interval === 'hour' || interval === 'minute') toWall_ = bound.relative || bound.dateOnly ? roundUp(bound.dateOnly ? 'day' : 'hour', toWall_) : toWall_ + 1;
    else toWall_ = roundUp('day', toWall_);
  }

  const from = toInstant(fromWall, timeZone);
  const to = toInstant(toWall_, timeZone);
  if (to <= from) throw validationError('date_to must be later than date_from.', `${prefix}date_to`, 'invalid_date');
  return { from, readFrom: fromExact ? from : toInstant(readStart(interval, fromWall), timeZone), to, interval, timeZone, weekStartDay };
}

/** The exclusive end of the `unit` holding `wall` (the next unit's first moment). */
const roundUp = (unit: 'hour' | 'day', wall: number) => addUnits(unit, 1, startOf(unit, wall));

/**
 * Where the first bucket starts reading (§1.4.2): a day or week interval from the start of
 * date_from's day (the first week is partial), a month from the start of its month (events
 * before date_from in that month count), an hour from the start of its hour.
 */
function readStart(interval: Interval, fromWall: number): number {
  if (interval === 'month') return startOf('month', fromWall);
  if (interval === 'hour') return startOf('hour', fromWall);
  if (interval === 'minute') return startOf('minute', fromWall);
  return startOf('day', fromWall);
}

/** `resolved_date_range` as PostHog reports it: ISO instants with the project's offset, the end inclusive. */
export function describeRange(range: ResolvedDateRange): { date_from: string; date_to: string } {
  return { date_from: isoWithOffset(range.from, range.timeZone), date_to: isoWithOffset(range.to - 1, range.timeZone, 999) };
}
