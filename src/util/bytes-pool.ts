/**
 * Reusable memory for bytes that are written once, read for a while, then dropped: flush
 * records (shared memory, read by the flush log's and the event store's threads without copies)
 * and flag answers (sent on a socket). Fresh memory costs its page faults and zeroing on first
 * touch, and fresh ArrayBuffers drive V8's garbage collections by their external size: on the
 * 2-core VM of docs/benchmarks.md a fresh record was ~10 µs per 3 KB event, more than everything
 * else its encoding does, and a fresh 12 KB buffer per `/flags` answer cost ~15 % of the rate.
 *
 * Memory is handed out in power-of-two size classes and comes back through `recycle` once
 * nothing will read it again; at most `maxPooledBytes` wait in the pool, the rest is left to the
 * garbage collector. Recycling is optional: memory never given back is simply collected.
 */
export interface BytesPoolOptions {
  /** SharedArrayBuffers (to hand to other threads) or plain ArrayBuffers. */
  shared: boolean;
  minClassBytes: number;
  maxPooledBytes: number;
}

export class BytesPool {
  private readonly free = new Map<number, Set<ArrayBufferLike>>();
  private pooledBytes = 0;

  constructor(private readonly options: BytesPoolOptions) {}

  /** `length` bytes, not zeroed: the caller writes every byte it uses. */
  take(length: number): Buffer {
    const size = this.sizeClass(length);
    const list = this.free.get(size);
    const memory = list?.values().next().value as ArrayBufferLike | undefined;
    if (list && memory) {
      list.delete(memory);
      this.pooledBytes -= size;
      return Buffer.from(memory, 0, length);
    }
    return Buffer.from(this.options.shared ? new SharedArrayBuffer(size) : new ArrayBuffer(size), 0, length);
  }

  /** Gives back memory from `take` that nobody reads any more. */
  recycle(bytes: Uint8Array): void {
    const memory = bytes.buffer;
    if (memory instanceof SharedArrayBuffer !== this.options.shared) return;
    if (memory.byteLength !== this.sizeClass(memory.byteLength)) return;
    if (this.pooledBytes + memory.byteLength > this.options.maxPooledBytes) return;
    let list = this.free.get(memory.byteLength);
    if (!list) this.free.set(memory.byteLength, (list = new Set()));
    // Recycled twice: it is kept once, or two takers would share it.
    if (list.has(memory)) return;
    list.add(memory);
    this.pooledBytes += memory.byteLength;
  }

  /** Bytes waiting in the pool. */
  get size(): number {
    return this.pooledBytes;
  }

  private sizeClass(length: number): number {
    let size = this.options.minClassBytes;
    while (size < length) size *= 2;
    return size;
  }
}
