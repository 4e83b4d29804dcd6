/** DuckDB's implementation of the dialect seam (the embedded event store speaks it). */
import type { PrintOptions, PrintedQuery, SqlDialect } from '../dialect.js';
import type { IrQuery } from '../ir.js';
import type { HogQLType } from '../types.js';
import { printQuery } from './printer.js';
import { decodeValue } from './values.js';

export class DuckDbDialect implements SqlDialect {
  readonly name = 'duckdb';

  print(query: IrQuery, options?: PrintOptions): PrintedQuery {
    return printQuery(query, options);
  }

  decode(value: unknown, type: HogQLType, item?: HogQLType): unknown {
    return decodeValue(value, type, item);
  }
}
