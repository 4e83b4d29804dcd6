/** ClickHouse's implementation of the dialect seam (the distributed event store speaks it). */
import type { PrintOptions, PrintedQuery, SqlDialect } from '../dialect.js';
import type { IrQuery } from '../ir.js';
import type { HogQLType } from '../types.js';
import { printQuery, type ClickHouseTables } from './printer.js';
import { decodeValue } from './values.js';

export class ClickHouseDialect implements SqlDialect {
  readonly name = 'clickhouse';
  // Each as-of join took 110–150 ms at 10M events where a window pass took ~80 (docs/benchmarks.md).
  readonly prefersAsOfJoins = false;

  constructor(private readonly tables: ClickHouseTables) {}

  // The time span (PrintOptions) is a DuckDB speed-up; ClickHouse converts time zones natively.
  print(query: IrQuery, _options?: PrintOptions): PrintedQuery {
    return printQuery(query, this.tables);
  }

  decode(value: unknown, type: HogQLType, item?: HogQLType): unknown {
    return decodeValue(value, type, item);
  }
}
