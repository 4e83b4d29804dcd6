/**
 * Strict parsing of date literals written in expressions (`timestamp > '2024-01-01'`).
 * Naive values are UTC, as Sightline stores timestamps in UTC.
 */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

export function parseDateLiteral(text: string): Date | null {
  const match = DATE_TIME.exec(text.trim());
  if (!match) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = match;
  const millis = Number(frac.padEnd(3, '0').slice(0, 3));
  let time = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), millis);
  const date = new Date(time);
  // Date.UTC rolls over (Feb 30 → Mar 2) and maps years < 100 to 19xx; a real date reads back the same fields.
  if (date.getUTCFullYear() !== Number(y) || date.getUTCMonth() !== Number(mo) - 1 || date.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) {
    return null;
  }
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offsetMinutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0');
    time -= sign * offsetMinutes * 60_000;
  }
  return new Date(time);
}

/** `YYYY-MM-DD HH:MM:SS.mmm`, the text form DuckDB casts to TIMESTAMP. */
export function toSqlTimestamp(date: Date): string {
  return date.toISOString().replace('T', ' ').replace('Z', '');
}

export function toSqlDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}
