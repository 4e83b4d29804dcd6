/**
 * One SharedArrayBuffer handed out as consecutive slices, given back roughly in the order they
 * were taken (a ring). Flush records live here in steady traffic: the flush log's thread and the
 * event store's read them without copies, fresh memory's page faults and zeroing are paid once,
 * and the threads they are sent to hold no memory of their own for them.
 *
 * A slice given back out of order (a flush that failed) is reused once every slice before it
 * has come back too.
 */
interface Slice {
  start: number;
  end: number;
  released: boolean;
}

export class SharedArena {
  /** Allocated at the first `take` after the start or after `releaseIfUnused`. */
  private memory: SharedArrayBuffer | null = null;
  /** Live slices, oldest first. */
  private readonly live: Slice[] = [];
  private readonly byStart = new Map<number, Slice>();
  private usedBytes = 0;

  constructor(readonly capacity: number) {}

  /** `length` bytes (not zeroed), or null when they do not fit until older slices come back. */
  take(length: number): Buffer | null {
    if (length <= 0 || length > this.capacity) return null;
    const start = this.placeFor(length);
    if (start === null) return null;
    this.memory ??= new SharedArrayBuffer(this.capacity);
    const slice = { start, end: start + length, released: false };
    this.live.push(slice);
    this.byStart.set(start, slice);
    this.usedBytes += length;
    return Buffer.from(this.memory, start, length);
  }

  /** Gives back a slice from `take`; anything else is ignored. */
  release(bytes: Uint8Array): void {
    if (this.memory === null || bytes.buffer !== this.memory) return;
    const slice = this.byStart.get(bytes.byteOffset);
    if (!slice || slice.released) return;
    slice.released = true;
    this.usedBytes -= slice.end - slice.start;
    while (this.live.length > 0 && this.live[0].released) this.byStart.delete(this.live.shift()!.start);
  }

  /**
   * Drops the memory when no slice is out: it is freed once the threads the slices were sent to
   * let go of it too (they stop when idle), and allocated again by the next `take`. Once touched
   * it stays resident otherwise, a burst's worth in a server that has gone quiet.
   */
  releaseIfUnused(): void {
    if (this.live.length === 0) this.memory = null;
  }

  /** Whether `bytes` is a slice of this arena. */
  owns(bytes: Uint8Array): boolean {
    return bytes.buffer === this.memory;
  }

  /** Bytes in slices not given back yet. */
  get used(): number {
    return this.usedBytes;
  }

  /** Where a slice of `length` bytes can start now. */
  private placeFor(length: number): number | null {
    if (this.live.length === 0) return 0;
    const oldest = this.live[0].start;
    const head = this.live[this.live.length - 1].end;
    if (head > oldest) {
      // Not wrapped: room after the newest slice, else at the beginning before the oldest.
      if (head + length <= this.capacity) return head;
      return length <= oldest ? 0 : null;
    }
    // Wrapped: room between the newest slice and the oldest.
    return head + length <= oldest ? head : null;
  }
}
