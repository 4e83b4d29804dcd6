import assert from 'node:assert/strict';
import { test } from 'node:test';

import { BytesPool } from '../../../src/util/bytes-pool.js';

const sharedPool = (maxPooledBytes: number) => new BytesPool({ shared: true, minClassBytes: 64 * 1024, maxPooledBytes });

test('memory given back is handed out again for a request of the same size class', () => {
  const pool = sharedPool(16 * 1024 * 1024);
  const first = pool.take(100_000);
  assert.equal(first.length, 100_000);
  assert.ok(first.buffer instanceof SharedArrayBuffer);
  assert.equal(first.buffer.byteLength, 128 * 1024, 'rounded up to a power of two');
  first.fill(7);
  pool.recycle(first);
  assert.equal(pool.size, 128 * 1024);

  const second = pool.take(70_000);
  assert.equal(second.buffer, first.buffer, 'the same memory');
  assert.equal(second.length, 70_000);
  assert.equal(pool.size, 0);
  const other = pool.take(70_000);
  assert.notEqual(other.buffer, first.buffer, 'taken memory is not handed out twice');
});

test('the pool keeps at most its limit, ignores foreign memory, and keeps memory recycled twice once', () => {
  const pool = sharedPool(256 * 1024);
  const a = pool.take(200 * 1024); // 256 KiB class
  const b = pool.take(200 * 1024);
  pool.recycle(a);
  pool.recycle(b); // over the limit: left to the garbage collector
  assert.equal(pool.size, 256 * 1024);

  const small = sharedPool(1024 * 1024);
  const c = small.take(10);
  small.recycle(c);
  small.recycle(c);
  assert.equal(small.size, 64 * 1024, 'one entry');
  assert.notEqual(small.take(10).buffer, small.take(10).buffer);

  small.recycle(Buffer.alloc(64 * 1024)); // not shared memory
  small.recycle(new Uint8Array(new SharedArrayBuffer(100_000))); // not of a size class
  assert.equal(small.size, 0);
});

test('a pool of plain memory hands out ArrayBuffers from its smallest class up and takes back only those', () => {
  const pool = new BytesPool({ shared: false, minClassBytes: 4096, maxPooledBytes: 1024 * 1024 });
  const a = pool.take(100);
  assert.ok(!(a.buffer instanceof SharedArrayBuffer));
  assert.equal(a.buffer.byteLength, 4096);
  assert.equal(pool.take(5000).buffer.byteLength, 8192);
  pool.recycle(a);
  pool.recycle(new Uint8Array(new SharedArrayBuffer(4096))); // shared: not this pool's kind
  assert.equal(pool.size, 4096);
  assert.equal(pool.take(4096).buffer, a.buffer);
});
