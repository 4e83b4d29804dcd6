import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SharedArena } from '../../../src/util/shared-arena.js';

test('slices are views of one shared memory, laid one after another', () => {
  const arena = new SharedArena(100);
  const a = arena.take(30)!;
  const b = arena.take(30)!;
  assert.ok(a.buffer instanceof SharedArrayBuffer);
  assert.equal(a.buffer, b.buffer);
  assert.deepEqual([a.byteOffset, b.byteOffset], [0, 30]);
  assert.equal(arena.used, 60);
  assert.equal(arena.owns(a), true);
  assert.equal(arena.owns(Buffer.alloc(3)), false);
});

test('null when a slice does not fit until older ones come back; then the ring wraps', () => {
  const arena = new SharedArena(100);
  const a = arena.take(40)!;
  const b = arena.take(40)!;
  assert.equal(arena.take(30), null, 'only 20 bytes left at the end');
  arena.release(a);
  const c = arena.take(30)!;
  assert.equal(c.byteOffset, 0, 'wrapped to the beginning');
  assert.equal(arena.take(20), null, 'between c (0-30) and b (40-80) there are 10 bytes');
  assert.equal(arena.take(10)!.byteOffset, 30);
  arena.release(b);
  assert.equal(arena.take(60)!.byteOffset, 40);
});

test('a slice given back out of order is reused once the ones before it are back', () => {
  const arena = new SharedArena(100);
  const a = arena.take(50)!;
  const b = arena.take(50)!;
  arena.release(b);
  assert.equal(arena.take(10), null, 'b is back but a still holds the start');
  arena.release(a);
  assert.equal(arena.used, 0);
  assert.equal(arena.take(100)!.byteOffset, 0);
});

test('bytes written through one slice are seen through another view of the memory', () => {
  const arena = new SharedArena(16);
  const a = arena.take(4)!;
  a.write('abcd', 'latin1');
  assert.equal(Buffer.from(a.buffer as SharedArrayBuffer, 0, 4).toString('latin1'), 'abcd');
});

test('foreign, repeated and impossible requests are ignored or refused', () => {
  const arena = new SharedArena(10);
  assert.equal(arena.take(11), null);
  assert.equal(arena.take(0), null);
  const a = arena.take(5)!;
  arena.release(a);
  arena.release(a);
  arena.release(Buffer.alloc(5));
  assert.equal(arena.used, 0);
});

test('an unused arena lets go of its memory and takes new memory at the next slice', () => {
  const arena = new SharedArena(64);
  const a = arena.take(16)!;
  arena.releaseIfUnused();
  assert.equal(arena.owns(a), true, 'kept while a slice is out');
  arena.release(a);
  arena.releaseIfUnused();
  assert.equal(arena.owns(a), false, 'dropped once every slice came back');
  arena.release(a); // a slice of the old memory is ignored
  assert.equal(arena.used, 0);
  const b = arena.take(16)!;
  assert.notEqual(b.buffer, a.buffer);
  assert.equal(b.byteOffset, 0);
  assert.equal(arena.used, 16);
  arena.release(b);
  assert.equal(arena.used, 0);
});
