/**
 * The DuckDB event store in its own process (store/duckdb/threaded.ts). Flushes the flush log
 * holds are read by the process from the log's files; others have their bytes sent after the
 * write, one message each. The slice must arrive whole either way, a write the process refuses
 * must fail at once rather than leave its caller waiting to send the rest, and a segment that
 * cannot be read must not stop the write.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { ThreadedEventStore } from '../../src/store/duckdb/threaded.js';
import { encodedFlush } from '../helpers/flushes.js';
import { newTempDir } from '../helpers/server.js';

const count = async (store: ThreadedEventStore) =>
  (await store.query({ sql: 'SELECT count(*)::INTEGER AS n, count(DISTINCT uuid)::INTEGER AS u FROM events', params: [] }))[0];

test('a slice of several flushes is written whole; a refused write fails at once and the next one succeeds', async () => {
  const store = await ThreadedEventStore.open(newTempDir(), { idleCloseMs: 0 });
  try {
    const flushes = [encodedFlush(1, 40), encodedFlush(2, 40), encodedFlush(3, 40)];
    // Ends inside the third flush, as the feed's row-group writes do.
    const slice = { flushes, from: 0, to: 25, after: 0 };
    await store.write(slice);
    assert.deepEqual(await count(store), { n: 105, u: 105 });
    assert.deepEqual(await store.position(), { seq: 2, events: 25 });

    // Written again (an answer that was lost): refused before any of its bytes are taken.
    await assert.rejects(store.write(slice), /the write is skipped/);
    assert.deepEqual(await count(store), { n: 105, u: 105 });

    await store.write({ flushes: [flushes[2], encodedFlush(4, 40)], from: 25, to: 40, after: 2 });
    assert.deepEqual(await count(store), { n: 160, u: 160 });
    assert.deepEqual(await store.position(), { seq: 4, events: 0 });
  } finally {
    await store.close();
  }
});

test('flushes the flush log holds are read from its file; a segment that is gone is sent over the pipe instead', async () => {
  const dir = newTempDir();
  const store = await ThreadedEventStore.open(dir, { idleCloseMs: 0 });
  try {
    // A segment as the flush log writes it: records one after another.
    const segment = path.join(dir, 'segment.log');
    const flushes = [encodedFlush(1, 30), encodedFlush(2, 30)];
    fs.writeFileSync(segment, Buffer.concat(flushes.map((f) => f.bytes)));
    let offset = 0;
    // Without their bytes in memory: the write can only have read them from the file.
    const located = flushes.map((f) => {
      const logged = { file: segment, offset, length: f.bytes.length };
      offset += f.bytes.length;
      return { seq: f.seq, events: f.events, bytes: new Uint8Array(0), logged };
    });
    await store.write({ flushes: located, from: 0, to: 30, after: 0 });
    assert.deepEqual(await count(store), { n: 60, u: 60 });

    const third = encodedFlush(3, 30);
    await store.write({ flushes: [{ ...third, logged: { file: path.join(dir, 'deleted.log'), offset: 0, length: third.bytes.length } }], from: 0, to: 30, after: 2 });
    assert.deepEqual(await count(store), { n: 90, u: 90 });
    assert.deepEqual(await store.position(), { seq: 3, events: 0 });
  } finally {
    await store.close();
  }
});
