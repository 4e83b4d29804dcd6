/**
 * Query parameters of the events API, validated into an EventsQuery. Every problem is a 400
 * naming the parameter in `attr`; nothing here reaches SQL except as a bound value.
 */
import { validationError } from '../kernel/errors.js';
import { integer, pageLimit } from '../http/pagination.js';
import { jsonStringList } from '../http/query-params.js';
import { parseLiteral, timestampText } from '../hogql/dates.js';
import { parseRelativeDate } from '../util/relative-date.js';
import { canonicalUuid } from '../util/uuid.js';
import { decodeCursor } from './cursor.js';
import type { EventsQuery, Format, Paging } from './types.js';

export const DEFAULT_LIMIT = 100;
/** PostHog's default for CSV exports; `limit` (up to MAX_CSV_LIMIT) asks for more. */
export const DEFAULT_CSV_LIMIT = 3_500;
/** JSON pages are built in memory; CSV is streamed and may go much further. */
export const MAX_JSON_LIMIT = 10_000;
export const MAX_CSV_LIMIT = 1_000_000;
/** Longest accepted text of a plain string filter (event, distinct_id). */
export const MAX_TEXT = 10_000;

export type RawQuery = Record<string, unknown>;

/** `format` wins; otherwise `Accept: text/csv` asks for CSV. */
export function readFormat(query: RawQuery, accept: string | undefined): Format {
  const format = text(query, 'format');
  if (format === null) return accept?.toLowerCase().includes('text/csv') ? 'csv' : 'json';
  if (format !== 'json' && format !== 'csv') throw validationError('format must be json or csv.', 'format');
  return format;
}

export function readEventsQuery(query: RawQuery, projectId: number, now: Date): EventsQuery {
  return {
    projectId,
    now,
    after: date(query, 'after', now),
    before: date(query, 'before', now),
    distinctId: text(query, 'distinct_id'),
    event: text(query, 'event'),
    personId: uuidParam(query, 'person_id'),
    actionSteps: null,
    groupValues: null,
    properties: json(query, 'properties'),
    select: expressions(query, 'select'),
    where: expressions(query, 'where'),
    orderBy: expressions(query, 'orderBy'),
  };
}

export function readPaging(query: RawQuery, format: Format): Paging {
  const raw = text(query, 'cursor');
  const cursor = raw === null ? null : decodeCursor(raw);
  if (raw !== null && cursor === null) throw validationError('Invalid cursor.', 'cursor');
  return {
    limit: format === 'csv' ? pageLimit(query.limit, MAX_CSV_LIMIT, DEFAULT_CSV_LIMIT) : pageLimit(query.limit, MAX_JSON_LIMIT, DEFAULT_LIMIT),
    offset: integer(query.offset, 'offset', 0, Number.MAX_SAFE_INTEGER, 0),
    cursor,
  };
}

/** A single string parameter; absent or empty is null. */
export function text(query: RawQuery, name: string): string | null {
  const value = query[name];
  if (value === undefined || value === '') return null;
  if (typeof value !== 'string') throw validationError(`${name} must be given once, as a string.`, name);
  if (value.length > MAX_TEXT) throw validationError(`${name} is too long (limit ${MAX_TEXT} characters).`, name);
  return value;
}

/**
 * A bound as DateTime text. Strict ISO 8601 (naive = UTC) rather than Date's lenient parser,
 * which reads "7" as a year. Microseconds are kept: events are shown with six decimals, so a
 * bound written with them compares at that precision.
 */
function date(query: RawQuery, name: string, now: Date): string | null {
  const value = text(query, name);
  if (value === null) return null;
  const relative = parseRelativeDate(value, now);
  const literal = relative ? { ms: relative.getTime(), micros: 0 } : parseLiteral(value);
  const year = literal ? new Date(literal.ms).getUTCFullYear() : 0;
  // Years outside 1..9999 do not fit a SQL TIMESTAMP.
  if (!literal || year < 1 || year > 9999) {
    throw validationError(`${name} must be an ISO 8601 date-time or a relative date such as -7d or -24h.`, name);
  }
  return timestampText(new Date(literal.ms), literal.micros);
}

function uuidParam(query: RawQuery, name: string): string | null {
  const value = text(query, name);
  if (value === null) return null;
  const uuid = canonicalUuid(value);
  if (!uuid) throw validationError(`${name} must be a person's integer id or UUID.`, name);
  return uuid;
}

function json(query: RawQuery, name: string): unknown {
  const value = text(query, name);
  if (value === null) return null;
  try {
    return JSON.parse(value);
  } catch {
    throw validationError(`${name} must be valid JSON.`, name);
  }
}

/** A JSON list of HogQL expressions; an empty list counts as absent. */
function expressions(query: RawQuery, name: string): string[] | null {
  const list = jsonStringList(text(query, name) ?? undefined, name);
  return list === null || list.length === 0 ? null : list;
}
