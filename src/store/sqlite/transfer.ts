/** Whole-table reads and writes of the SQLite metadata store (types.ts MetaTransfer). */
import type { MetaTransfer } from '../types.js';
import type { Sqlite } from './database.js';
import { neutralRow, pageStatement, TRANSFER_TABLES, transferTable, type ColumnKind } from '../transfer-tables.js';

/** An archive value as SQLite stores it: booleans as 0/1, JSON as text. */
function storedValue(kind: ColumnKind, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (kind === 'bool') return value ? 1 : 0;
  if (kind === 'json') return JSON.stringify(value);
  return value;
}

/** persons keeps its integer id in person_ids (persons is keyed by uuid WITHOUT ROWID). */
const PERSONS_SELECT = {
  columns: 'p.*, i.id AS id',
  from: 'persons p LEFT JOIN person_ids i ON i.project_id = p.project_id AND i.uuid = p.uuid',
  qualify: (column: string) => `p.${column}`,
};

export class SqliteTransfer implements MetaTransfer {
  constructor(private readonly db: Sqlite) {}

  async *readTable(name: string, pageRows = 5_000): AsyncIterable<Record<string, unknown>[]> {
    const table = transferTable(name);
    const select = table.name === 'persons' ? PERSONS_SELECT : { columns: '*', from: table.name };
    let after: Record<string, unknown> | null = null;
    for (;;) {
      const { sql, params } = pageStatement(table, select, after, pageRows, () => '?');
      const rows = this.db.prepare(sql).all(...params) as Record<string, unknown>[];
      if (rows.length === 0) return;
      after = rows[rows.length - 1];
      yield rows.map((row) => neutralRow(table, row));
      if (rows.length < pageRows) return;
    }
  }

  async writeRows(name: string, rows: Record<string, unknown>[]): Promise<void> {
    const table = transferTable(name);
    const columns = Object.keys(table.columns).filter((column) => !(table.name === 'persons' && column === 'id'));
    const insert = this.db.prepare(`INSERT INTO ${table.name} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
    // After the person's row: its trigger indexes the person for the search from it.
    const personId = this.db.prepare('INSERT INTO person_ids (id, project_id, uuid) VALUES (?, ?, ?)');
    this.db.transaction(() => {
      for (const row of rows) {
        insert.run(...columns.map((column) => storedValue(table.columns[column], row[column])));
        if (table.name === 'persons') personId.run(row.id, row.project_id, row.uuid);
      }
    })();
  }

  async rowCounts(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const table of TRANSFER_TABLES) counts[table.name] = (this.db.prepare(`SELECT count(*) AS n FROM ${table.name}`).get() as { n: number }).n;
    return counts;
  }

  /** AUTOINCREMENT already continues after the largest id inserted. */
  async finishImport(): Promise<void> {}
}

