/**
 * The event store follows the flush log. A flush is acknowledged once it is in the flush log and
 * the metadata store; the feed then hands acknowledged events to the event store, in order, in
 * the background. Event-store pauses (a checkpoint, a full disk) therefore delay queries of the
 * newest events, never the capture answers, and what the event store has not taken yet is
 * replayed from the flush log after a crash.
 *
 * Writes are shaped for the event store: as soon as a whole number of its write units is queued,
 * exactly that many events are written, even if that ends inside a flush (DuckDB then writes
 * whole row groups straight to its file). A remainder waits until somebody needs it: a query
 * waiting to see acknowledged events, the oldest queued flush reaching `maxDelayMs`, the queue
 * reaching `writeAtBytes` (large events), or shutdown.
 *
 * After a failed write (a full disk, say) the next ones are smaller, halving down to a single
 * flush, until one succeeds: a smaller write needs less free space, and every flush it moves
 * lets the flush log give some back.
 *
 * Bounded: past `maxLagEvents` queued events or `maxLagBytes` of records, the buffer waits for room, a few seconds at most,
 * then answers the waiting requests 503 (SDKs retry), so a failing event store can neither grow
 * memory without limit nor hold requests open.
 *
 * A queued flush's person records were serialised when it was logged, so later flushes changing
 * the same persons cannot alter what an earlier write mirrors.
 */
import type { Logger } from '../kernel/logger.js';
import { positionAfter, sliceEvents } from '../store/event-slice.js';
import type { EncodedFlush, EventSlice, EventStore, EventStorePosition } from '../store/types.js';

export interface FeedOptions {
  maxLagEvents: number;
  /** Bytes of queued flush records past which the buffer waits for room (they are held in memory). */
  maxLagBytes: number;
  /** Events per event-store write, at most (at least one write unit). */
  maxEventsPerWrite: number;
  /** How long queued events may wait for a whole write unit to fill. */
  maxDelayMs: number;
  /** Queued bytes past which events are written without waiting for a whole unit (disk and memory bound). */
  writeAtBytes: number;
}

const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

interface Queued {
  flush: EncodedFlush;
  /** When it was queued (ms), for `maxDelayMs`. */
  at: number;
}

interface Waiter {
  seq: number;
  resolve: () => void;
}

export class EventStoreFeed {
  private readonly queue: Queued[] = [];
  /** Events of the queued flushes, those of the first one already stored included. */
  private queuedEvents = 0;
  /** Bytes of the queued flushes. */
  private queuedBytes = 0;
  private running: Promise<void> | null = null;
  private closing = false;
  private caughtUpWaiters: Waiter[] = [];
  private roomWaiters: (() => void)[] = [];
  /** Events the next write may hold after failures (halved by each one), or null when unlimited. */
  private careful: number | null = null;
  private wake: (() => void) | null = null;
  private wakeTimer: NodeJS.Timeout | null = null;
  /** Last event-store failure, cleared by the next successful write (shown by /_health). */
  lastError: { message: string; at: string } | null = null;

  constructor(
    private readonly events: EventStore,
    /** What the event store holds. */
    private position: EventStorePosition,
    private readonly options: FeedOptions,
    private readonly log: Logger,
    /**
     * Told after every write the event store committed: the last whole flush it now has, and the
     * flushes that write finished (nothing reads their bytes any more).
     */
    private readonly onWritten: (seq: number, finished: EncodedFlush[]) => void = () => undefined,
  ) {}

  /** The last flush the event store holds whole. */
  get writtenSeq(): number {
    return this.position.seq;
  }

  /** Acknowledged events the event store does not hold yet. */
  get lagEvents(): number {
    return this.queuedEvents - (this.queue.length > 0 ? this.position.events : 0);
  }

  enqueue(flush: EncodedFlush): void {
    this.queue.push({ flush, at: Date.now() });
    this.queuedEvents += flush.events;
    this.queuedBytes += flush.bytes.length;
    this.nudge();
    this.running ??= this.run().finally(() => (this.running = null));
  }

  private hasRoom(): boolean {
    return this.lagEvents < this.options.maxLagEvents && this.queuedBytes < this.options.maxLagBytes;
  }

  /** True when the queue is below its bounds (at once, or within `timeoutMs`); false when it stayed full. */
  room(timeoutMs: number): Promise<boolean> {
    if (this.closing || this.hasRoom()) return Promise.resolve(true);
    return waitAtMost(
      timeoutMs,
      (ready) => this.roomWaiters.push(ready),
      (ready) => (this.roomWaiters = this.roomWaiters.filter((w) => w !== ready)),
    );
  }

  /** True once every flush up to `seq` is in the event store; false if `timeoutMs` passes first. */
  caughtUp(seq: number, timeoutMs: number): Promise<boolean> {
    if (this.position.seq >= seq || this.queue.length === 0) return Promise.resolve(true);
    const caughtUp = waitAtMost(
      timeoutMs,
      (ready) => this.caughtUpWaiters.push({ seq, resolve: ready }),
      (ready) => (this.caughtUpWaiters = this.caughtUpWaiters.filter((w) => w.resolve !== ready)),
    );
    this.nudge(); // somebody needs the remainder now
    return caughtUp;
  }

