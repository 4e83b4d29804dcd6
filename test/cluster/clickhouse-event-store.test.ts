/**
 * The ClickHouse event store on the local cluster's two 18.16 shards: migrations are idempotent
 * (also through `sightline migrate`); a write retried after it was stored but before its position
 * was recorded (ClickHouse has no transactions) stores nothing twice; events are spread over the
 * shards by distinct id; person merges reach the mirror; a dialect gap is a 400, not a 500.
 * Runs only when the cluster tests are on (test/helpers/cluster.ts).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { ClickHouseEventStore } from '../../src/store/clickhouse/event-store.js';
import { encodeFlushRecord } from '../../src/store/flush-record.js';
import type { EventSlice, IngestChanges, StoredEvent } from '../../src/store/types.js';
import { expectError, expectOk } from '../helpers/api-fixtures.js';
import { clusterAvailability } from '../helpers/cluster.js';
import { post, qs, startFixture, type Fixture } from '../helpers/events-fixtures.js';
import { newTempDir } from '../helpers/server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);
const cluster = clusterAvailability();
const skip = cluster.enabled ? false : cluster.reason;

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

function events(count: number): StoredEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    project_id: 1,
    uuid: randomUUID(),
    event: 'e',
    distinct_id: `user-${i % 40}`,
    person_id: null,
    timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000),
    created_at: new Date(),
    properties_json: JSON.stringify({ i }),
    elements_chain: '',
    groups: ['', '', '', '', ''],
  }));
}

function sliceOf(seq: number, list: StoredEvent[], changes = noChanges(seq)): EventSlice {
  const flush = encodeFlushRecord({ changes, events: list }, (n) => Buffer.alloc(n));
  return { flushes: [flush], from: 0, to: list.length, after: seq - 1 };
}

describe('ClickHouse event store', { skip }, () => {
  const databases: string[] = [];
  after(async () => {
    if (!cluster.enabled) return;
    for (const name of databases) await sql(cluster.settings.clickhouseUrls[0], `DROP DATABASE IF EXISTS ${name} ON CLUSTER ${cluster.settings.clickhouseCluster}`);
  });

  test('migrations apply once; sightline migrate finds nothing to do', async () => {
    const s = settings();
    databases.push(s.database);
    assert.deepEqual(await ClickHouseEventStore.migrate(s), [1, 2, 3]);
    assert.deepEqual(await ClickHouseEventStore.migrate(s), []);
    const env: NodeJS.ProcessEnv = { ...process.env, SIGHTLINE_DATA_DIR: path.join(ROOT, '.tmp', 'unused'), SIGHTLINE_CLICKHOUSE_URL: s.urls.join(','), SIGHTLINE_CLICKHOUSE_CLUSTER: s.cluster, SIGHTLINE_CLICKHOUSE_DATABASE: s.database };
    delete env.SIGHTLINE_POSTGRES_URL;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/main.ts', 'migrate'], { cwd: ROOT, env });
    assert.match(stdout, /ClickHouse schema is up to date/);
  });

  test('a write retried before its position was recorded stores nothing twice; shards hold the events by distinct id', async () => {
    const s = settings();
    databases.push(s.database);
    const store = await ClickHouseEventStore.open({ ...s, node: 'n1', queryTimeoutMs: 10_000 });
    try {
      const list = events(500);
      await store.write(sliceOf(1, list));
      assert.deepEqual(await store.position(), { seq: 1, events: 0 });
      // As if the position had never been recorded: the flush path writes the same slice again.
      await sql(s.urls[0], `INSERT INTO ${s.database}.sync_state VALUES ('n1', 0, 0, ${Date.now() * 1000 + 10 ** 9})`);
      await store.write(sliceOf(1, list));
      const url = s.urls[0];
      assert.equal(await sql(url, `SELECT count() FROM ${s.database}.events FINAL`), '500');
      assert.equal(await sql(url, `SELECT uniqExact(uuid) FROM ${s.database}.events`), '500');
      // Each distinct id on exactly one shard, and both shards used.
      const perShard = await Promise.all(s.urls.map((u) => sql(u, `SELECT groupUniqArray(distinct_id) FROM ${s.database}.events_local FORMAT JSONEachRow`)));
      const ids = perShard.map((line) => Object.values(JSON.parse(line))[0] as string[]);
      assert.ok(ids.every((list) => list.length > 0), 'both shards hold events');
      assert.equal(ids[0].filter((id) => ids[1].includes(id)).length, 0, 'no distinct id on two shards');
      assert.equal(ids[0].length + ids[1].length, 40);
    } finally {
      await store.close();
    }
  });

  test('person merges reach the mirror that both shards join with', async () => {
    const s = settings();
    databases.push(s.database);
    const store = await ClickHouseEventStore.open({ ...s, node: 'n1', queryTimeoutMs: 10_000 });
    try {
      const [a, b] = [randomUUID(), randomUUID()];
      const person = (uuid: string) => ({ uuid, project_id: 1, properties: { name: uuid }, is_identified: true, created_at: new Date().toISOString(), version: 0 });
      const first = { ...noChanges(1), upsertPersons: [person(a), person(b)], setDistinctIds: [{ project_id: 1, distinct_id: 'anon', person_uuid: a }, { project_id: 1, distinct_id: 'known', person_uuid: b }] };
      await store.write(sliceOf(1, events(10), first));
      const merge = { ...noChanges(2), reassignDistinctIds: [{ project_id: 1, from_person_uuid: a, to_person_uuid: b }], deletePersons: [{ project_id: 1, uuid: a }] };
      await store.write({ ...sliceOf(2, [], merge), to: 0 });
      for (const url of s.urls) {
        const rows = await sql(url, `SELECT distinct_id, person_id FROM ${s.database}.person_distinct_ids FINAL WHERE is_deleted = 0 ORDER BY distinct_id FORMAT JSONEachRow`);
        assert.deepEqual(rows.split('\n').map((line) => JSON.parse(line)), [{ distinct_id: 'anon', person_id: b }, { distinct_id: 'known', person_id: b }]);
        assert.equal(await sql(url, `SELECT count() FROM ${s.database}.persons FINAL WHERE is_deleted = 0`), '1');
      }
    } finally {
      await store.close();
    }
  });
});

describe('the events API on ClickHouse', { skip: process.env.SIGHTLINE_TEST_EVENT_STORE === 'clickhouse' ? skip : 'runs with SIGHTLINE_TEST_EVENT_STORE=clickhouse' }, () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture();
  });
  after(async () => {
    await f?.server.stop();
  });

  test('what 18.16 cannot run is a 400 naming the gap; the same query runs on constants', async () => {
    const body = await expectError(await f.events(qs({ select: ['match(event, distinct_id)'] })), 400, 'invalid_input', 'select');
    assert.match(body.detail, /regular expression that is not a constant.*ClickHouse/);
    const ok = await expectOk(await f.events(qs({ select: ["match(event, '^\\$page')", 'count()'] })));
    assert.ok(ok.results.length > 0);
  });

  test('a retried batch (same uuids) is one set of events', async () => {
    const created = await expectOk(await f.server.api('/api/projects/', { method: 'POST', body: { name: 'retry' } }), 201);
    const batch = Array.from({ length: 30 }, (_, i) => ({ uuid: randomUUID(), event: 'r', distinct_id: `d${i % 3}`, properties: { i } }));
    await post(f.server, batch, created.api_token);
    await post(f.server, batch, created.api_token);
    const body = await expectOk(await f.server.api(`/api/projects/${created.id}/events/${qs({ select: ['count()', 'uniq(uuid)'] })}`));
    assert.deepEqual(body.results, [[30, 30]]);
  });
});

describe('start-up without ClickHouse', () => {
  test('an unreachable SIGHTLINE_CLICKHOUSE_URL stops the start with a line saying what to do', async () => {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, SIGHTLINE_DATA_DIR: newTempDir(), SIGHTLINE_PORT: '0', SIGHTLINE_CLICKHOUSE_URL: 'http://127.0.0.1:1' };
    const failed = await run(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], { cwd: ROOT, env, timeout: 60_000 }).then(
      () => null,
      (error: { code?: number; stderr?: string }) => error,
    );
    assert.ok(failed, 'the server must not start');
    assert.notEqual(failed.code, 0);
    assert.match(failed.stderr ?? '', /Cannot use the ClickHouse event store at http:\/\/127\.0\.0\.1:1\/: .*Start it, or correct SIGHTLINE_CLICKHOUSE_URL/);
  });
});
