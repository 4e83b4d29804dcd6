import assert from 'node:assert/strict';
import { test } from 'node:test';

import { IncomingFlushes } from '../../../src/store/duckdb/incoming-flushes.js';

const bytes = (n: number) => new Uint8Array([n]);

test('flushes are taken in the order they were sent, and a send is answered when its bytes are taken', async () => {
  const incoming = new IncomingFlushes();
  let firstTaken = false;
  const first = incoming.push(bytes(1)).then(() => (firstTaken = true));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(firstTaken, false, 'not answered before the write takes it');
  assert.deepEqual(await incoming.take(), bytes(1));
  await first;
  assert.equal(firstTaken, true);

  // The write asks first; the bytes arrive later.
  const second = incoming.take();
  await incoming.push(bytes(2));
  assert.deepEqual(await second, bytes(2));
});

test('when the write ends, the sends still waiting and those after fail, so that no caller waits for good', async () => {
  const incoming = new IncomingFlushes();
  const waiting = incoming.push(bytes(1));
  incoming.end();
  await assert.rejects(waiting, /has ended/);
  await assert.rejects(incoming.push(bytes(2)), /has ended/);
});
