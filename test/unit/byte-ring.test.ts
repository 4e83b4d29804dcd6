import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ByteRing } from '../../src/util/byte-ring.js';

const bytesOf = (text: string) => Buffer.from(text);

/** A writer and a reader over the same memory, as the two threads have them. */
function ringPair(capacity: number) {
  const memory = ByteRing.memory(capacity);
  return { writer: new ByteRing(memory), reader: new ByteRing(memory) };
}

function readText(reader: ByteRing, position: number, length: number): string {
  const into = Buffer.alloc(length);
  reader.read(position, into);
  return into.toString();
}

test('strings are read back as written, in order, across many laps of the ring', () => {
  const { writer, reader } = ringPair(100);
  for (let i = 0; i < 500; i++) {
    const text = `string ${i} `.repeat((i % 5) + 1);
    const position = writer.write(bytesOf(text));
    assert.notEqual(position, null, `string ${i}`);
    assert.equal(readText(reader, position!, text.length), text);
  }
});

test('the writer gets no room until the reader has freed it, and none for strings larger than the ring', () => {
  const { writer, reader } = ringPair(100);
  assert.equal(writer.write(new Uint8Array(101)), null, 'larger than the ring');
  const a = writer.write(bytesOf('a'.repeat(40)))!;
  const b = writer.write(bytesOf('b'.repeat(40)))!;
  assert.deepEqual([a, b], [0, 40]);
  // 20 bytes remain at the end, but a 30-byte string would wrap over unread bytes.
  assert.equal(writer.write(bytesOf('c'.repeat(30))), null);
  assert.equal(readText(reader, a, 40), 'a'.repeat(40));
  // The first 40 bytes are free now: the string starts at the ring's beginning (position 100).
  const c = writer.write(bytesOf('c'.repeat(30)))!;
  assert.equal(c, 100);
  assert.equal(writer.write(bytesOf('d'.repeat(20))), null, 'only 10 free before the unread b');
  assert.equal(readText(reader, b, 40), 'b'.repeat(40));
  assert.equal(readText(reader, c, 30), 'c'.repeat(30));
  // Everything read: the tail after c fits exactly, and then the whole ring is free.
  const tail = writer.write(bytesOf('t'.repeat(70)))!;
  assert.equal(tail, 130);
  assert.equal(readText(reader, tail, 70), 't'.repeat(70));
  assert.equal(writer.write(new Uint8Array(100)), 200);
});
