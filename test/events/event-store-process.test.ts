/**
 * The DuckDB event store in its own process (store/duckdb/threaded.ts): a write sends its
 * flushes' bytes after it, one message each. The slice must arrive whole, and a write the process
 * refuses must fail at once rather than leave its caller waiting to send the rest.
 */
import assert from 'node:assert/strict';
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
