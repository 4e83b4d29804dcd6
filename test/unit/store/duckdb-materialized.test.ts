/**
 * The embedded store's materialized properties (store/duckdb/materialized.ts): the printer reads a
 * hot key's column for exactly `properties.<key>` on events; the column holds what JSON extraction
 * reads, for random property values (numbers with exponents, booleans, nested objects, unicode,
 * '', null, missing), in events written now and in events of a file made before the columns existed,
 * which the store back-fills in the background (resuming after a restart) while queries read the
 * JSON until every row has its columns.
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
import { fillRows, materializedColumns } from '../../../src/store/duckdb/materialized.js';
import { ThreadedEventStore } from '../../../src/store/duckdb/threaded.js';
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
async function mismatches(store: { query: DuckDbEventStore['query'] }): Promise<Record<string, unknown>[]> {
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
      assert.equal(store.materializedReady, true, 'a new folder has nothing to fill');
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

});

/** A file at schema version 3 (before the columns), with `samples` written as the store wrote events then. */
async function oldFile(samples: Record<string, unknown>[]): Promise<string> {
  const dir = tempDir();
  const instance = await DuckDBInstance.create(path.join(dir, 'events.duckdb'));
  const c = await instance.connect();
  await c.run('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMP NOT NULL)');
  for (const migration of duckMigrations.filter((m) => m.version <= 3)) {
    await c.run(migration.sql);
    await c.run('INSERT INTO schema_migrations VALUES ($1, now())', [migration.version]);
  }
  await c.run('CREATE TEMP TABLE old_events (properties VARCHAR, seq BIGINT)');
  const appender = await c.createAppender('old_events');
  for (const [i, props] of samples.entries()) {
    appender.appendVarchar(JSON.stringify(props));
    appender.appendBigInt(BigInt(i));
    appender.endRow();
  }
  appender.closeSync();
  await c.run(`INSERT INTO events SELECT 1, uuid(), '$pageview', 'd', NULL, TIMESTAMP '2026-05-30', TIMESTAMP '2026-05-30', properties, '', '', '', '', '', '', seq FROM old_events ORDER BY seq`);
  c.closeSync();
  instance.closeSync();
  return dir;
}

async function until(what: string, ready: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The old events' hot keys (events written by the test have another distinct id). */
const HOT_SELECT = `select ${MATERIALIZED_PROPERTIES.map((key) => `properties.${key}`).join(', ')} from events where distinct_id = 'd' order by uuid`;

describe('events stored before the columns existed', () => {
  const samples = fc.sample(properties, { numRuns: 10_000, seed: 26 });

  it('are back-filled in the background; queries read JSON until every row has its columns', async () => {
    const dir = await oldFile(samples);
    const store = await DuckDbEventStore.open(dir);
    try {
      assert.equal(store.materializedReady, false, 'not ready at open');
      assert.doesNotMatch(store.dialect.print(compile(HOT_SELECT)).sql, /mat_/);
      const before = await store.query(store.dialect.print(compile(HOT_SELECT)));
      // Writes go on meanwhile and get their columns at once.
      await store.importEvents([{ ...event({ $browser: 'Firefox', $current_url: 'https://x.test/ü' }), distinct_id: 'new' }]);
      await until('the back-fill', () => store.materializedReady);
      assert.match(store.dialect.print(compile(HOT_SELECT)).sql, /"mat_\$browser"/);
      assert.equal(await store.countEvents(), samples.length + 1);
      assert.deepEqual(await mismatches(store), []);
      const unfilled = await store.query({ sql: 'SELECT count(*) AS n FROM events WHERE mat_filled IS NOT TRUE', params: [] });
      assert.equal(Number(unfilled[0].n), 0);
      // The same answers through the columns as through the JSON before.
      assert.equal(before.length, samples.length);
      assert.deepEqual(await store.query(store.dialect.print(compile(HOT_SELECT))), before);
      const fresh = await store.query({ sql: `SELECT "mat_$browser" AS b, "mat_$current_url" AS u FROM events WHERE distinct_id = 'new'`, params: [] });
      assert.deepEqual(fresh, [{ b: 'Firefox', u: 'https://x.test/ü' }]);
      const columns = await store.query({ sql: "SELECT column_name, is_nullable FROM information_schema.columns WHERE table_name = 'events' AND column_name = 'uuid'", params: [] });
      assert.deepEqual(columns, [{ column_name: 'uuid', is_nullable: 'NO' }]);
    } finally {
      await store.close();
    }
    // The state is kept: the next opening reads the columns at once.
    const reopened = await DuckDbEventStore.open(dir);
    try {
      assert.equal(reopened.materializedReady, true);
    } finally {
      await reopened.close();
    }
  });

  it('resume after a restart from the rows already filled', async () => {
    const dir = await oldFile(samples);
    // Part of the rows filled by an earlier run (a middle range, as chunks leave it).
    const instance = await DuckDBInstance.create(path.join(dir, 'events.duckdb'));
    const c = await instance.connect();
    for (const migration of duckMigrations.filter((m) => m.version > 3)) await c.run(migration.sql);
    await c.run('INSERT INTO schema_migrations SELECT version, now() FROM (VALUES (4)) v(version)');
    await c.run(fillRows(3_000, 2_500));
    c.closeSync();
    instance.closeSync();

    // A store closed at once stops after its chunk under way.
    const first = await DuckDbEventStore.open(dir);
    await first.close();
    const store = await DuckDbEventStore.open(dir);
    try {
      await until('the back-fill', () => store.materializedReady);
      assert.equal(await store.countEvents(), samples.length);
      assert.deepEqual(await mismatches(store), []);
    } finally {
      await store.close();
    }
  });

  it('on the store thread: the dialect follows the back-fill', async () => {
    const dir = await oldFile(samples.slice(0, 5_000));
    const store = await ThreadedEventStore.open(dir, { idleCloseMs: 200 });
    try {
      assert.doesNotMatch(store.dialect.print(compile(HOT_SELECT)).sql, /mat_/);
      const before = await store.query(store.dialect.print(compile(HOT_SELECT)));
      // Kept open while it fills, though idle for longer than idleCloseMs (the first poll is after 2 s).
      await new Promise((resolve) => setTimeout(resolve, 700));
      assert.equal(store.isOpen, true);
      assert.equal(store.dialect.readsMaterialized, false);
      await until('the dialect', () => store.dialect.readsMaterialized);
      assert.deepEqual(await store.query(store.dialect.print(compile(HOT_SELECT))), before);
    } finally {
      await store.close();
    }
  });
});
