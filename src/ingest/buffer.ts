/**
 * Group commit: requests hand their events to the buffer and wait; the buffer flushes every
 * few milliseconds or as soon as enough events are pending, in one transaction per store, and
 * only then answers every waiting request. A 200 therefore means "on disk".
 */
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { Stores } from '../store/index.js';
import { reconcile } from '../store/index.js';
import { DefinitionCache } from './definitions.js';
import { addCachedPersons, PersonCache } from './person-cache.js';
import { plan, snapshotRequest, type PendingEvent } from './pipeline.js';
import type { JsonObject } from './types.js';

export interface BufferOptions {
  flushIntervalMs: number;
  flushMaxEvents: number;
  maxPendingEvents: number;
  personCacheSize: number;
  enrich?: (properties: JsonObject) => void;
}

/** One request's wait: settled when all of its events are flushed, or when one flush fails. */
interface Ticket {
  remaining: number;
  settled: boolean;
  resolve: () => void;
  reject: (error: Error) => void;
}

interface Entry {
  item: PendingEvent;
  ticket: Ticket;
}

interface PreparedFlush {
  seq: number;
  flush: ReturnType<typeof plan>;
  started: bigint;
  timings: { loadMs: number; planMs: number; metaMs: number };
}

export class BufferFullError extends Error {}

/** Pending events from which the next flush is prepared while the previous one is written. */
const PIPELINE_MIN_EVENTS = 500;

/** Returns a function giving the milliseconds since its previous call. */
function stopwatch(): () => number {
  let last = process.hrtime.bigint();
  return () => {
    const now = process.hrtime.bigint();
    const ms = Number(now - last) / 1e6;
    last = now;
    return Math.round(ms * 10) / 10;
  };
}

export class IngestBuffer {
  private pending: Entry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private nextSeq = 0;
  private needsReconcile = false;
  private closed = false;
  readonly definitions = new DefinitionCache();
  private readonly persons: PersonCache;
  /** Last flush failure, cleared by the next successful flush (shown by /_health). */
  lastError: { message: string; at: string } | null = null;

  constructor(
    private readonly stores: Stores,
    private readonly options: BufferOptions,
    private readonly metrics: Metrics,
    private readonly log: Logger,
  ) {
    this.persons = new PersonCache(options.personCacheSize);
  }

  async start(): Promise<void> {
    const [metaSeq, eventSeq] = await Promise.all([this.stores.meta.ingest.committedFlushSeq(), this.stores.events.committedFlushSeq()]);
    this.nextSeq = Math.max(metaSeq, eventSeq) + 1;
  }

  get depth(): number {
    return this.pending.length;
  }

  get saturated(): boolean {
    return this.pending.length >= this.options.maxPendingEvents;
  }

  /** Resolves once the events are durably stored; rejects when the flush failed. */
  submit(events: PendingEvent[]): Promise<void> {
    if (this.closed) return Promise.reject(new BufferFullError('shutting down'));
    if (events.length === 0) return Promise.resolve();
    if (this.pending.length + events.length > this.options.maxPendingEvents && this.pending.length > 0) {
      return Promise.reject(new BufferFullError('ingestion buffer is full'));
    }
    const done = new Promise<void>((resolve, reject) => {
      const ticket: Ticket = { remaining: events.length, settled: false, resolve, reject };
      for (const item of events) this.pending.push({ item, ticket });
    });
    this.metrics.bufferDepth.set(this.pending.length);
    this.schedule();
    return done;
  }

