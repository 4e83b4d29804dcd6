/**
 * The record bytes of the write under way in the event store's process, which its caller sends
 * after the write one flush at a time (threaded.ts). A send is answered once the write takes its
 * bytes, so the next one crosses the pipe while this one is appended, and the process holds about
 * two flushes rather than the whole slice.
 */
import { collectGarbage } from '../../util/idle-collect.js';

/**
 * Received flushes are garbage once appended, but V8 counts the few bytes of a Buffer's object,
 * not the megabytes behind it: left alone, ~50 MB of them waited for a collection. One is run
 * each time this much was taken (a collection of the process's ~15 MB heap costs a few ms; one
 * per flush took ~6 % of the ingest benchmark's rate).
 */
const COLLECT_EVERY_BYTES = 16 * 2 ** 20;
let takenSinceCollection = 0;

function collectTaken(): void {
  if (takenSinceCollection < COLLECT_EVERY_BYTES) return;
  takenSinceCollection = 0;
  collectGarbage();
}

export class IncomingFlushes {
  private readonly arrived: { bytes: Uint8Array; taken: () => void; refused: (error: Error) => void }[] = [];
  private taker: ((bytes: Uint8Array) => void) | null = null;
  private ended: Error | null = null;

  /** Resolves when the write takes these bytes; fails once the write has ended. */
  push(bytes: Uint8Array): Promise<void> {
    if (this.ended) return Promise.reject(this.ended);
    const taker = this.taker;
    if (taker) {
      this.taker = null;
      taker(bytes);
      return Promise.resolve();
    }
    return new Promise((taken, refused) => this.arrived.push({ bytes, taken, refused }));
  }

  /** The next flush's bytes, as they arrive. */
  async take(): Promise<Uint8Array> {
    collectTaken();
    const next = this.arrived.shift();
    if (next) next.taken();
    const bytes = next ? next.bytes : await new Promise<Uint8Array>((resolve) => (this.taker = resolve));
    takenSinceCollection += bytes.byteLength;
    return bytes;
  }

  /** The write has ended: bytes waiting or still to come have nowhere to go, and their sends fail. */
  end(): void {
    this.ended = new Error('the write these flushes belong to has ended');
    for (const waiting of this.arrived.splice(0)) waiting.refused(this.ended);
  }
}