  private async run(): Promise<void> {
    let retryMs = RETRY_FIRST_MS;
    while (this.queue.length > 0) {
      const slice = this.nextSlice();
      if (!slice) {
        await this.idle();
        continue;
      }
      try {
        await this.events.write(slice);
        if (this.lastError) this.log.info('event store writes recovered');
        this.lastError = null;
        this.careful = null;
        retryMs = RETRY_FIRST_MS;
        this.advance(positionAfter(slice));
      } catch (error) {
        const err = error instanceof Error ? error : new Error(String(error));
        if (!this.lastError) this.log.error({ err }, 'event store write failed; retrying (acknowledged events are kept in the flush log)');
        this.lastError = { message: err.message, at: new Date().toISOString() };
        this.careful = Math.max(1, Math.floor(sliceEvents(slice) / 2));
        if (this.closing) return; // the flush log replays the rest at the next start
        await sleep(retryMs);
        if (this.closing) return;
        retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
        // A write can fail after its commit went through (an error while reporting it): skip
        // whatever the store already has, or its events would be appended twice.
        const stored = await this.events.position().catch(() => this.position);
        if (stored.seq > this.position.seq || (stored.seq === this.position.seq && stored.events > this.position.events)) this.advance(stored);
      }
    }
  }

  /**
   * The next write: whole write units when that many events are queued; everything queued when
   * it is needed now; otherwise nothing yet.
   */
  private nextSlice(): EventSlice | null {
    const unit = this.events.writeUnit;
    const available = this.lagEvents;
    const cap = Math.max(unit, this.options.maxEventsPerWrite);
    const urgent =
      this.closing ||
      this.caughtUpWaiters.length > 0 ||
      this.queuedBytes >= this.options.writeAtBytes ||
      Date.now() - this.queue[0].at >= this.options.maxDelayMs;
    let take: number;
    if (this.careful !== null) take = Math.min(available, this.careful);
    else if (available >= unit) take = Math.floor(Math.min(available, cap) / unit) * unit;
    else if (urgent) take = available;
    else return null;

    const from = this.position.events;
    const flushes: EncodedFlush[] = [];
    let remaining = take;
    let to = 0;
    for (let i = 0; i < this.queue.length; i++) {
      const flush = this.queue[i].flush;
      const start = i === 0 ? from : 0;
      flushes.push(flush);
      if (flush.events - start >= remaining) {
        to = start + remaining;
        break;
      }
      remaining -= flush.events - start;
      to = flush.events;
    }
    return { flushes, from, to, after: this.position.seq };
  }

  /** Waits until something may have changed: a new flush, a waiting query, shutdown, or the delay. */
  private idle(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      const waited = Date.now() - this.queue[0].at;
      this.wakeTimer = setTimeout(() => this.nudge(), Math.max(0, this.options.maxDelayMs - waited));
      this.wakeTimer.unref();
    });
  }

  private nudge(): void {
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = null;
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** The event store now holds everything up to `position`. */
  private advance(position: EventStorePosition): void {
    const finished: EncodedFlush[] = [];
    while (this.queue.length > 0 && this.queue[0].flush.seq <= position.seq) {
      const { flush } = this.queue.shift()!;
      this.queuedEvents -= flush.events;
      this.queuedBytes -= flush.bytes.length;
      finished.push(flush);
    }
    this.position = position;
    const ready = this.caughtUpWaiters.filter((w) => w.seq <= position.seq);
    if (ready.length > 0) {
      this.caughtUpWaiters = this.caughtUpWaiters.filter((w) => w.seq > position.seq);
      for (const waiter of ready) waiter.resolve();
    }
    if (this.hasRoom()) {
      const waiting = this.roomWaiters;
      this.roomWaiters = [];
      for (const resolve of waiting) resolve();
    }
    this.onWritten(position.seq, finished);
  }

  /**
   * Shutdown: what is queued is written now, whole units or not; a failed write is not retried
   * (the flush log keeps what is left for the next start), and nobody waits for room any more.
   */
  stopRetrying(): void {
    this.closing = true;
    for (const resolve of this.roomWaiters) resolve();
    this.roomWaiters = [];
    this.nudge();
  }

  /** Resolves when nothing is being written (everything queued is written, or a write failed). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }
}

/** True once `add`'s callback is called; false if `timeoutMs` passes first (the callback is then `remove`d). */
function waitAtMost(timeoutMs: number, add: (ready: () => void) => void, remove: (ready: () => void) => void): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      remove(ready);
      resolve(false);
    }, timeoutMs);
    const ready = () => {
      clearTimeout(timer);
      resolve(true);
    };
    add(ready);
  });
}
