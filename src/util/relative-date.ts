/**
 * Relative dates as PostHog filters write them: `-7d`, `-24h`, `2w`, `-1m`, `-1y`
 * (hours, days, weeks, months, years before `now`, in UTC). The sign is optional and
 * the amount must stay below 10,000, as in the original.
 */
const RELATIVE = /^-?(\d{1,4})([hdwmy])$/;

export function parseRelativeDate(text: string, now: Date): Date | null {
  const match = RELATIVE.exec(text.trim());
  if (!match) return null;
  const amount = Number(match[1]);
  const date = new Date(now.getTime());
  switch (match[2]) {
    case 'h':
      date.setUTCHours(date.getUTCHours() - amount);
      break;
    case 'd':
      date.setUTCDate(date.getUTCDate() - amount);
      break;
    case 'w':
      date.setUTCDate(date.getUTCDate() - amount * 7);
      break;
    case 'm':
      return addMonthsClamped(date, -amount);
    case 'y':
      return addMonthsClamped(date, -12 * amount);
  }
  return date;
}

/** Calendar months, clamping the day like relativedelta: 31 March − 1 month = 28/29 February. */
function addMonthsClamped(date: Date, months: number): Date {
  const day = date.getUTCDate();
  const result = new Date(date.getTime());
  result.setUTCDate(1);
  result.setUTCMonth(result.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(result.getUTCFullYear(), result.getUTCMonth() + 1, 0)).getUTCDate();
  result.setUTCDate(Math.min(day, lastDay));
  return result;
}

/** A relative date, or any date `Date` can parse; naive ISO date-times are read as UTC. */
export function parseFilterDate(value: unknown, now: Date): Date | null {
  if (typeof value === 'number') return Number.isFinite(value) ? new Date(value * 1000) : null;
  if (typeof value !== 'string' || value.trim() === '') return null;
  const relative = parseRelativeDate(value, now);
  if (relative) return relative;
  const text = value.trim();
  const naive = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text);
  const parsed = new Date(naive ? `${text.replace(' ', 'T')}Z` : text);
  return Number.isNaN(parsed.getTime()) ? null : parsed;
}
