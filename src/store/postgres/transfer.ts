/** Whole-table reads and writes of the PostgreSQL metadata store (types.ts MetaTransfer). */
import type { MetaTransfer } from '../types.js';
import { rows as selectRows, transaction, type PgPool } from './database.js';
import { neutralRow, pageStatement, TRANSFER_TABLES, transferTable, type ColumnKind } from '../transfer-tables.js';

/** An archive value as a parameter: JSON as its text (node-pg would send an array as a PostgreSQL array). */
function parameter(kind: ColumnKind, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  return kind === 'json' ? JSON.stringify(value) : value;
}

/** Rows per INSERT statement (PostgreSQL takes at most 65,535 parameters). */
const ROWS_PER_INSERT = 500;

export class PostgresTransfer implements MetaTransfer {
  constructor(
    private readonly pool: PgPool,
    /** This node's name: imported person deletions are finished by the node that imported them. */
    private readonly node: string,
  ) {}

  async *readTable(name: string, pageRows = 5_000): AsyncIterable<Record<string, unknown>[]> {
    const table = transferTable(name);
    // The keys' own collation for both the comparison and the order: each page is then a range
    // scan of the primary key's index.
    const select = { columns: '*', from: table.name };
    let after: Record<string, unknown> | null = null;
    for (;;) {
      const { sql, params } = pageStatement(table, select, after, pageRows, (n) => `$${n}`);
      const rows = await selectRows(this.pool, sql, params);
      if (rows.length === 0) return;
      after = rows[rows.length - 1];
      yield rows.map((row) => neutralRow(table, row));
      if (rows.length < pageRows) return;
    }
  }

  async writeRows(name: string, rows: Record<string, unknown>[]): Promise<void> {
    const table = transferTable(name);
    const columns = Object.keys(table.columns);
    const withNode = table.name === 'person_deletions';
    const names = withNode ? [...columns, 'node'] : columns;
    const casts = names.map((column) => (table.columns[column] === 'json' ? '::json' : ''));
    await transaction(this.pool, async (client) => {
      for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
        const params: unknown[] = [];
        const tuples: string[] = [];
        for (const row of rows.slice(start, start + ROWS_PER_INSERT)) {
          const values = columns.map((column) => parameter(table.columns[column], row[column]));
          if (withNode) values.push(this.node);
          tuples.push(`(${values.map((value, i) => `$${params.push(value)}${casts[i]}`).join(', ')})`);
        }
        await client.query(`INSERT INTO ${table.name} (${names.join(', ')}) VALUES ${tuples.join(', ')}`, params);
      }
    });
  }

  async rowCounts(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const table of TRANSFER_TABLES) counts[table.name] = Number((await selectRows<{ n: string }>(this.pool, `SELECT count(*) AS n FROM ${table.name}`))[0].n);
    return counts;
  }

  /** Explicit ids do not advance a sequence: set each to the largest imported id. */
  async finishImport(): Promise<void> {
    for (const table of TRANSFER_TABLES) {
      if (!table.serial) continue;
      await this.pool.query(
        `SELECT setval(pg_get_serial_sequence($1, $2), coalesce((SELECT max(${table.serial}) FROM ${table.name}), 0) + 1, false)`,
        [table.name, table.serial],
      );
    }
  }
}
