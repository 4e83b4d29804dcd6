/**
 * The seam between the query tree and an event store's SQL. A dialect prints IR (ir.ts) as one
 * parameterised statement and decodes the values its engine returns. DuckDB's is the only one
 * today (duckdb/); another engine plugs in by implementing this interface, and nothing above
 * (routes, services, insights) names the engine: the event store says which dialect it speaks.
 */
import { type IrQuery, outputColumns } from './ir.js';
import type { HogQLType } from './types.js';

export interface PrintOptions {
  /**
   * Every timestamp the statement reads lies in this span (its WHERE says so): calendar
   * functions may then convert to wall-clock time with the offsets valid in the span. Rows
   * outside it must still come out right, only slower.
   */
  timeSpan?: { from: Date; to: Date };
}

export interface PrintedQuery {
  sql: string;
  params: unknown[];
}

/**
 * Result values in a dialect-neutral form: Integer a number (decimal text beyond 2^53), Float a
 * number, Boolean, String and UUID as such, DateTime `YYYY-MM-DD HH:MM:SS.ffffff` (UTC), Date
 * `YYYY-MM-DD`, Array a list of decoded items, anything else as the engine gave it.
 */
export type RowValue = unknown;

export interface SqlDialect {
  readonly name: string;
  /**
   * Whether an as-of join beats window passes over the same rows: ordered funnels chain their
   * steps by whichever is cheaper (insights/funnels/attempts.ts).
   */
  readonly prefersAsOfJoins: boolean;
  print(query: IrQuery, options?: PrintOptions): PrintedQuery;
  decode(value: unknown, type: HogQLType, item?: HogQLType): RowValue;
}

/** Rows as a store returned them for `query`, each column decoded by its IR type. */
export function decodeRows(dialect: SqlDialect, query: IrQuery, rows: Record<string, unknown>[]): Record<string, unknown>[] {
  const columns = outputColumns(query).map((c) => ({ name: c.name, type: c.expr.type, item: 'item' in c.expr ? c.expr.item : undefined }));
  return rows.map((row) => {
    const decoded: Record<string, unknown> = {};
    for (const c of columns) decoded[c.name] = dialect.decode(row[c.name], c.type, c.item);
    return decoded;
  });
}
