/**
 * Date literals and the text form DateTime constants travel in. A DateTime constant is
 * `YYYY-MM-DD HH:MM:SS.ffffff` in UTC: microseconds, the precision events are stored and shown
 * with, so a filter bound written with microseconds compares at that precision. Naive literals
 * are UTC unless a time zone is given.
 */
const DATE_TIME =
  /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

export interface ParsedLiteral {
  /** Whole milliseconds since the epoch, UTC. */
  ms: number;
  /** Microseconds beyond `ms` (0–999). */
  micros: number;
  /** The text named its own offset (Z or ±hh:mm). */
  zoned: boolean;
  /** Only a date was written. */
  dateOnly: boolean;
}

/**
 * A date or date-time literal. Without an offset the fields are read in `timeZone` (UTC when
 * absent). Null when the text is not a real date.
 */
export function parseLiteral(text: string, timeZone?: string): ParsedLiteral | null {
  const match = DATE_TIME.exec(text.trim());
  if (!match) return null;
  const [, y, mo, d, h, mi = '0', s = '0', frac = '', zone] = match;
  const fields = [Number(y), Number(mo) - 1, Number(d), Number(h ?? 0), Number(mi), Number(s)] as const;
  const digits = frac.padEnd(6, '0');
  const millis = Number(digits.slice(0, 3));
  const micros = Number(digits.slice(3, 6));
  let time = Date.UTC(fields[0], fields[1], fields[2], fields[3], fields[4], fields[5], millis);
  const date = new Date(time);
  // Date.UTC rolls over (Feb 30 → Mar 2) and maps years < 100 to 19xx; a real date reads back the same fields.
  if (date.getUTCFullYear() !== fields[0] || date.getUTCMonth() !== fields[1] || date.getUTCDate() !== fields[2] || fields[3] > 23 || fields[4] > 59 || fields[5] > 59) {
    return null;
  }
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const zoneDigits = zone.slice(1).replace(':', '');
    const offsetMinutes = Number(zoneDigits.slice(0, 2)) * 60 + Number(zoneDigits.slice(2) || '0');
    time -= sign * offsetMinutes * 60_000;
  } else if (!zone && timeZone && timeZone !== 'UTC') {
    time = localToUtc(time, timeZone);
  }
  return { ms: time, micros, zoned: zone !== undefined, dateOnly: h === undefined };
}

/** The instant of a literal as a Date (milliseconds), or null. */
export function parseDateLiteral(text: string, timeZone?: string): Date | null {
  const parsed = parseLiteral(text, timeZone);
  return parsed ? new Date(parsed.ms) : null;
}

/** A literal as DateTime constant text (microseconds kept), or null. */
export function timestampLiteral(text: string, timeZone?: string): string | null {
  const parsed = parseLiteral(text, timeZone);
  return parsed ? timestampText(new Date(parsed.ms), parsed.micros) : null;
}

/** `YYYY-MM-DD HH:MM:SS.ffffff` (UTC) of a Date, with extra microseconds. */
export function timestampText(date: Date, micros = 0): string {
  return `${date.toISOString().slice(0, 23).replace('T', ' ')}${String(micros).padStart(3, '0')}`;
}

/** Kept for callers that bind millisecond text (`YYYY-MM-DD HH:MM:SS.mmm`). */
export function toSqlTimestamp(date: Date): string {
  return date.toISOString().replace('T', ' ').replace('Z', '');
}

export function toSqlDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** Epoch ms of DateTime constant text (microseconds dropped). */
export function timestampMs(text: string): number {
  return Date.parse(`${text.replace(' ', 'T').slice(0, 23)}Z`);
}

/**
 * The UTC instant whose wall-clock time in `timeZone` is `wallMs` (the fields read as if UTC).
 * In a DST gap the later offset is used; in an overlap the earlier instant, as ClickHouse does.
 */
export function localToUtc(wallMs: number, timeZone: string): number {
  let guess = wallMs - offsetMs(wallMs, timeZone);
  // Two refinements settle both sides of a transition.
  for (let i = 0; i < 2; i++) {
    const next = wallMs - offsetMs(guess, timeZone);
    if (next === guess) break;
    guess = next;
  }
  return guess;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Offset of `timeZone` from UTC at the instant `utcMs`, in ms (Europe/Paris in summer: +7,200,000). */
export function offsetMs(utcMs: number, timeZone: string): number {
  if (timeZone === 'UTC') return 0;
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, format);
  }
  const parts: Record<string, number> = {};
  for (const part of format.formatToParts(new Date(utcMs))) if (part.type !== 'literal') parts[part.type] = Number(part.value);
  const wall = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  return wall - Math.floor(utcMs / 1000) * 1000;
}

/** True when `name` is a time zone this runtime knows. */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
