import { parseFilterDate } from '../../util/relative-date.js';

/**
 * A date on either side of `is_date_*`: a relative date (`-7d`), a date string (naive
 * ones are UTC), or a number / numeric string of Unix seconds, as PostHog's server reads
 * person properties. Anything else is not a date.
 */
export function parseDateValue(value: unknown, now: Date): Date | null {
  if (typeof value === 'number') return Number.isFinite(value) ? new Date(value * 1000) : null;
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (/^-?\d+(\.\d+)?$/.test(text)) return new Date(Number(text) * 1000);
  return parseFilterDate(text, now);
}
