import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Drain } from '../../../src/http/drain.js';

const busyFor = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

test('the drain window ends once nothing arrived for the quiet time', async () => {
  const drain = new Drain();
  const started = performance.now();
  const window = drain.start(100, 5_000);
  assert.equal(drain.draining, true);
  setTimeout(() => drain.seen(), 60);
  await window;
  assert.ok(performance.now() - started >= 160, 'activity at 60 ms kept the window open for another 100 ms');
});

test('a stalled event loop does not count as quiet: the window stays open after the stall', async () => {
  const drain = new Drain();
  const window = drain.start(100, 5_000);
  // The stall outlasts the quiet time; connections arriving during it are not read yet.
  setTimeout(() => busyFor(400), 10);
  let stallEnded = 0;
  setTimeout(() => (stallEnded = performance.now()), 11);
  await window;
  assert.ok(stallEnded > 0);
  assert.ok(performance.now() - stallEnded >= 90, `the window stayed open ${Math.round(performance.now() - stallEnded)} ms after the stall`);
});

test('the window never outlasts its maximum', async () => {
  const drain = new Drain();
  const started = performance.now();
  const keepBusy = setInterval(() => drain.seen(), 10);
  await drain.start(100, 300);
  clearInterval(keepBusy);
  const took = performance.now() - started;
  assert.ok(took >= 300 && took < 2_000, `took ${Math.round(took)} ms`);
});
