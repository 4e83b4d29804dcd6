/**
 * The embedded store's materialized properties (store/duckdb/materialized.ts): the printer reads a
 * hot key's column for exactly `properties.<key>` on events; the column holds what JSON extraction
 * reads, for random property values (numbers with exponents, booleans, nested objects, unicode,
 * '', null, missing), in events written now and in events of a file made before the columns existed.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import { DuckDBInstance } from '@duckdb/node-api';
import fc from 'fast-check';
import { DuckDbDialect } from '../../../src/hogql/duckdb/dialect.js';
import { EventsScope, compileFilters } from '../../../src/hogql/compile.js';
import type { IrSelect } from '../../../src/hogql/ir.js';
import { parseSelect } from '../../../src/hogql/parser.js';
import { StatementCompiler } from '../../../src/hogql/statement.js';
import { HOT_KEY_FILTER_COLUMNS, HOT_KEY_FILTERS, HOT_KEYS_STATEMENT, JSON_PATH_STATEMENTS } from '../../helpers/materialized-cases.js';
import { DuckDbEventStore } from '../../../src/store/duckdb/event-store.js';
import { materializedColumns } from '../../../src/store/duckdb/materialized.js';
import { duckMigrations } from '../../../src/store/duckdb/schema.js';
import { MATERIALIZED_PROPERTIES } from '../../../src/store/materialized-keys.js';
import type { StoredEvent } from '../../../src/store/types.js';

const ctx = { propertyType: () => null, now: new Date('2026-06-01T12:00:00Z') };
const compile = (text: string) => new StatementCompiler(ctx, 1).compile(parseSelect(text)).query as IrSelect;
const withColumns = new DuckDbDialect({ materialized: materializedColumns() });
const without = new DuckDbDialect();

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-duck-mat-'));
  dirs.push(dir);
  return dir;
}

function event(properties: Record<string, unknown>): StoredEvent {
  return {
    project_id: 1,
    uuid: randomUUID(),
    event: '$pageview',
    distinct_id: 'd',
    person_id: null,
    timestamp: new Date('2026-05-30T00:00:00Z'),
    created_at: new Date('2026-05-30T00:00:00Z'),
    // As ingestion writes it (ingestion/plan/row.ts).
    properties_json: JSON.stringify(properties),
    elements_chain: '',
    groups: ['', '', '', '', ''],
  };
}

/** Values of every JSON kind, some where DuckDB's rendering differs from JSON.stringify's (`1e21`). */
const value: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('', 'é', '日本語', '😀', 'a"b\\c\n', 'true', '42', 'null'),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(1e21, -1.5e-7, 2 ** 70, 12345678901234567890, 5e-324, -0),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(fc.integer(), fc.string(), fc.double({ noNaN: true, noDefaultInfinity: true })), { maxLength: 3 }),
  fc.object({ maxDepth: 2 }),
);
const properties = fc.dictionary(fc.constantFrom(...MATERIALIZED_PROPERTIES, 'other', '$browser_version'), value);

/** The rows where a key's column differs from the JSON extraction of it (none expected). */
async function mismatches(store: DuckDbEventStore): Promise<Record<string, unknown>[]> {
  const differs = MATERIALIZED_PROPERTIES.map((key) => `"mat_${key}" IS DISTINCT FROM json_extract_string(properties, '/${key}')`).join(' OR ');
  return store.query({ sql: `SELECT properties::VARCHAR AS properties FROM events WHERE ${differs}`, params: [] });
}

describe('materialized properties in the DuckDB printer', () => {
  it('reads the column for a top-level hot key of events, in select, where and group by', () => {
    const { sql } = withColumns.print(compile(HOT_KEYS_STATEMENT));
    for (const column of ['mat_$browser', 'mat_$os', 'mat_$session_id']) assert.ok(sql.includes(`"${column}"`), `${column} in ${sql}`);
    assert.doesNotMatch(sql, /json_extract/);
  });

  it('reads the column for property filters of the events API and insights', () => {
    const where = compileFilters(HOT_KEY_FILTERS, new EventsScope(ctx, 1));
    assert.ok(where);
    const { sql } = withColumns.print({ ...compile('select count() from events'), where });
    for (const column of HOT_KEY_FILTER_COLUMNS) assert.ok(sql.includes(`"${column}"`), `${column} in ${sql}`);
    assert.doesNotMatch(sql, /json_extract/);
  });

  it('keeps the JSON for nested paths, other keys, person properties and JSON functions, and without the columns', () => {
    for (const text of JSON_PATH_STATEMENTS) {
      const { sql } = withColumns.print(compile(text));
      assert.doesNotMatch(sql, /mat_/, text);
      assert.match(sql, /json_extract/, text);
    }
    assert.doesNotMatch(without.print(compile('select properties.$browser from events')).sql, /mat_/);
  });
});

