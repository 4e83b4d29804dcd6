/**
 * Rows of a tabular query (HogQLQuery, EventsQuery) as PostHog's responses give them: each row
 * an array in column order, date-times as ISO text with the project zone's offset, and the
 * ClickHouse type name of each column, which scripts read.
 */
import { type HogQLType, type ir, parseLiteral, timestampMs, timestampText } from '../../hogql/index.js';
import { validationError } from '../../kernel/errors.js';
import { parseRelativeDate } from '../../util/relative-date.js';
import { isoWithOffset } from '../time/index.js';
import type { Row } from '../types.js';

const CLICKHOUSE_TYPE: Record<HogQLType, string> = {
  String: 'String',
  Integer: 'Int64',
  Float: 'Float64',
  Boolean: 'Bool',
  DateTime: "DateTime64(6, 'UTC')",
  Date: 'Date',
  UUID: 'UUID',
  Null: 'Nullable(Nothing)',
  Interval: 'IntervalSecond',
  Array: 'Array',
  Tuple: 'Tuple',
  Any: 'String',
};

/** The ClickHouse type name PostHog would report for an output column. */
export function clickHouseType(expr: ir.IrExpr): string {
  if (expr.kind === 'call' && expr.fn === 'count') return 'UInt64';
  if (expr.type === 'Array') return `Array(${CLICKHOUSE_TYPE[('item' in expr && expr.item) || 'Any']})`;
  return CLICKHOUSE_TYPE[expr.type];
}

/** A decoded DateTime (`YYYY-MM-DD HH:MM:SS.ffffff`, UTC) as ISO text in the project's zone. */
export function dateTimeText(value: string, timeZone: string): string {
  const micros = Number(value.slice(23, 26) || 0);
  return isoWithOffset(timestampMs(value), timeZone, micros);
}

/** Decoded rows (objects keyed by IR column name) as arrays in column order. */
export function rowArrays(rows: Row[], columns: readonly ir.IrSelectColumn[], timeZone: string): unknown[][] {
  return rows.map((row) =>
    columns.map((c) => {
      const value = row[c.name];
      if (c.expr.type === 'DateTime' && typeof value === 'string') return dateTimeText(value, timeZone);
      return value;
    }),
  );
}

/** PostHog's default display-name properties: the first present one names a person. */
export const DISPLAY_NAME_KEYS = ['email', 'Email', '$email', 'name', 'Name', 'username', 'Username', 'UserName'];

/** A person's display name from its properties, else `fallback` (a distinct id). */
export function displayName(properties: Record<string, unknown>, fallback: string): string {
  const name = DISPLAY_NAME_KEYS.map((key) => properties[key]).find((v) => v !== undefined && v !== null && v !== '');
  return name === undefined ? fallback : String(name);
}

/** A JSON object column's text as an object ({} for anything else). */
export function parseObject(json: unknown): Record<string, unknown> {
  if (typeof json !== 'string') return {};
  try {
    const value: unknown = JSON.parse(json);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** `limit` / `offset` of a node: a non-negative integer, capped at `max`. */
export function countField(value: unknown, attr: string, fallback: number, max: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw validationError(`${attr} must be a non-negative integer.`, attr, 'invalid');
  return Math.min(value, max);
}

/** A relative (`-24h`, `-7d`) or ISO date as DateTime text (naive ISO = UTC, as the events API reads it). */
export function dateBound(value: string, attr: string, now: Date): string {
  const relative = parseRelativeDate(value, now);
  const literal = relative ? { ms: relative.getTime(), micros: 0 } : parseLiteral(value);
  const year = literal ? new Date(literal.ms).getUTCFullYear() : 0;
  if (!literal || year < 1 || year > 9999) throw validationError(`${attr} must be an ISO 8601 date-time, a relative date such as -24h, or "all".`, attr, 'invalid_date');
  return timestampText(new Date(literal.ms), literal.micros);
}
