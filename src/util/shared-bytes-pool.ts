/**
 * Reusable shared memory for flush records. Every flush needs a few megabytes that the flush
 * log's file thread and the event store's thread read without copies (a SharedArrayBuffer). A
 * fresh one costs its page faults and zeroing on first touch: on the 2-core VM of
 * docs/benchmarks.md that was ~10 µs per 3 KB event, more than everything else the record's
 * encoding does. Recycled memory has neither.
 *
 * Memory is handed out in power-of-two size classes and comes back through `recycle` once no
 * thread will read it again; at most `maxPooledBytes` wait in the pool, the rest is left to the
 * garbage collector. Recycling is optional: memory never given back is simply collected.
 */
const MIN_CLASS_BYTES = 64 * 1024;

export class SharedBytesPool {
  private readonly free = new Map<number, SharedArrayBuffer[]>();
  private pooledBytes = 0;

  constructor(private readonly maxPooledBytes: number) {}

  /** `length` bytes of shared memory, not zeroed: the caller writes every byte it uses. */
  take(length: number): Buffer {
    const size = sizeClass(length);
    const memory = this.free.get(size)?.pop();
    if (memory) {
      this.pooledBytes -= size;
      return Buffer.from(memory, 0, length);
    }
    return Buffer.from(new SharedArrayBuffer(size), 0, length);
  }

  /** Gives back memory from `take` that nobody reads any more. */
  recycle(bytes: Uint8Array): void {
    const memory = bytes.buffer;
    if (!(memory instanceof SharedArrayBuffer) || memory.byteLength !== sizeClass(memory.byteLength)) return;
    if (this.pooledBytes + memory.byteLength > this.maxPooledBytes) return;
    let list = this.free.get(memory.byteLength);
    if (!list) this.free.set(memory.byteLength, (list = []));
    if (list.includes(memory)) return; // recycled twice: keep one entry, or two takers would share it
    list.push(memory);
    this.pooledBytes += memory.byteLength;
  }

  /** Bytes waiting in the pool. */
  get size(): number {
    return this.pooledBytes;
  }
}

function sizeClass(length: number): number {
  let size = MIN_CLASS_BYTES;
  while (size < length) size *= 2;
  return size;
}
