/**
 * Rate limits across nodes: the counters in PostgreSQL (store/postgres/rate-windows.ts) keep the
 * sign-in limiter's rules, and two nodes counting one key at once lose no count, so a limit is
 * the cluster's, not each node's (docs/scale-out-cluster.md).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PostgresMetaStore } from '../../src/store/postgres/meta-store.js';
import { clusterPostgresUrl } from '../helpers/cluster.js';
import { databaseFor } from '../helpers/postgres-databases.js';
import { addressLimitRule, emailLimitRule, mixedWindowsRule } from '../helpers/rate-window-rules.js';
import { newTempDir } from '../helpers/server.js';

const clusterUrl = clusterPostgresUrl();
const skip = clusterUrl === null ? 'the cluster tests are off (test/helpers/cluster.ts)' : false;

describe('rate windows in PostgreSQL', { skip }, () => {
  let a: PostgresMetaStore;
  let b: PostgresMetaStore;

  before(async () => {
    const url = await databaseFor(clusterUrl!, newTempDir());
    a = await PostgresMetaStore.open({ url, node: 'a', maxConnections: 8 });
    b = await PostgresMetaStore.open({ url, node: 'b', maxConnections: 8 });
  });
  after(async () => {
    await a?.close();
    await b?.close();
  });

  test('the sign-in limits and their windows', async () => {
    await emailLimitRule(a.rateWindows);
    await addressLimitRule(a.rateWindows);
  });

  test('windows of different lengths share the table; the sweep of ended ones keeps running ones', () => mixedWindowsRule(a.rateWindows));

  test('two nodes counting one key at once: every count lands, in one window that both see', async () => {
    const now = Date.now();
    const adds = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).rateWindows.add('k', 1, 60_000, now)));
    assert.deepEqual(adds.map((w) => w.count).sort((x, y) => x - y), Array.from({ length: 200 }, (_, i) => i + 1), 'each add saw its own count');
    assert.deepEqual(await b.rateWindows.add('k', 0, 60_000, now + 1), { start: now, count: 200 });
    assert.deepEqual(await a.rateWindows.add('k', 1, 60_000, now + 60_000), { start: now + 60_000, count: 1 }, 'a new window once the last ended');
  });
});
