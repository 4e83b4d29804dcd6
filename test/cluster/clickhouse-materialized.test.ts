/**
 * Materialized hot properties (store/clickhouse/materialized.ts) on the local cluster's two 18.16
 * shards: `properties.$browser` (a column of its own) answers exactly as `properties.plain_browser`
 * (read from the JSON) holding the same values, for reads, filters and breakdowns, NULL and ''
 * included; where the JSON path is wrong (a nested object with the same key written first) the
 * column is right. `system.query_log` shows a filter on it reads a small part of the bytes the
 * JSON filter reads. Rows written before migration 3 answer as before, and a merge writes their
 * column. Through the service, the same captured events answer the same in the embedded mode.
 * Runs only when the cluster tests are on (test/helpers/cluster.ts).
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { parseSelect } from '../../src/hogql/parser.js';
import { StatementCompiler } from '../../src/hogql/statement.js';
import { ClickHouseEventStore } from '../../src/store/clickhouse/event-store.js';
import { clickhouseMigrations, migrationsTable } from '../../src/store/clickhouse/schema.js';
import { encodeFlushRecord } from '../../src/store/flush-record.js';
import type { EventSlice, IngestChanges, StoredEvent } from '../../src/store/types.js';
import { expectOk } from '../helpers/api-fixtures.js';
import { clusterAvailability } from '../helpers/cluster.js';
import { startServer, type TestServer } from '../helpers/server.js';

const cluster = clusterAvailability();
const skip = cluster.enabled ? false : cluster.reason;
const MISSING = Symbol('missing');

const settings = () => {
  if (!cluster.enabled) throw new Error('no cluster');
  return { urls: cluster.settings.clickhouseUrls, cluster: cluster.settings.clickhouseCluster, database: `sightline_test_${randomBytes(6).toString('hex')}` };
};

async function sql(url: string, text: string): Promise<string> {
  const response = await fetch(url, { method: 'POST', body: text });
  const body = await response.text();
  assert.equal(response.status, 200, body);
  return body.trim();
}

const noChanges = (flushSeq: number): IngestChanges => ({
  flushSeq,
  upsertPersons: [],
  deletePersons: [],
  reassignDistinctIds: [],
  setDistinctIds: [],
  newGroupTypes: [],
  upsertGroups: [],
  propertyDefinitions: [],
  eventDefinitions: [],
  eventProperties: [],
  eventUuids: [],
});

function storedEvent(i: number, properties: Record<string, unknown>): StoredEvent {
  return {
    project_id: 1,
    uuid: randomUUID(),
    event: 'e',
    distinct_id: `user-${i % 40}`,
    person_id: null,
    timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000),
    created_at: new Date(),
    properties_json: JSON.stringify(properties),
    elements_chain: '',
    groups: ['', '', '', '', ''],
  };
}

const sliceOf = (seq: number, list: StoredEvent[]): EventSlice => ({
  flushes: [encodeFlushRecord({ changes: noChanges(seq), events: list }, (n) => Buffer.alloc(n))],
  from: 0,
  to: list.length,
  after: seq - 1,
});

/** Property values of every JSON kind; a key that holds MISSING is left out. */
const value = fc.oneof(
  fc.constantFrom('Chrome', 'Firefox', '', 'null', 'ends in \\', 'a "quoted" b', 'tab\there', 'é ü 漢字', MISSING, null),
  fc.string({ unit: fc.constantFrom('a', 'b', '"', '\\', '/', '\n', '\u0001', 'é', '😀', ' ') , maxLength: 6 }),
  fc.integer({ min: -1e6, max: 1e6 }),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e15, max: 1e15 }),
  fc.boolean(),
  fc.array(fc.integer({ min: -9, max: 9 }), { maxLength: 3 }),
  // Not holding a string that ends in a backslash: the JSON path cannot read such an object on 18.16 (a documented gap).
  fc.dictionary(fc.constantFrom('a', 'b'), fc.oneof(fc.integer(), fc.string({ unit: fc.constantFrom('x', '"', ' ', 'é'), maxLength: 3 })), { maxKeys: 2 }),
);

