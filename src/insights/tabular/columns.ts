/**
 * Rows of a tabular query (HogQLQuery, EventsQuery) as PostHog's responses give them: each row
 * an array in column order, date-times as ISO text with the project zone's offset, and the
 * ClickHouse type name of each column, which scripts read.
 */
import { type HogQLType, type ir, timestampMs } from '../../hogql/index.js';
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
