import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ByteRing } from '../../../src/util/byte-ring.js';

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
  const { writer, reader } = ringPair(104);
  assert.equal(writer.write(new Uint8Array(105)), null, 'larger than the ring');
  const a = writer.write(bytesOf('a'.repeat(40)))!;
  const b = writer.write(bytesOf('b'.repeat(40)))!;
  assert.deepEqual([a, b], [0, 40]);
  // 24 bytes remain at the end, but a 30-byte string would wrap over unread bytes.
  assert.equal(writer.write(bytesOf('c'.repeat(30))), null);
  assert.equal(readText(reader, a, 40), 'a'.repeat(40));
  // The first 40 bytes are free now: the string starts at the ring's beginning (position 104).
  const c = writer.write(bytesOf('c'.repeat(30)))!;
  assert.equal(c, 104);
  // The next string starts at the next 8-byte boundary (136), and 8 bytes are free before the unread b.
  assert.equal(writer.write(bytesOf('d'.repeat(9))), null);
  assert.equal(readText(reader, b, 40), 'b'.repeat(40));
  assert.equal(readText(reader, c, 30), 'c'.repeat(30));
  // Everything read: the tail after c fits exactly, and then the whole ring is free.
  const tail = writer.write(bytesOf('t'.repeat(72)))!;
  assert.equal(tail, 136);
  assert.equal(readText(reader, tail, 72), 't'.repeat(72));
  assert.equal(writer.write(new Uint8Array(104)), 208);
});

test('every string starts on an 8-byte boundary, whatever the lengths before it', () => {
  const { writer, reader } = ringPair(1000);
  for (let length = 1; length < 300; length += 7) {
    const position = writer.write(new Uint8Array(length).fill(length))!;
    assert.equal(position % 8, 0, `after a ${length - 7}-byte string`);
    const into = new Uint8Array(length);
    reader.read(position, into);
    assert.ok(into.every((byte) => byte === (length & 255)));
  }
});
