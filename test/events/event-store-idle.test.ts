/**
 * DuckDB is open only while it is used (store/duckdb/threaded.ts): a data folder without an
 * events file is not opened at start, probes and metrics scrapes never open it, and after the
 * idle time it is closed and its process ended, which unloads DuckDB's library; the next write or query opens it again and finds
 * everything that was stored. An export or a query running past the idle time keeps it open.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { ThreadedEventStore } from '../../src/store/duckdb/threaded.js';
import { processTree } from '../helpers/process-memory.js';
import { newUuid, waitFor } from '../helpers/robustness.js';
import { newTempDir, startServer } from '../helpers/server.js';

const QUICK = { sql: 'SELECT 41 + 1 AS answer', params: [] };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a process of the server's tree has DuckDB's library mapped (none unmaps it once loaded). */
const duckdbLoaded = (pid: number) =>
  processTree(pid).some((member) => {
    try {
      return fs.readFileSync(`/proc/${member}/maps`, 'utf8').includes('duckdb');
    } catch {
      return false; // it has just exited
    }
  });

test('a store without an events file opens on its first query, closes when idle and opens again', async () => {
  const dataDir = newTempDir();
  const store = await ThreadedEventStore.open(dataDir, { idleCloseMs: 300 });
  try {
    // Nothing on disk: the position, the size and readiness need no database.
    assert.deepEqual(await store.position(), { seq: 0, events: 0 });
    assert.equal(await store.sizeBytes(), 0);
    assert.equal(await store.ping(), true);
    assert.equal(store.isOpen, false);
    assert.equal(fs.existsSync(path.join(dataDir, 'events.duckdb')), false);

    assert.deepEqual(await store.query(QUICK), [{ answer: 42 }]);
    assert.equal(store.isOpen, true);
    assert.ok(fs.existsSync(path.join(dataDir, 'events.duckdb')));
    // A probe on an open store asks DuckDB, but does not count as use.
    const probing = setInterval(() => void store.ping(), 50);
    try {
      await waitFor('the idle store to close', () => !store.isOpen, 5_000, 20);
    } finally {
      clearInterval(probing);
    }
    assert.equal(await store.ping(), true, 'a closed store is ready');
    assert.ok((await store.sizeBytes()) > 0);

    // Opens again on demand, with what it held (the migrations' state among it).
    const [{ n }] = await store.query({ sql: 'SELECT count(*)::INTEGER AS n FROM schema_migrations', params: [] });
    assert.ok(Number(n) > 0);
    assert.equal(store.isOpen, true);
    assert.deepEqual(await store.position(), { seq: 0, events: 0 });
  } finally {
    await store.close();
  }
});

test('a store whose events file exists opens at once; 0 keeps it open', async () => {
  const dataDir = newTempDir();
  const first = await ThreadedEventStore.open(dataDir, { idleCloseMs: 0 });
  await first.query(QUICK);
  await sleep(300);
  assert.equal(first.isOpen, true, 'idleCloseMs 0: never closed');
  await first.close();

  const second = await ThreadedEventStore.open(dataDir, { idleCloseMs: 60_000 });
  try {
    assert.equal(second.isOpen, true, 'an existing file is opened at start');
  } finally {
    await second.close();
  }
});

test('an export or a slow query running past the idle time keeps the store open', async () => {
  const store = await ThreadedEventStore.open(newTempDir(), { idleCloseMs: 200, queryTimeoutMs: 0 });
  try {
    const rows: number[] = [];
    for await (const chunk of store.stream({ sql: 'SELECT range AS i FROM range(5000)', params: [] }, 1000)) {
      for (const row of chunk) rows.push(Number(row.i));
      // Longer than the idle time between chunks: the stream lives on the thread meanwhile.
      await sleep(250);
      assert.equal(store.isOpen, true);
    }
    assert.deepEqual(rows, Array.from({ length: 5000 }, (_, i) => i));

    // ~1 s of work, five times the idle time.
    const [{ n }] = await store.query({ sql: 'SELECT count(*)::INTEGER AS n FROM range(3000) a, range(30000) b WHERE (a.range * b.range) % 7 = 0', params: [] });
    assert.ok(Number(n) > 0);
    assert.equal(store.isOpen, true);
    await waitFor('the idle store to close', () => !store.isOpen, 5_000, 20);
  } finally {
    await store.close();
  }
});

test('the server on an empty data folder loads DuckDB only with the first events, and reopens it after closing it', async () => {
  const server = await startServer({ env: { SIGHTLINE_EVENT_STORE_IDLE_CLOSE_SECONDS: '1' } });
  const pid = server.process.pid!;
  try {
    const ready = await fetch(`${server.url}/_ready`);
    assert.equal(ready.status, 200, await ready.text());
    assert.equal((await fetch(`${server.url}/metrics`)).status, 200);
    assert.equal(duckdbLoaded(pid), false, 'probes and scrapes do not open DuckDB');
    assert.equal(fs.existsSync(path.join(server.dataDir, 'events.duckdb')), false);

    const capture = async (count: number) => {
      const batch = Array.from({ length: count }, (_, i) => ({ event: 'idle test', uuid: newUuid(), distinct_id: `user-${i}`, properties: { i } }));
      const reply = await server.post('/batch/', { api_key: server.projectKey, batch });
      assert.equal(reply.status, 200, await reply.text());
      return batch.map((e) => e.uuid);
    };
    const listed = async () => {
      const reply = await server.api('/api/projects/@current/events/?limit=100');
      assert.equal(reply.status, 200);
      return ((await reply.json()) as { results: { id: string }[] }).results.map((e) => e.id).sort();
    };
    const firstUuids = await capture(5);
    await waitFor('the first events to be listed', async () => (await listed()).length === 5, 20_000, 100);
    assert.deepEqual(await listed(), [...firstUuids].sort());
    assert.equal(duckdbLoaded(pid), true);

    // Closing checkpoints the WAL away.
    const wal = path.join(server.dataDir, 'events.duckdb.wal');
    await waitFor('DuckDB to be closed (its WAL folded in)', () => !fs.existsSync(wal), 20_000, 100);
    // Its library's pages and allocations leave with the process that held them.
    await waitFor('DuckDB to be unloaded', () => !duckdbLoaded(pid), 20_000, 100);
    assert.equal((await fetch(`${server.url}/_ready`)).status, 200);

    const moreUuids = await capture(3);
    await waitFor('every event to be listed after the reopening', async () => (await listed()).length === 8, 20_000, 100);
    assert.deepEqual(await listed(), [...firstUuids, ...moreUuids].sort());
  } finally {
    assert.equal(await server.stop(), 0);
  }
});
