/** DuckDB's implementation of the dialect seam (the embedded event store speaks it). */
import type { PrintOptions, PrintedQuery, SqlDialect } from '../dialect.js';
import type { IrQuery } from '../ir.js';
import type { HogQLType } from '../types.js';
import { printQuery, type DuckDbTables } from './printer.js';
import { decodeValue } from './values.js';

export class DuckDbDialect implements SqlDialect {
  readonly name = 'duckdb';
  // Its as-of join sorts each side once; it took a quarter off the dashboard's funnel (docs/benchmarks.md).
  readonly prefersAsOfJoins = true;

  constructor(private tables: DuckDbTables = {}) {}

  /** The materialized columns print from now on (the store calls it once they are filled). */
  useMaterialized(columns: ReadonlyMap<string, string>): void {
    this.tables = { ...this.tables, materialized: columns };
  }

  get readsMaterialized(): boolean {
    return (this.tables.materialized?.size ?? 0) > 0;
  }

  print(query: IrQuery, options?: PrintOptions): PrintedQuery {
    return printQuery(query, options, this.tables);
  }

  decode(value: unknown, type: HogQLType, item?: HogQLType): unknown {
    return decodeValue(value, type, item);
  }
}
