/**
 * The event store follows the flush log. A flush is acknowledged once it is in the flush log and
 * the metadata store; the mirror then writes acknowledged flushes to the event store in order,
 * several at a time, in the background. Event-store pauses (a checkpoint, a full disk) therefore
 * delay queries of the newest events, never the capture answers, and what the event store has
 * not taken yet is replayed from the flush log after a crash.
 *
 * A queued flush's person records are the planner's objects and may be changed by later
 * flushes before they are written; the mirror then writes a later state of the same person,
 * which the later flush writes again anyway.
 *
 * Bounded: past `maxLagEvents` queued events the buffer waits (and capture turns to 503 once its
 * own queue is full), so a failing event store cannot grow memory without limit.
 */
import type { Logger } from '../logger.js';
import type { EncodedFlush, EventStore } from '../store/types.js';

export interface MirrorOptions {
  maxLagEvents: number;
  /** Events per event-store transaction, at most (a single larger flush goes alone). */
  maxEventsPerWrite: number;
}

const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

interface Waiter {
  seq: number;
  resolve: () => void;
}

export class EventMirror {
  private readonly queue: EncodedFlush[] = [];
  private queuedEvents = 0;
  private running: Promise<void> | null = null;
  private closing = false;
  private caughtUpWaiters: Waiter[] = [];
  private roomWaiters: (() => void)[] = [];
  /** Last event-store failure, cleared by the next successful write (shown by /_health). */
  lastError: { message: string; at: string } | null = null;

  constructor(
    private readonly events: EventStore,
    /** Highest flush the event store has committed. */
    private mirrored: number,
    private readonly options: MirrorOptions,
    private readonly log: Logger,
    /** Told after every write the event store committed, with the highest flush it now has. */
    private readonly onWritten: (seq: number) => void = () => undefined,
  ) {}

  get mirroredSeq(): number {
    return this.mirrored;
  }

  /** Events committed to the metadata store and not yet to the event store. */
  get lagEvents(): number {
    return this.queuedEvents;
  }

  enqueue(write: EncodedFlush): void {
    this.queue.push(write);
    this.queuedEvents += write.events;
    this.running ??= this.run().finally(() => (this.running = null));
  }

  /** Resolves when the queue is below its bound. */
  room(): Promise<void> {
    if (this.closing || this.queuedEvents < this.options.maxLagEvents) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** True once every flush up to `seq` is in the event store; false if `timeoutMs` passes first. */
  caughtUp(seq: number, timeoutMs: number): Promise<boolean> {
    if (this.mirrored >= seq) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.caughtUpWaiters = this.caughtUpWaiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      const waiter: Waiter = {
        seq,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      this.caughtUpWaiters.push(waiter);
    });
  }

  private async run(): Promise<void> {
    let retryMs = RETRY_FIRST_MS;
    while (this.queue.length > 0) {
      const batches = this.nextBatches();
      try {
        await this.events.write(batches);
        if (this.lastError) this.log.info('event store writes recovered');
        this.lastError = null;
        retryMs = RETRY_FIRST_MS;
        this.advance(batches[batches.length - 1].seq);
        this.onWritten(this.mirrored);
      } catch (error) {
        const err = error instanceof Error ? error : new Error(String(error));
        if (!this.lastError) this.log.error({ err }, 'event store write failed; retrying (acknowledged events are kept in the flush log)');
        this.lastError = { message: err.message, at: new Date().toISOString() };
        if (this.closing) return; // the flush log replays the rest at the next start
        await sleep(retryMs);
        if (this.closing) return;
        retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
        // A write can fail after its commit went through (an error while reporting it): skip
        // whatever the store already has, or its events would be appended twice.
        const committed = await this.events.committedFlushSeq().catch(() => this.mirrored);
        if (committed > this.mirrored) {
          this.advance(committed);
          this.onWritten(this.mirrored);
        }
      }
    }
  }

  /** The oldest queued flushes, up to `maxEventsPerWrite` events (at least one flush). */
  private nextBatches(): EncodedFlush[] {
    const batches = [this.queue[0]];
    let events = this.queue[0].events;
    for (let i = 1; i < this.queue.length; i++) {
      events += this.queue[i].events;
      if (events > this.options.maxEventsPerWrite) break;
      batches.push(this.queue[i]);
    }
    return batches;
  }

  /** Marks every queued flush up to `seq` as in the event store. */
  private advance(seq: number): void {
    while (this.queue.length > 0 && this.queue[0].seq <= seq) this.queuedEvents -= this.queue.shift()!.events;
    this.mirrored = Math.max(this.mirrored, seq);
    const ready = this.caughtUpWaiters.filter((w) => w.seq <= this.mirrored);
    if (ready.length > 0) {
      this.caughtUpWaiters = this.caughtUpWaiters.filter((w) => w.seq > this.mirrored);
      for (const waiter of ready) waiter.resolve();
    }
    if (this.queuedEvents < this.options.maxLagEvents) {
      const waiting = this.roomWaiters;
      this.roomWaiters = [];
      for (const resolve of waiting) resolve();
    }
  }

  /**
   * Shutdown: from now on a failed write is not retried (the flush log keeps what is left for the
   * next start), and nobody waits for room any more.
   */
  stopRetrying(): void {
    this.closing = true;
    for (const resolve of this.roomWaiters) resolve();
    this.roomWaiters = [];
  }

  /** Resolves when nothing is being written (everything queued is written, or a write failed). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }
}
