/**
 * The PostgreSQL metadata store (SIGHTLINE_POSTGRES_URL): its migrations are versioned and
 * idempotent, also when nodes run them at once; `sightline migrate` applies them; and two nodes
 * on one database share tenancy, flags and persons, each with its own flush position.
 * Runs only when the cluster tests are on (test/helpers/cluster.ts).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { PostgresMetaStore } from '../../src/store/postgres/meta-store.js';
import { migrations } from '../../src/store/postgres/migrations.js';
import { expectOk, ingest } from '../helpers/api-fixtures.js';
import { clusterPostgresUrl } from '../helpers/cluster.js';
import { createFlag, decideFlags, everyone } from '../helpers/flags.js';
import { databaseFor } from '../helpers/postgres-databases.js';
import { newTempDir, startServer, type TestServer } from '../helpers/server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);
const clusterUrl = clusterPostgresUrl();
const skip = clusterUrl === null ? 'the cluster tests are off (test/helpers/cluster.ts)' : false;

async function select<T>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

const latest = migrations[migrations.length - 1].version;

describe('migrations', { skip }, () => {
  test('sightline migrate applies every migration once, then has nothing to do', async () => {
    const url = await databaseFor(clusterUrl!, newTempDir());
    const migrate = async () => {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/main.ts', 'migrate'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SIGHTLINE_DATA_DIR: newTempDir(), SIGHTLINE_POSTGRES_URL: url },
      });
      return stdout.trim();
    };
    assert.match(await migrate(), new RegExp(`applied migrations ${migrations.map((m) => m.version).join(', ')}$`));
    assert.equal(await migrate(), 'PostgreSQL schema is up to date');
    const versions = await select<{ version: number }>(url, 'SELECT version FROM schema_migrations ORDER BY version');
    assert.deepEqual(versions.map((row) => row.version), migrations.map((m) => m.version));
  });

  test('nodes migrating at once: the advisory lock lets one apply, the others find it done', async () => {
    const url = await databaseFor(clusterUrl!, newTempDir());
    const results = await Promise.all([1, 2, 3, 4].map(() => PostgresMetaStore.migrate(url)));
    assert.equal(results.filter((applied) => applied.length > 0).length, 1, JSON.stringify(results));
    assert.deepEqual(results.flat(), migrations.map((m) => m.version));
    const [{ n }] = await select<{ n: number }>(url, `SELECT count(*)::int AS n FROM schema_migrations WHERE version = ${latest}`);
    assert.equal(n, 1);
  });

  test('a bad URL is a configuration error, not a stack trace', async () => {
    const failed = await run(process.execPath, ['--import', 'tsx', 'src/main.ts', 'migrate'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SIGHTLINE_DATA_DIR: newTempDir(), SIGHTLINE_POSTGRES_URL: 'mysql://x' },
    }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    assert.ok(failed, 'migrate must fail');
    assert.equal(failed.code, 2);
    assert.match(failed.stderr, /SIGHTLINE_POSTGRES_URL must look like postgres:\/\//);
  });
});

describe('an unreachable database', { skip }, () => {
  test('a server that cannot reach it stops with one line naming it (password hidden), the cause and the fix', async () => {
    const failed = await run(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        SIGHTLINE_DATA_DIR: newTempDir(),
        SIGHTLINE_PORT: '0',
        SIGHTLINE_POSTGRES_URL: 'postgres://sightline:secret@127.0.0.1:1/nowhere',
      },
    }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    assert.ok(failed, 'serve must fail');
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /^Cannot use the PostgreSQL metadata store at postgres:\/\/sightline:\*\*\*@127\.0\.0\.1:1\/nowhere: ECONNREFUSED.*Start it, or correct SIGHTLINE_POSTGRES_URL\.\n$/);
    assert.ok(!failed.stderr.includes('secret'));
  });
});

describe('two nodes on one database', { skip }, () => {
  let a: TestServer;
  let b: TestServer;
  let url: string;

  before(async () => {
    a = await startServer();
    url = a.storeEnv.SIGHTLINE_POSTGRES_URL;
    // B: a data folder of its own (its flush log and events), the same metadata.
    b = await startServer({ env: { SIGHTLINE_POSTGRES_URL: url }, projectKey: a.projectKey, personalKey: a.personalKey });
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  test('the second node found the organization and keys the first made, and made none of its own', async () => {
    const orgs = await select<{ n: number }>(url, 'SELECT count(*)::int AS n FROM organizations');
    assert.equal(orgs[0].n, 1);
    const fromA = await expectOk(await a.api('/api/organizations/@current/'));
    const fromB = await expectOk(await b.api('/api/organizations/@current/'));
    assert.equal(fromB.id, fromA.id);
  });

  test('a flag made on one node and a person ingested on the other meet in an evaluation on either', async () => {
    await createFlag(b, everyone('pg-shared', [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }]));
    await ingest(a, [{ event: '$identify', distinct_id: 'shared-user', properties: { $set: { plan: 'pro' } } }]);
    for (const node of [a, b]) await eventually(async () => (await decideFlags(node, { distinct_id: 'shared-user' }))['pg-shared'] === true);
  });

  test('each node keeps its own flush position, and a retried event is stored once across nodes', async () => {
    const uuid = '01890000-0000-7000-8000-00000000abcd';
    await ingest(b, [{ event: 'retried', distinct_id: 'shared-user', uuid } as never]);
    await eventually(async () => (await eventCount(b, 'retried')) === 1);
    // The retry reaches the other node, whose own event store has never seen it.
    await ingest(a, [{ event: 'retried', distinct_id: 'shared-user', uuid } as never, { event: 'marker', distinct_id: 'shared-user' }]);
    await eventually(async () => (await eventCount(a, 'marker')) === 1);
    assert.equal(await eventCount(a, 'retried'), 0, 'the retry was dropped: node B had stored that uuid');
    const nodes = await select<{ node: string; flush_seq: string }>(url, 'SELECT node, flush_seq FROM ingest_state');
    assert.equal(nodes.length, 2, JSON.stringify(nodes));
    for (const node of nodes) assert.ok(Number(node.flush_seq) > 0);
  });

  test('a project changed on one node reaches the other at once (LISTEN/NOTIFY), not after its 60 s cache', async () => {
    // A has the project cached by its token once it captured with it.
    await ingest(a, [{ event: 'before-anonymizing', distinct_id: 'ip-user' }]);
    assert.ok('$ip' in (await storedEvent(a, 'before-anonymizing')).properties, 'IPs are kept before the change');
    await expectOk(await b.api('/api/projects/@current/', { method: 'PATCH', body: { anonymize_ips: true } }));
    let attempt = 0;
    await eventually(async () => {
      const event = `anonymized-${attempt++}`;
      await ingest(a, [{ event, distinct_id: 'ip-user' }]);
      return !('$ip' in (await storedEvent(a, event)).properties);
    }, 15_000);
    await expectOk(await b.api('/api/projects/@current/', { method: 'PATCH', body: { anonymize_ips: false } }));
  });
});

/** The one event named `event`, once the node's event store has it. */
async function storedEvent(server: TestServer, event: string): Promise<any> {
  let found: any[] = [];
  await eventually(async () => {
    found = (await expectOk(await server.api(`/api/projects/@current/events/?event=${encodeURIComponent(event)}&limit=100`))).results;
    return found.length > 0;
  });
  return found[0];
}

async function eventCount(server: TestServer, event: string): Promise<number> {
  const page = await expectOk(await server.api(`/api/projects/@current/events/?event=${encodeURIComponent(event)}&limit=100`));
  return page.results.length;
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
