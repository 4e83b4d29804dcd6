/**
 * A ring of shared memory that one thread writes byte strings into and another reads them out
 * of, in the same order. The writer sends each string's position by message; the reader copies
 * the bytes out when the message arrives and publishes how far it has read, which frees that
 * space for the writer. Used for flag answers (flag-threads.ts): bytes that cross threads inside
 * a message arrive in a fresh ArrayBuffer each, whose allocation drove the main thread's garbage
 * collections.
 *
 * Positions count bytes written since the start (they do not wrap), so they are safe integers
 * for centuries at any rate. A string that would run past the end starts at the ring's
 * beginning; the skipped tail is freed with it.
 *
 * Strings start on 8-byte boundaries: V8 copies to and from shared memory with relaxed atomic
 * stores, word by word when both ends are aligned but byte by byte otherwise, which made a
 * 12 KB copy ~3.6 µs instead of ~0.5 µs (each way) on the machine of docs/benchmarks.md.
 */
const HEADER_BYTES = 8;
const ALIGNMENT = 8;

export class ByteRing {
  private readonly consumed: BigInt64Array;
  private readonly data: Uint8Array;
  /** Writer only: the position after the last string written. */
  private written = 0;

  /** A ring's memory, to share with the other thread (`capacity` bytes of strings). */
  static memory(capacity: number): SharedArrayBuffer {
    return new SharedArrayBuffer(HEADER_BYTES + Math.ceil(capacity / ALIGNMENT) * ALIGNMENT);
  }

  constructor(memory: SharedArrayBuffer) {
    this.consumed = new BigInt64Array(memory, 0, 1);
    this.data = new Uint8Array(memory, HEADER_BYTES);
  }

  /**
   * Writer: copies `bytes` in and returns their position, or null when the reader has not yet
   * freed enough room (or they are larger than the ring): send them another way then.
   */
  write(bytes: Uint8Array): number | null {
    const capacity = this.data.length;
    let position = this.written;
    const offset = position % capacity;
    if (offset + bytes.length > capacity) position += capacity - offset;
    if (position + bytes.length - Number(Atomics.load(this.consumed, 0)) > capacity) return null;
    this.data.set(bytes, position % capacity);
    this.written = Math.ceil((position + bytes.length) / ALIGNMENT) * ALIGNMENT;
    return position;
  }

  /**
   * Reader: copies the string written at `position` into `into` (its length is the string's)
   * and frees its room. Strings must be read in the order they were written.
   */
  read(position: number, into: Uint8Array): void {
    const offset = position % this.data.length;
    into.set(this.data.subarray(offset, offset + into.length));
    Atomics.store(this.consumed, 0, BigInt(position + into.length));
  }
}