/** What `properties.<key>` must read: a string as is, other values as JSON text, NULL when missing or null. */
const expectedText = (v: unknown) => (v === MISSING || v === null ? null : typeof v === 'string' ? v : JSON.stringify(v));

/** Properties holding the same value under a materialized key and a plain one. */
function pairOf(browser: unknown, os: unknown, pad: string): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  if (browser !== MISSING) properties.$browser = browser;
  if (os !== MISSING) properties.$os = os;
  if (browser !== MISSING) properties.plain_browser = browser;
  if (os !== MISSING) properties.plain_os = os;
  properties.pad = pad;
  return properties;
}

describe('materialized properties in the ClickHouse event store', { skip }, () => {
  const databases: string[] = [];
  let store: ClickHouseEventStore;
  let s: ReturnType<typeof settings>;
  const ctx = { propertyType: () => null, now: new Date('2026-06-01T00:00:00Z') };
  const printed = (text: string) => store.dialect.print(new StatementCompiler(ctx, 1).compile(parseSelect(text)).query).sql;
  const hogql = async (text: string) => (await store.query({ sql: printed(text), params: [] })).map((row) => Object.values(row));
  /** uuid → the generated values of $browser and $os. */
  const generatedBy = new Map<string, [unknown, unknown]>();

  before(async () => {
    if (!cluster.enabled) return;
    s = settings();
    databases.push(s.database);
    store = await ClickHouseEventStore.open({ ...s, node: 'n1', queryTimeoutMs: 30_000 });
    const generated = fc.sample(fc.tuple(value, value), { numRuns: 1500, seed: 27 });
    // ~1 KB of other properties per event, so that reading them shows in the bytes read.
    const list = generated.map(([browser, os], i) => storedEvent(i, pairOf(browser, os, randomBytes(512).toString('hex'))));
    list.forEach((e, i) => generatedBy.set(e.uuid, generated[i]));
    // The JSON path's pitfall: visitParam reads the first "$browser": at any depth.
    list.push(storedEvent(list.length, { $set: { $browser: 'nested' }, $browser: 'top', plain: 1 }));
    list.push(storedEvent(list.length, { $set: { $browser: 'nested only' } }));
    await store.write(sliceOf(1, list));
  });
  after(async () => {
    await store?.close();
    if (!cluster.enabled) return;
    for (const name of databases) await sql(cluster.settings.clickhouseUrls[0], `DROP DATABASE IF EXISTS ${name} ON CLUSTER ${cluster.settings.clickhouseCluster}`);
  });

  test('the printer reads the column for a top-level hot key, the JSON otherwise', () => {
    assert.match(printed('select properties.$browser from events'), /`mat_\$browser`/);
    assert.doesNotMatch(printed('select properties.$browser from events'), /visitParam/);
    assert.match(printed('select properties.$session_id, $session_id from events'), /`mat_\$session_id`.*`mat_\$session_id`/);
    for (const text of ['select properties.$browser.a from events', 'select properties.plain_browser from events', 'select person.properties.$browser from events']) {
      assert.doesNotMatch(printed(text), /mat_/, text);
    }
  });

  test('a read of a materialized key answers as the JSON read of the same values (NULL and empty text kept apart)', async () => {
    const rows = await hogql('select uuid, properties.$browser, properties.plain_browser, properties.$os, properties.plain_os from events where isNull(properties.$set) order by uuid');
    assert.equal(rows.length, 1500);
    let nulls = 0;
    let empties = 0;
    for (const [uuid, browser, plainBrowser, os, plainOs] of rows) {
      const [v1, v2] = generatedBy.get(uuid as string)!;
      assert.deepEqual([browser, os], [expectedText(v1), expectedText(v2)], `${JSON.stringify(v1)} ${JSON.stringify(v2)}`);
      assert.deepEqual([browser, os], [plainBrowser, plainOs]);
      if (browser === null) nulls++;
      if (browser === '') empties++;
    }
    assert.ok(nulls > 30 && empties > 20, `both NULL (${nulls}) and '' (${empties}) occur`);
  });

  test('filters and breakdowns on a materialized key give the counts of the JSON key', async () => {
    const counts = async (key: string, condition: string) => (await hogql(`select count() from events where isNull(properties.$set) and (${condition.replaceAll('KEY', key)})`))[0][0];
    for (const condition of ["KEY = 'Chrome'", "KEY = ''", 'isNull(KEY)', 'isNotNull(KEY)', "KEY like '%a%'", "KEY ilike '%A\"%'", "KEY in ('true', 'false', '1')", "toFloat(KEY) > 10", "KEY != 'Firefox'"]) {
      assert.equal(await counts('properties.$browser', condition), await counts('properties.plain_browser', condition), condition);
    }
    const breakdown = async (key: string) => (await hogql(`select ${key} as b, count() as n from events where isNull(properties.$set) group by b order by n desc, b limit 1000`));
    const [materialized, plain] = [await breakdown('properties.$os'), await breakdown('properties.plain_os')];
    assert.ok(materialized.length > 100);
    assert.deepEqual(materialized, plain);
  });

  test('where the JSON path reads a nested key written first, the column holds the top-level value', async () => {
    const rows = await hogql("select properties.$browser as b, JSONExtractString(properties, '$browser') as json from events where isNotNull(properties.$set) order by b");
    assert.deepEqual(rows, [
      ['top', 'nested'],
      [null, 'nested only'],
    ]);
  });

  test('system.query_log: a filter on the column reads a small part of what the JSON filter reads', async () => {
    const readBytes = async (text: string): Promise<number> => {
      const id = randomUUID();
      const url = `${s.urls[0]}/?log_queries=1&query_id=${id}&database=${s.database}`;
      await sql(url, printed(text));
      // The first server's row counts what every shard read (the shards report their progress to it).
      // It is logged once the answer has been sent: wait for it.
      for (let attempt = 0; attempt < 50; attempt++) {
        await sql(s.urls[0], 'SYSTEM FLUSH LOGS');
        const bytes = await sql(s.urls[0], `SELECT read_bytes FROM system.query_log WHERE type = 2 AND query_id = '${id}'`);
        if (bytes) return Number(bytes);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`query ${id} is not in system.query_log`);
    };
    let propertiesBytes = 0;
    for (const server of s.urls) {
      propertiesBytes += Number(await sql(server, `SELECT sum(column_data_uncompressed_bytes) FROM system.parts_columns WHERE database = '${s.database}' AND table = 'events_local' AND active AND column = 'properties'`));
    }
    assert.ok(propertiesBytes > 1_500_000, `properties hold ${propertiesBytes} bytes`);
    const json = await readBytes("select count() from events where properties.plain_browser = 'Chrome'");
    const column = await readBytes("select count() from events where properties.$browser = 'Chrome'");
    assert.ok(json >= propertiesBytes, `the JSON filter reads the properties: ${json} of ${propertiesBytes}`);
    // The sorting key's columns (read by FINAL) and the column itself; reading the properties would be all of them.
    assert.ok(column * 4 < propertiesBytes, `the column filter reads ${column} bytes, the properties are ${propertiesBytes}`);
  });

  test('rows written before migration 3 answer as the JSON path did, and a merge writes their column', async () => {
    const old = settings();
    databases.push(old.database);
    const target = { database: old.database, cluster: old.cluster };
    const first = old.urls[0];
    await sql(first, `CREATE DATABASE IF NOT EXISTS ${old.database} ON CLUSTER ${old.cluster}`);
    await sql(first, migrationsTable(target));
    for (const migration of clickhouseMigrations(target).filter((m) => m.version < 3)) {
      for (const statement of migration.statements) await sql(first, typeof statement === 'string' ? statement : statement.sql);
      await sql(first, `INSERT INTO ${old.database}.schema_migrations VALUES (${migration.version}, now())`);
    }
    const rows = [{ $browser: 'Safari', b: 1 }, { $browser: '' }, { $browser: null }, {}, { $browser: 7.5 }].map((p, i) => storedEvent(i, p));
    const lines = rows.map((e) => JSON.stringify({ project_id: 1, uuid: e.uuid, event: 'e', distinct_id: e.distinct_id, stored_person_id: null, timestamp: e.timestamp.getTime() * 1000, created_at: 0, properties: e.properties_json, elements_chain: '', flush_seq: 1, node: 'old' }));
    await sql(`${first}/?insert_distributed_sync=1`, `INSERT INTO ${old.database}.events FORMAT JSONEachRow\n${lines.join('\n')}`);
    assert.deepEqual(await ClickHouseEventStore.migrate(old), [3]);
    const expected = ['Safari', '', null, null, '7.5'];
    const read = async () => JSON.parse(`[${(await sql(first, `SELECT \`mat_$browser\` AS b FROM ${old.database}.events ORDER BY timestamp FORMAT JSONEachRow`)).split('\n').join(',')}]`).map((r: { b: string | null }) => r.b);
    assert.deepEqual(await read(), expected);
    await sql(first, `OPTIMIZE TABLE ${old.database}.events_local ON CLUSTER ${old.cluster} FINAL`);
    for (const server of old.urls) {
      const stored = await sql(server, `SELECT count() FROM system.parts_columns WHERE database = '${old.database}' AND table = 'events_local' AND active AND column = 'mat_$browser'`);
      const parts = await sql(server, `SELECT count() FROM system.parts WHERE database = '${old.database}' AND table = 'events_local' AND active`);
      assert.equal(stored, parts, 'every part holds the column after the merge');
    }
    assert.deepEqual(await read(), expected);
  });
});

describe('materialized properties through the service: ClickHouse and embedded answer the same', { skip }, () => {
  let embedded: TestServer;
  let distributed: TestServer;
  let database: string;
  /** Each hot key's two most frequent text values in the batch, for the events API's filters. */
  const filters: [string, string][] = [];

  before(async () => {
    if (!cluster.enabled) return;
    const s = settings();
    database = s.database;
    const env = { SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', SIGHTLINE_GEOIP: 'false' };
    embedded = await startServer({ env: { ...env, SIGHTLINE_CLICKHOUSE_URL: '' } });
    distributed = await startServer({ env: { ...env, SIGHTLINE_CLICKHOUSE_URL: s.urls.join(','), SIGHTLINE_CLICKHOUSE_CLUSTER: s.cluster, SIGHTLINE_CLICKHOUSE_DATABASE: s.database } });
    // Values that both engines print alike (DuckDB and JavaScript write some doubles differently).
    const simple = fc.oneof(fc.constantFrom('Chrome', 'Firefox', 'Safari', '', 'null', 'a "b"', 'x\\', MISSING, null, 0, 42, 1.5, true, false));
    // The first values are text, so that the keys' property definitions say String (a number first would make the filters numeric).
    const batch = [['Chrome', 'Chrome'] as const, ...fc.sample(fc.tuple(simple, simple), { numRuns: 299, seed: 7 })].map(([browser, os], i) => ({
      uuid: randomUUID(),
      event: '$pageview',
      distinct_id: `d${i % 17}`,
      timestamp: new Date(Date.UTC(2026, 10, 1) + i * 60_000).toISOString(),
      properties: pairOf(browser, os, 'x'),
    }));
    batch.push({ uuid: randomUUID(), event: 'nested', distinct_id: 'd1', timestamp: new Date(Date.UTC(2026, 10, 2)).toISOString(), properties: { $set: { $browser: 'nested' }, $browser: 'top', pad: 'y' } as never });
    for (const [hot, plain] of [['$browser', 'plain_browser'], ['$os', 'plain_os']]) {
      const seen = new Map<string, number>();
      for (const e of batch) if (typeof e.properties[hot] === 'string') seen.set(e.properties[hot] as string, (seen.get(e.properties[hot] as string) ?? 0) + 1);
      for (const [text] of [...seen].sort((a, b) => b[1] - a[1]).slice(0, 2)) filters.push([hot, text], [plain, text]);
    }
    for (const server of [embedded, distributed]) await expectOk(await server.post('/batch/', { api_key: server.projectKey, batch }));
  });
  after(async () => {
    await embedded?.stop();
    await distributed?.stop();
    if (cluster.enabled && database) await sql(cluster.settings.clickhouseUrls[0], `DROP DATABASE IF EXISTS ${database} ON CLUSTER ${cluster.settings.clickhouseCluster}`);
  });

  const query = async (server: TestServer, text: string) => (await expectOk(await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'HogQLQuery', query: text } } }))).results;
  const both = async (text: string) => {
    const [a, b] = [await query(embedded, text), await query(distributed, text)];
    assert.deepEqual(b, a, text);
    return a;
  };

  test('reads, filters and breakdowns by the HogQL query API', async () => {
    const rows = await both('select properties.$browser, properties.plain_browser, properties.$os, properties.plain_os from events order by timestamp limit 1000');
    assert.equal(rows.length, 301);
    for (const [browser, plainBrowser, os, plainOs] of rows.slice(0, 300)) assert.deepEqual([browser, os], [plainBrowser, plainOs]);
    assert.deepEqual(rows[300].slice(0, 1), ['top']);
    for (const key of ['$browser', 'plain_browser', '$os', 'plain_os']) {
      await both(`select properties.${key} as b, count() from events group by b order by b`);
      await both(`select count() from events where properties.${key} = 'Chrome' or properties.${key} = '' or isNull(properties.${key})`);
    }
  });

  // A trends breakdown by property ranks its values with a window function, which 18.16 lacks (a 400,
  // docs/scale-out-cluster.md); the breakdowns above are HogQL's GROUP BY.
  test('trends: property filters on a materialized key', async () => {
    const trends = async (server: TestServer, key: string, operator: string, value: unknown) => {
      const query = {
        kind: 'TrendsQuery',
        series: [{ kind: 'EventsNode', event: '$pageview', math: 'total' }],
        dateRange: { date_from: '2026-10-31', date_to: '2026-11-03' },
        interval: 'day',
        properties: [{ type: 'event', key, operator, ...(value !== undefined && { value }) }],
      };
      const body = await expectOk(await server.api('/api/projects/@current/query/', { method: 'POST', body: { query } }));
      return (body.results as { count: number; data: number[] }[]).map((r) => [r.count, r.data]);
    };
    for (const [hot, plain] of [['$browser', 'plain_browser'], ['$os', 'plain_os']]) {
      for (const [operator, value] of [['exact', ['Chrome', 'Safari']], ['is_not', ['Firefox']], ['icontains', 'a'], ['is_set', undefined], ['is_not_set', undefined]] as const) {
        const expected = await trends(embedded, hot, operator, value);
        assert.ok((expected[0][0] as number) > 0, `${hot} ${operator}`);
        assert.deepEqual(await trends(distributed, hot, operator, value), expected, `${hot} ${operator}`);
        assert.deepEqual(await trends(distributed, plain, operator, value), expected, `${plain} ${operator}`);
      }
    }
  });

  test('property filters of the events API', async () => {
    assert.equal(filters.length, 8);
    for (const [key, value] of filters) {
      const properties = JSON.stringify([{ key, value, operator: 'exact', type: 'event' }]);
      const path = `/api/projects/@current/events/?properties=${encodeURIComponent(properties)}&limit=1000`;
      const uuids = async (server: TestServer) => (await expectOk(await server.api(path))).results.map((e: { uuid: string }) => e.uuid).sort();
      const expected = await uuids(embedded);
      assert.ok(expected.length > 0, `${key} = ${value} matches`);
      assert.deepEqual(await uuids(distributed), expected, `${key} = ${value}`);
    }
  });
});
