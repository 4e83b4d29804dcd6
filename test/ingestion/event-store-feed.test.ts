/**
 * The event-store feed against the real DuckDB event store (in process, temp dir): writes are whole row
 * groups as soon as enough events are queued (ending inside a flush if need be), the remainder
 * waits until a query needs it, every event is stored once in order, a flush split over two
 * writes has its person changes applied once, and the position inside a flush survives a
 * restart so that the replay continues exactly where the store stopped.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { EventStoreFeed } from '../../src/ingestion/event-store-feed.js';
import { createLogger } from '../../src/kernel/logger.js';
import { DuckDbEventStore } from '../../src/store/duckdb/event-store.js';
import { ROW_GROUP_ROWS } from '../../src/store/duckdb/schema.js';
import { encodedFlush, eventUuid, PERSON_UUID } from '../helpers/flushes.js';
import { newTempDir } from '../helpers/server.js';

const log = createLogger('silent');
const UNIT = ROW_GROUP_ROWS;
const FLUSH_EVENTS = (UNIT * 3) / 8;
const FLUSHES = 12; // 4.5 row groups
const options = { maxLagEvents: 1_000_000, maxLagBytes: 1e12, maxEventsPerWrite: UNIT, maxDelayMs: 60_000, writeAtBytes: 1e12 };
const flushes = Array.from({ length: FLUSHES }, (_, i) => encodedFlush(i + 1, FLUSH_EVENTS));

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function storedUuids(store: DuckDbEventStore): Promise<string[]> {
  const rows = await store.query({ sql: 'SELECT uuid::VARCHAR AS uuid FROM events', params: [] });
  return rows.map((row) => row.uuid as string).sort((a, b) => a.localeCompare(b));
}

const expectedUuids = (through: number) =>
  flushes
    .slice(0, through)
    .flatMap((flush) => Array.from({ length: flush.events }, (_, i) => eventUuid(flush.seq, i)))
    .sort((a, b) => a.localeCompare(b));

test('whole row groups first, the remainder when a query needs it; resumed mid-flush after a restart', async () => {
  const dataDir = newTempDir();
  let store = await DuckDbEventStore.open(dataDir);
  const written: number[] = [];
  // Flushes reported finished (their memory may be reused): each once, and only once stored whole.
  const finished: number[] = [];
  const onWritten = (seq: number, done: { seq: number }[]) => {
    written.push(seq);
    for (const flush of done) {
      assert.ok(flush.seq <= seq, `flush ${flush.seq} reported finished while the store holds flushes up to ${seq} only`);
      finished.push(flush.seq);
    }
  };
  let feed = new EventStoreFeed(store, await store.position(), options, log, onWritten);
  for (const flush of flushes.slice(0, 4)) feed.enqueue(flush); // 1.5 row groups

  // One row group's worth is written without anybody asking; it ends inside flush 3.
  await until(() => feed.lagEvents === 4 * FLUSH_EVENTS - UNIT, 'the first row group');
  const firstStop = { seq: 2, events: UNIT - 2 * FLUSH_EVENTS };
  assert.deepEqual(await store.position(), firstStop);
  assert.equal(feed.writtenSeq, 2);
  assert.equal((await storedUuids(store)).length, UNIT);
  const rowGroups = await store.query({ sql: "SELECT row_group_id, max(count)::INTEGER AS rows FROM pragma_storage_info('events') GROUP BY ALL", params: [] });
  assert.deepEqual(rowGroups.map((r) => r.rows), [UNIT], 'written as one whole row group');

  // A restart: the store reopens at the same position, and a new feed continues from it.
  await store.close();
  store = await DuckDbEventStore.open(dataDir);
  assert.deepEqual(await store.position(), firstStop);
  assert.deepEqual(finished, [1, 2]);
  feed = new EventStoreFeed(store, await store.position(), options, log, onWritten);
  for (const flush of flushes.slice(2)) feed.enqueue(flush); // flush 3 again (as start-up replays it), then the rest
  assert.equal(feed.lagEvents, (FLUSHES - 2) * FLUSH_EVENTS - firstStop.events);

  // Whole row groups go by themselves; the remainder (half a row group) waits for a reader.
  await until(() => feed.lagEvents === FLUSHES * FLUSH_EVENTS - 4 * UNIT, 'four row groups');
  assert.equal((await storedUuids(store)).length, 4 * UNIT);
  assert.equal(await feed.caughtUp(FLUSHES, 30_000), true);
  assert.deepEqual(await store.position(), { seq: FLUSHES, events: 0 });
  assert.equal(feed.lagEvents, 0);
  assert.deepEqual(await storedUuids(store), expectedUuids(FLUSHES), 'every event once');
  assert.ok(written.includes(FLUSHES));
  assert.deepEqual(finished, Array.from({ length: FLUSHES }, (_, i) => i + 1), 'every flush reported finished once, in order');

  // Flush 3 was split over two writes: its person changes were applied once.
  const persons = await store.query({ sql: 'SELECT id::VARCHAR AS id, properties::VARCHAR AS properties FROM persons', params: [] });
  assert.deepEqual(persons.map((p) => [p.id, JSON.parse(p.properties as string).email]), [[PERSON_UUID, `p${FLUSHES}@example.com`]]);
  const ids = await store.query({ sql: 'SELECT distinct_id FROM person_distinct_ids ORDER BY distinct_id', params: [] });
  assert.deepEqual(ids.map((r) => r.distinct_id).sort(), flushes.map((f) => `user-${f.seq}`).sort());
  feed.stopRetrying();
  await feed.settled();
  await store.close();
});

test('a remainder smaller than a row group is written once it has waited maxDelayMs', async () => {
  const store = await DuckDbEventStore.open(newTempDir());
  const feed = new EventStoreFeed(store, await store.position(), { ...options, maxDelayMs: 200 }, log);
  const started = Date.now();
  feed.enqueue(flushes[0]);
  await until(() => feed.lagEvents === 0, 'the delayed write');
  assert.ok(Date.now() - started >= 150, 'it waited for the delay first');
  assert.deepEqual(await store.position(), { seq: 1, events: 0 });
  await feed.settled();
  await store.close();
});

test('past its lag bound the feed has no room; a waiting flush learns so within its time limit', async () => {
  const store = await DuckDbEventStore.open(newTempDir());
  const feed = new EventStoreFeed(store, await store.position(), { ...options, maxLagEvents: 10 }, log);
  feed.enqueue(encodedFlush(1, 20)); // less than a row group, and nobody needs it yet: it waits
  const started = Date.now();
  assert.equal(await feed.room(200), false);
  assert.ok(Date.now() - started >= 150, 'it waited for room first');
  assert.equal(await feed.caughtUp(1, 30_000), true); // a query needs it: written now
  assert.equal(await feed.room(200), true);
  await feed.settled();
  await store.close();
});

test('past its byte bound the feed has no room either, whatever the number of events', async () => {
  const store = await DuckDbEventStore.open(newTempDir());
  const flush = encodedFlush(1, 20);
  const feed = new EventStoreFeed(store, await store.position(), { ...options, maxLagBytes: flush.bytes.length }, log);
  feed.enqueue(flush);
  assert.equal(await feed.room(200), false);
  assert.equal(await feed.caughtUp(1, 30_000), true);
  assert.equal(await feed.room(200), true);
  await feed.settled();
  await store.close();
});

test('a write of a slice the event store already holds is refused: its events are not appended twice', async () => {
  const store = await DuckDbEventStore.open(newTempDir());
  const flush = encodedFlush(1, 5);
  const slice = { flushes: [flush], from: 0, to: 5, after: 0 };
  await store.write(slice);
  await assert.rejects(store.write(slice), /the write is skipped/);
  const [{ n }] = await store.query({ sql: 'SELECT count(*)::INTEGER AS n FROM events', params: [] });
  assert.equal(n, 5);
  assert.deepEqual(await store.position(), { seq: 1, events: 0 });
  await store.close();
});
