/**
 * The `requestId` of flag answers: a UUID v7 exactly as `uuid`'s `v7()` makes them (a counter
 * seeded from random bits orders ids within one millisecond), except that the random bytes are
 * drawn from a pooled buffer: one getRandomValues call per 256 ids instead of one per id, which
 * cost about as much as formatting the rest of a /decide answer.
 */
import { randomFillSync } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

const POOL_BYTES = 4096;
const pool = new Uint8Array(POOL_BYTES);
let next = POOL_BYTES;

// The millisecond of the last id and its counter (uuid's own state, kept here since its
// options path does not keep one).
let lastMs = -Infinity;
let counter = 0;

export function requestId(): string {
  if (next + 16 > POOL_BYTES) {
    randomFillSync(pool);
    next = 0;
  }
  const random = pool.subarray(next, (next += 16));
  const now = Date.now();
  if (now > lastMs) {
    // A new millisecond: the counter starts from 31 random bits.
    counter = ((random[6] & 0x7f) << 24) | (random[7] << 16) | (random[8] << 8) | random[9];
    lastMs = now;
  } else {
    counter = (counter + 1) | 0;
    // Counter overflow borrows the next millisecond.
    if (counter === 0) lastMs++;
  }
  return uuidv7({ msecs: lastMs, seq: counter, random });
}