describe('materialized columns in the DuckDB event store', () => {
  it('hold exactly what JSON extraction reads, for random property values', async () => {
    const store = await DuckDbEventStore.open(tempDir());
    try {
      const samples = fc.sample(properties, { numRuns: 3_000, seed: 2611 });
      // The edge cases by name too, whatever the sample drew.
      samples.push({}, { $browser: '' }, { $browser: null }, { $browser: 1e21 }, { $os: { a: [1, 'é'] } }, { $lib: true }, { $host: 2 ** 70 });
      await store.importEvents(samples.map(event));
      assert.equal(await store.countEvents(), samples.length);
      assert.deepEqual(await mismatches(store), []);
      // And through HogQL: the column-reading print answers as the JSON-reading one, row by row.
      const select = `select ${MATERIALIZED_PROPERTIES.map((key) => `properties.${key}`).join(', ')} from events order by uuid`;
      const read = async (dialect: DuckDbDialect) => store.query(dialect.print(compile(select)));
      const [columns, json] = [await read(withColumns), await read(without)];
      assert.equal(columns.length, samples.length);
      assert.deepEqual(columns, json);
      const nonString = await store.query({ sql: `SELECT count(*) AS n FROM events WHERE "mat_$browser" = '1e21'`, params: [] });
      assert.ok(Number(nonString[0].n) >= 1, 'a number is kept as DuckDB renders its JSON');
    } finally {
      await store.close();
    }
  });

  it('are added and filled when a file made before them is opened', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'events.duckdb');
    const samples = fc.sample(properties, { numRuns: 500, seed: 26 });
    // A file at schema version 3, written as the store wrote events then.
    const instance = await DuckDBInstance.create(file);
    const c = await instance.connect();
    await c.run('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMP NOT NULL)');
    for (const migration of duckMigrations.filter((m) => m.version <= 3)) {
      await c.run(migration.sql);
      await c.run('INSERT INTO schema_migrations VALUES ($1, now())', [migration.version]);
    }
    for (const [i, props] of samples.entries()) {
      await c.run(
        `INSERT INTO events VALUES (1, $1, '$pageview', 'd', NULL, TIMESTAMP '2026-05-30', TIMESTAMP '2026-05-30', $2, '', '', '', '', '', '', $3)`,
        [randomUUID(), JSON.stringify(props), i],
      );
    }
    c.closeSync();
    instance.closeSync();

    const store = await DuckDbEventStore.open(dir);
    try {
      assert.equal(await store.countEvents(), samples.length);
      assert.deepEqual(await mismatches(store), []);
      // The rows keep their order and their other columns.
      const seqs = await store.query({ sql: 'SELECT flush_seq FROM events', params: [] });
      assert.deepEqual(seqs.map((row) => Number(row.flush_seq)), samples.map((_, i) => i));
      const columns = await store.query({ sql: "SELECT column_name, is_nullable FROM information_schema.columns WHERE table_name = 'events' AND column_name = 'uuid'", params: [] });
      assert.deepEqual(columns, [{ column_name: 'uuid', is_nullable: 'NO' }]);
      // New events after the migration get their columns too.
      await store.importEvents([event({ $browser: 'Firefox', $current_url: 'https://x.test/ü' })]);
      const fresh = await store.query({ sql: `SELECT "mat_$browser" AS b, "mat_$current_url" AS u FROM events WHERE "mat_$browser" = 'Firefox'`, params: [] });
      assert.deepEqual(fresh, [{ b: 'Firefox', u: 'https://x.test/ü' }]);
    } finally {
      await store.close();
    }
  });
});
