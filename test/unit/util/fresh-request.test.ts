import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FreshRequest } from '../../../src/util/fresh-request.js';

/** A request whose answer is the number of requests sent when it was sent; settled by hand. */
function manualRequests() {
  const pending: Array<{ resolve(n: number): void; reject(e: Error): void }> = [];
  let sent = 0;
  const send = () =>
    new Promise<number>((resolve, reject) => {
      const n = ++sent;
      pending.push({ resolve: () => resolve(n), reject });
    });
  return { send, pending, sent: () => sent };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

test('callers while a request is in flight share the next one, sent after they called', async () => {
  const requests = manualRequests();
  const fresh = new FreshRequest(requests.send);
  const first = fresh.get();
  const later = [fresh.get(), fresh.get(), fresh.get()];
  await tick();
  assert.equal(requests.sent(), 1, 'one in flight, one queued');
  requests.pending[0].resolve(0);
  assert.equal(await first, 1);
  await tick();
  assert.equal(requests.sent(), 2);
  requests.pending[1].resolve(0);
  assert.deepEqual(await Promise.all(later), [2, 2, 2], 'answered by the request sent after they called');
  // Idle again: the next caller sends at once.
  const alone = fresh.get();
  assert.equal(requests.sent(), 3);
  requests.pending[2].resolve(0);
  assert.equal(await alone, 3);
});

test('a failed request fails its callers only; the queued one is still sent', async () => {
  const requests = manualRequests();
  const fresh = new FreshRequest(requests.send);
  const first = fresh.get();
  const queued = fresh.get();
  requests.pending[0].reject(new Error('down'));
  await assert.rejects(first, /down/);
  await tick();
  requests.pending[1].resolve(0);
  assert.equal(await queued, 2);
});
