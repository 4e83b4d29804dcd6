/**
 * Every node is equal, from the first start (issue #27): three nodes started at the same moment on
 * empty PostgreSQL and ClickHouse databases and a new stream — as an orchestrator starts replicas —
 * all come up, migrate each store once between them, make one organization and project, and then
 * each takes capture and answers queries over what all of them took. Runs only when a cluster is up.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import pg from 'pg';
import { clusterAvailability } from '../helpers/cluster.js';
import { batchOf, sharedNodesEnv, waitFor } from '../helpers/faults.js';
import { startServer, type TestServer } from '../helpers/server.js';

const availability = clusterAvailability();
const skip = availability.enabled ? false : availability.reason;
const NODES = 3;
async function metaRows(metaUrl: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: metaUrl });
  await client.connect();
  try {
    return (await client.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

async function eventCount(node: TestServer, event: string): Promise<number> {
  const response = await node.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'HogQLQuery', query: `select count() from events where event = '${event}'` }, refresh: 'force_blocking' } });
  assert.equal(response.status, 200, await response.clone().text());
  return Number(((await response.json()) as { results: number[][] }).results[0][0]);
}

describe('nodes started at the same moment on empty stores', { skip, concurrency: false }, () => {
  test('all come up on one schema and one project, and each serves capture and queries', { timeout: 240_000 }, async () => {
    if (!availability.enabled) return;
    const shared = await sharedNodesEnv(availability.settings, 'together', 4);
    const keys = { projectKey: `phc_test${randomBytes(12).toString('hex')}`, personalKey: `phx_test${randomBytes(12).toString('hex')}` };
    const started = await Promise.allSettled(Array.from({ length: NODES }, () => startServer({ env: shared.env, singleNode: true, ...keys })));
    const nodes = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    try {
      const failures = started.flatMap((s) => (s.status === 'rejected' ? [String(s.reason).slice(0, 2_000)] : []));
      assert.deepEqual(failures, [], 'every node starts');

      const migrations = await metaRows(shared.metaUrl, 'SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version HAVING count(*) > 1');
      assert.deepEqual(migrations, [], 'each PostgreSQL migration is recorded once');
      const projects = await metaRows(shared.metaUrl, 'SELECT count(*)::int AS n FROM projects');
      const organizations = await metaRows(shared.metaUrl, 'SELECT count(*)::int AS n FROM organizations');
      assert.deepEqual([projects[0].n, organizations[0].n], [1, 1], 'one organization and one project');

      // Each node takes a batch of its own; every node then counts all of them.
      const event = `together-${randomBytes(4).toString('hex')}`;
      for (const node of nodes) {
        const batch = batchOf(10).map((e) => ({ ...e, event }));
        const response = await fetch(`${node.url}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: keys.projectKey, batch }) });
        assert.equal(response.status, 200, await response.text());
      }
      await waitFor('every node counts every event', async () => (await Promise.all(nodes.map((node) => eventCount(node, event)))).every((n) => n === 10 * NODES), 60_000);
    } finally {
      await Promise.all(nodes.map((node) => node.stop()));
    }
  });
});
