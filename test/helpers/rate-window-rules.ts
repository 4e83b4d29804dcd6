/**
 * The rules every rate-window counter must keep (util/rate-windows.ts), run by the unit test on
 * the in-memory one and by the cluster test on PostgreSQL's: the sign-in limiter's limits and
 * windows over the given counter.
 */
import assert from 'node:assert/strict';
import { LoginLimiter, MAX_FAILURES_PER_ADDRESS, MAX_FAILURES_PER_EMAIL } from '../../src/sessions/login-limiter.js';
import type { RateWindows } from '../../src/util/rate-windows.js';

/** Past the e-mail limit every attempt waits until the window ends; a success clears the e-mail. */
export async function emailLimitRule(windows: RateWindows): Promise<void> {
  let now = 1_000_000;
  const limiter = new LoginLimiter(() => now, windows);
  for (let i = 0; i < MAX_FAILURES_PER_EMAIL - 1; i++) await limiter.recordFailure('A@x.test', '10.0.0.1');
  assert.equal(await limiter.retryAfter('a@x.test', '10.0.0.1'), 0);
  await limiter.recordFailure('a@x.test', '10.0.0.2');
  assert.equal(await limiter.retryAfter('a@x.test', '10.0.0.9'), 900, 'the e-mail is held from any address, case aside');
  assert.equal(await limiter.retryAfter('b@x.test', '10.0.0.1'), 0, 'other e-mails are not');
  now += 600_000;
  assert.equal(await limiter.retryAfter('a@x.test', '10.0.0.1'), 300);
  now += 300_000;
  assert.equal(await limiter.retryAfter('a@x.test', '10.0.0.1'), 0, 'a new window');
  await limiter.recordFailure('a@x.test', '10.0.0.1');
  await limiter.recordSuccess('a@x.test');
  for (let i = 0; i < MAX_FAILURES_PER_EMAIL - 1; i++) await limiter.recordFailure('a@x.test', '10.0.0.3');
  assert.equal(await limiter.retryAfter('a@x.test', '10.0.0.3'), 0, 'the success cleared the earlier failure');
}

/** One address trying many e-mails is held; another address is not. */
export async function addressLimitRule(windows: RateWindows): Promise<void> {
  const limiter = new LoginLimiter(() => 0, windows);
  for (let i = 0; i < MAX_FAILURES_PER_ADDRESS; i++) await limiter.recordFailure(`user${i}@x.test`, '192.0.2.7');
  assert.ok((await limiter.retryAfter('fresh@x.test', '192.0.2.7')) > 0);
  assert.equal(await limiter.retryAfter('fresh@x.test', '192.0.2.8'), 0);
}

/**
 * Counters of different window lengths share one store: dropping the ended windows of short
 * counters (the memory store past 10,000 keys, PostgreSQL's sweep every 1,000 adds) keeps a long
 * window that is still running.
 */
export async function mixedWindowsRule(windows: RateWindows): Promise<void> {
  const start = 5_000_000;
  await windows.add('long', 3, 15 * 60_000, start);
  for (let i = 0; i < 10_000; i++) await windows.add(`short-${i}`, 1, 60_000, start);
  // A minute later the short windows have ended; these adds make each store drop ended windows.
  for (let i = 0; i < 1_000; i++) await windows.add(`later-${i}`, 1, 60_000, start + 61_000);
  assert.deepEqual(await windows.add('long', 0, 15 * 60_000, start + 120_000), { start, count: 3 }, 'the long window survived');
  assert.deepEqual(await windows.add('short-0', 0, 60_000, start + 120_000), { start: start + 120_000, count: 0 }, 'a short one ended');
}