  private schedule(): void {
    if (this.flushing) return; // the running flush reschedules when it ends
    if (this.pending.length >= this.options.flushMaxEvents) {
      this.clearTimer();
      this.flushing = this.flushLoop();
    } else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        if (!this.flushing) this.flushing = this.flushLoop();
      }, this.options.flushIntervalMs);
    }
  }

  private clearTimer(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }

  /**
   * Flushes are pipelined two deep: while the event store writes flush N (on DuckDB's own
   * threads), flush N+1 is loaded, planned and committed to the metadata store. The metadata of
   * a flush is always committed before its events, and events are written in flush order, so the
   * crash-recovery rule of store/index.ts still holds.
   *
   * Only a big batch is worth preparing early. A small one waits for the write in flight and
   * then takes everything that arrived meanwhile: each write costs milliseconds whatever its
   * size, so under many small requests fewer, fuller flushes answer sooner.
   */
  private async flushLoop(): Promise<void> {
    let lastWrite: Promise<void> = Promise.resolve();
    try {
      while (this.pending.length > 0) {
        if (this.pending.length < PIPELINE_MIN_EVENTS) await lastWrite;
        const entries = this.pending.splice(0, this.options.flushMaxEvents);
        this.metrics.bufferDepth.set(this.pending.length);
        const prepared = await this.prepare(entries, lastWrite);
        if (prepared) {
          const previous = lastWrite;
          lastWrite = previous.then(() => this.write(prepared, entries));
          await previous; // at most two flushes in flight
        }
      }
      await lastWrite;
    } finally {
      this.flushing = null;
      if (this.pending.length > 0) this.schedule();
    }
  }

  /** Load, plan and commit the metadata of one batch; null (requests answered 503) on failure. */
  private async prepare(entries: Entry[], lastWrite: Promise<void>): Promise<PreparedFlush | null> {
    const seq = this.nextSeq++;
    const started = process.hrtime.bigint();
    const batch = entries.map((e) => e.item);
    try {
      if (this.needsReconcile) {
        await lastWrite; // recovery must not race an event write still in flight
        await reconcile(this.stores, this.log);
        this.needsReconcile = false;
      }
      const lap = stopwatch();
      const request = snapshotRequest(batch);
      const cached = this.persons.take(request);
      const snapshot = await this.stores.meta.ingest.loadSnapshot(request);
      addCachedPersons(snapshot, cached);
      const loadMs = lap();
      const flush = plan(batch, snapshot, seq, { enrich: this.options.enrich, definitions: this.definitions, now: new Date() });
      const planMs = lap();
      await this.stores.meta.ingest.applyChanges(flush.meta);
      this.persons.remember(snapshot, flush.meta.deletePersons);
      const metaMs = lap();
      return { seq, flush, started, timings: { loadMs, planMs, metaMs } };
    } catch (error) {
      // Planning changes cached persons in place; what was not committed must not be served.
      this.persons.clear();
      this.failed(error, entries);
      return null;
    }
  }

  /** Writes the events of a prepared flush and answers its requests. Never rejects. */
  private async write(prepared: PreparedFlush, entries: Entry[]): Promise<void> {
    const { seq, flush } = prepared;
    try {
      // After a failed write the metadata store is ahead of the event store; nothing more may be
      // written until recovery has undone that, or a later flush could hide the gap.
      if (this.needsReconcile) throw new Error('an earlier flush failed; waiting for recovery');
      const lap = stopwatch();
      await this.stores.events.write(flush.events);
      const eventsMs = lap();
      flush.committed();
      this.log.debug({ seq, events: entries.length, ...prepared.timings, eventsMs, persons: flush.meta.upsertPersons.length }, 'flush');
      this.metrics.eventsIngested.inc(flush.events.events.length);
      for (const [reason, count] of flush.dropped) this.metrics.eventsDropped.inc({ reason }, count);
      for (const [warning, count] of flush.warnings) this.metrics.ingestionWarnings.inc({ warning }, count);
      if (this.lastError) this.log.info('ingestion recovered');
      this.lastError = null;
      for (const { ticket } of entries) {
        ticket.remaining -= 1;
        if (ticket.remaining === 0 && !ticket.settled) {
          ticket.settled = true;
          ticket.resolve();
        }
      }
    } catch (error) {
      this.failed(error, entries);
    } finally {
      this.metrics.flushSeconds.observe(Number(process.hrtime.bigint() - prepared.started) / 1e9);
    }
  }

  /** A failed flush: its requests get a 503 and the SDKs retry; uuids make the retry safe. */
  private failed(error: unknown, entries: Entry[]): void {
    this.needsReconcile = true;
    this.metrics.flushFailures.inc();
    const err = error instanceof Error ? error : new Error(String(error));
    if (!this.lastError) this.log.error({ err, events: entries.length }, 'flush failed; the requests get 503 and clients retry');
    this.lastError = { message: err.message, at: new Date().toISOString() };
    for (const { ticket } of entries) {
      if (!ticket.settled) {
        ticket.settled = true;
        ticket.reject(err);
      }
    }
  }

  /** Stops accepting and flushes everything pending. */
  async close(): Promise<void> {
    this.closed = true;
    this.clearTimer();
    while (this.flushing || this.pending.length > 0) {
      if (!this.flushing) this.flushing = this.flushLoop();
      await this.flushing;
    }
  }
}
