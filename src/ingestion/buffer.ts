/**
 * Group commit: requests hand their events to the buffer and wait; the buffer flushes every
 * few milliseconds or as soon as enough events are pending. A flush is planned in memory,
 * appended to the flush log and synced (flush-log.ts: the commit point), applied to the
 * metadata store, and only then are its requests answered: a 200 means "on disk". The event
 * store follows in the background (event-store-feed.ts); after an unclean stop, start-up replays from the
 * log whatever either store had not taken.
 */
import type { JsonObject } from '../kernel/json.js';
import type { Logger } from '../kernel/logger.js';
import type { Metrics } from '../kernel/metrics.js';
import type { Stores } from '../store/index.js';
import type { EventStorePosition, IngestSnapshot } from '../store/types.js';
import { repairWithoutFlushLog } from '../store/index.js';
import { PersonsChangedError, refusesContent } from '../store/errors.js';
import { encodeFlushRecord, sharedBytes, type EncodedFlush } from '../store/flush-record.js';
import { afterIo } from '../util/after-io.js';
import { SharedArena } from '../util/shared-arena.js';
import { DefinitionCache } from './plan/definitions.js';
import { FlushLog } from './flush-log.js';
import { EventStoreFeed, type FeedOptions } from './event-store-feed.js';
import { addCachedPersons, PersonCache } from './person-cache.js';
import { plan, snapshotRequest, type PendingEvent } from './plan/plan.js';

export interface BufferOptions {
  flushIntervalMs: number;
  flushMaxEvents: number;
  maxPendingEvents: number;
  personCacheSize: number;
  /** Folder of the flush log's segments. */
  logDir: string;
  /** Shared memory kept for flush records, reused from their encoding until the event store has them. */
  recordMemoryBytes: number;
  feed: FeedOptions;
  enrich?: (properties: JsonObject) => void;
  /**
   * Fault tests only: the process SIGKILLs itself right after its n-th metadata commit, before
   * the event store has that flush (the crash that is hardest to recover from). 0: never.
   */
  killAfterMetaCommits?: number;
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

export class BufferFullError extends Error {}

/**
 * A flush that failed because of what its events hold (planning, encoding, or the metadata
 * store refusing its changes), not because the flush log or the stores are out of reach.
 */
class FlushContentError extends Error {
  constructor(override readonly cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = 'FlushContentError';
  }
}

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

/**
 * Times a flush is planned again when another node changed its persons first. Each replan sees
 * that node's commit, so more than one happens only under a stream of changes to one person.
 */
const REPLANS = 5;

/** How long a flush waits for the event store to fall below its lag bound before its requests get 503. */
const ROOM_WAIT_MS = 5_000;

export class IngestBuffer {
  private pending: Entry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  /** Flushes and `betweenFlushes` work take turns through this chain, one at a time. */
  private turn: Promise<unknown> = Promise.resolve();
  private nextSeq = 0;
  /** Metadata commits since start (for `killAfterMetaCommits`). */
  private metaCommits = 0;
  /** Highest flush acknowledged (in the flush log and the metadata store). */
  private committedSeq = 0;
  private closed = false;
  /** `submitWhenRoom` calls waiting for pending events to be taken. */
  private readonly roomWaiters: (() => void)[] = [];
  readonly definitions = new DefinitionCache();
  private readonly persons: PersonCache;
  /** Memory for flush records, given back once the event store wrote them. */
  private readonly recordMemory: SharedArena;
  private flushLog!: FlushLog;
  private feed!: EventStoreFeed;
  /** Last flush failure, cleared by the next successful flush (shown by /_health). */
  lastError: { message: string; at: string } | null = null;

  constructor(
    private readonly stores: Stores,
    private readonly options: BufferOptions,
    private readonly metrics: Metrics,
    private readonly log: Logger,
  ) {
    this.persons = new PersonCache(options.personCacheSize);
    this.recordMemory = new SharedArena(options.recordMemoryBytes);
  }

  /**
   * Memory for a record: from the arena, or memory of its own when the arena is taken (a burst,
   * or the event store behind; the feed's byte bound limits how much that can be). The arena
   * saves fresh memory's page faults and zeroing in steady traffic; its size is what stays
   * resident after a burst.
   */
  private recordBytes(length: number): Buffer {
    return this.recordMemory.take(length) ?? sharedBytes(length);
  }

  /**
   * For an idle server: the person cache and the records' arena are kept for steady traffic,
   * and what a burst left in them would otherwise stay resident. The next flush loads its
   * persons from the store again.
   */
  releaseIdleMemory(): void {
    this.persons.clear();
    this.recordMemory.releaseIfUnused();
  }

  /**
   * Opens the flush log and brings both stores up to it: a store that missed acknowledged
   * flushes (the process died, or the power went, before it had them) gets them replayed.
   * Returns what the event store held before the replay.
   */
  async start(): Promise<EventStorePosition> {
    const { meta, events } = this.stores;
    const { flushLog, records } = await FlushLog.open(this.options.logDir, { beforeSeal: () => meta.ingest.makeDurable() }, this.log);
    this.flushLog = flushLog;
    let metaSeq = await meta.ingest.committedFlushSeq();
    const eventPosition = await events.position();
    const eventSeq = eventPosition.seq;
    if (metaSeq > eventSeq && !records.some((record) => record.changes.flushSeq === metaSeq)) {
      await repairWithoutFlushLog(this.stores, this.log);
      metaSeq = eventSeq;
    }
    const missed = records.filter((record) => record.changes.flushSeq > Math.min(metaSeq, eventSeq));
    if (missed.length > 0) {
      this.log.warn({ flushes: missed.length, from: missed[0].changes.flushSeq, metaSeq, eventSeq }, REPLAY_MESSAGE);
    }
    for (const { changes } of missed) {
      if (changes.flushSeq <= metaSeq) continue;
      await meta.ingest.applyChanges(changes);
      metaSeq = changes.flushSeq;
    }
    // What the metadata store holds now (replayed, or committed by the last run without an
    // fsync) must survive a power cut before any log segment is let go.
    await meta.ingest.makeDurable();
    this.committedSeq = Math.max(metaSeq, eventSeq);
    this.nextSeq = this.committedSeq + 1;
    this.feed = new EventStoreFeed(events, eventPosition, this.options.feed, this.log, (seq, finished) => {
      this.flushLog.release(seq);
      for (const flush of finished) this.recordMemory.release(flush.bytes);
    });
    for (const record of missed) if (record.encoded.seq > eventSeq) this.feed.enqueue(record.encoded);
    this.flushLog.release(eventSeq);
    return eventPosition;
  }

  /** On-disk size of the flush log. */
  get flushLogBytes(): number {
    return this.flushLog.bytes;
  }

  /** Events acknowledged but not yet in the event store. */
  get eventStoreLag(): number {
    return this.feed.lagEvents;
  }

  /** The event store's last write failure, while it lasts (capture still succeeds meanwhile). */
  get eventStoreError(): { message: string; at: string } | null {
    return this.feed.lastError;
  }

  /**
   * Waits until every event acknowledged so far can be queried, at most `timeoutMs`; false when
   * the event store is still behind (queries then see slightly older data).
   */
  eventsQueryable(timeoutMs: number): Promise<boolean> {
    return this.feed.caughtUp(this.committedSeq, timeoutMs);
  }

  /** Waits until the event store holds every flush up to `seq`, at most `timeoutMs`. */
  eventStoreHolds(seq: number, timeoutMs: number): Promise<boolean> {
    return this.feed.caughtUp(seq, timeoutMs);
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

  /**
   * `submit`, once the events fit under the bound: a shared log's consumers wait here rather than
   * be refused, as their batches are acknowledged already and only the pace is theirs to keep.
   */
  async submitWhenRoom(events: PendingEvent[]): Promise<void> {
    while (!this.closed && this.pending.length > 0 && this.pending.length + events.length > this.options.maxPendingEvents) {
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
    }
    return this.submit(events);
  }

  /** Pending events left for a flush: whoever waits for room looks again. */
  private tookPending(): void {
    this.metrics.bufferDepth.set(this.pending.length);
    for (const wake of this.roomWaiters.splice(0)) wake();
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
   * One flush at a time: a flush is main-thread work plus one metadata-store commit, so nothing
   * would run alongside it anyway. Between flushes the event loop polls once, so requests that
   * arrived during a commit join the next flush whole.
   */
  private async flushLoop(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        if (!(await this.feed.room(ROOM_WAIT_MS))) {
          // Not logged, so not acknowledged: the SDKs retry once the event store has caught up.
          const waited = this.pending.splice(0);
          this.tookPending();
          this.failed(new BufferFullError(`the event store is ${this.feed.lagEvents} events behind`), waited);
          continue;
        }
        const entries = this.pending.splice(0, this.options.flushMaxEvents);
        this.tookPending();
        await this.inTurn(() => this.flush(entries));
        await afterIo();
      }
    } finally {
      this.flushing = null;
      if (this.pending.length > 0) this.schedule();
    }
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const result = this.turn.then(work);
    this.turn = result.catch(() => undefined);
    return result;
  }

  /**
   * Runs `work` between two flushes, given the last flush committed before it: every event
   * acknowledged so far is in a flush up to that one, and every later flush reads what `work`
   * committed (the person cache is emptied afterwards, as it may hold what `work` changed).
   */
  betweenFlushes<T>(work: (lastFlushSeq: number) => Promise<T>): Promise<T> {
    return this.inTurn(async () => {
      try {
        return await work(this.committedSeq);
      } finally {
        this.persons.clear();
      }
    });
  }

  /**
   * Flushes `entries`; when what they hold makes the flush fail, flushes each half on its own,
   * down to single events, so that one malformed event is dropped (and counted) while every
   * other event of the group commit is stored. Other failures answer every request with 503.
   */
  private async flush(entries: Entry[]): Promise<void> {
    let error = await this.flushOnce(entries);
    // Another node changed some of its persons between load and apply: plan again on theirs.
    for (let again = 0; error instanceof PersonsChangedError && again < REPLANS; again++) {
      this.metrics.flushReplans.inc();
      error = await this.flushOnce(entries);
    }
    if (error === null) return;
    if (!(error instanceof FlushContentError)) {
      this.failed(error, entries);
      return;
    }
    if (entries.length === 1) {
      this.dropUnstorable(entries[0], error.cause);
      return;
    }
    const half = Math.ceil(entries.length / 2);
    await this.flush(entries.slice(0, half));
    await this.flush(entries.slice(half));
  }

  /** An event that the stores refuse even alone: dropped like an event the guards drop. */
  private dropUnstorable({ item, ticket }: Entry, cause: unknown): void {
    this.metrics.eventsDropped.inc({ reason: 'unstorable' });
    const err = cause instanceof Error ? cause : new Error(String(cause));
    this.log.warn({ err, event: item.event.event, projectId: item.projectId }, 'an event the stores refuse was dropped; the rest of its flush is stored');
    this.settle(ticket);
  }

  private settle(ticket: Ticket): void {
    ticket.remaining -= 1;
    if (ticket.remaining === 0 && !ticket.settled) {
      ticket.settled = true;
      ticket.resolve();
    }
  }

  /** Load, plan, append to the flush log, apply the metadata, answer the requests, then feed the event store. */
  private async flushOnce(entries: Entry[]): Promise<unknown | null> {
    const seq = this.nextSeq++;
    const started = process.hrtime.bigint();
    const batch = entries.map((e) => e.item);
    let encoded: EncodedFlush | null = null;
    try {
      const lap = stopwatch();
      const request = snapshotRequest(batch);
      const cached = this.persons.take(request);
      const snapshot = await this.stores.meta.ingest.loadSnapshot(request);
      addCachedPersons(snapshot, cached);
      const loadMs = lap();
      const flush = this.planOrRefuse(batch, snapshot, seq);
      encoded = encodeFlushRecord(flush, (length) => this.recordBytes(length));
      // Checked at apply time only: a replay of the log applies what was acknowledged as it is.
      flush.changes.personsRead = snapshot.personsRead;
      const planMs = lap();
      await this.flushLog.append(encoded);
      const logMs = lap();
      try {
        await this.stores.meta.ingest.applyChanges(flush.changes);
      } catch (error) {
        // Not acknowledged, so it must not be replayed either (the client's retry will be stored).
        await this.flushLog.undoLastAppend().catch((err: unknown) => this.log.error({ err }, 'could not undo a flush log append; retried before the next one'));
        throw refusesContent(error) ? new FlushContentError(error) : error;
      }
      const commitMs = lap();
      if (++this.metaCommits === this.options.killAfterMetaCommits) process.kill(process.pid, 'SIGKILL');
      this.committedSeq = seq;
      this.persons.remember(snapshot, flush.changes.deletePersons);
      flush.committed();
      this.feed.enqueue(encoded);
      encoded = null; // the feed gives it back once the event store has it
      this.log.debug({ seq, events: entries.length, loadMs, planMs, logMs, commitMs, persons: flush.changes.upsertPersons.length, eventStoreLag: this.feed.lagEvents }, 'flush');
      if (flush.rewritten > 0) this.log.info({ seq, events: flush.rewritten }, REWRITE_MESSAGE);
      this.metrics.eventsIngested.inc(flush.events.length);
      for (const [reason, count] of flush.dropped) this.metrics.eventsDropped.inc({ reason }, count);
      for (const [warning, count] of flush.warnings) this.metrics.ingestionWarnings.inc({ warning }, count);
    } catch (error) {
      // Not acknowledged, so the event store will never read it.
      if (encoded) this.recordMemory.release(encoded.bytes);
      // Planning changes cached persons in place; what was not committed must not be served.
      this.persons.clear();
      return error;
    } finally {
      this.metrics.flushSeconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
    }
    if (this.lastError) this.log.info('ingestion recovered');
    this.lastError = null;
    for (const { ticket } of entries) this.settle(ticket);
    return null;
  }

  /** The flush's plan; an event that makes planning throw refuses the flush's content. */
  private planOrRefuse(batch: PendingEvent[], snapshot: IngestSnapshot, seq: number) {
    try {
      const rewriteRedelivered = this.stores.events.keepsOneRowPerUuid === true;
      return plan(batch, snapshot, seq, { enrich: this.options.enrich, definitions: this.definitions, now: new Date(), rewriteRedelivered });
    } catch (error) {
      throw new FlushContentError(error);
    }
  }

  /** A failed flush: its requests get a 503 and the SDKs retry; uuids make the retry safe. */
  private failed(error: unknown, entries: Entry[]): void {
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

  /**
   * The first step of a shutdown, before the HTTP server drains: requests in flight must not
   * wait for an event store that is behind (the flush log keeps what it lacks).
   */
  beginShutdown(): void {
    this.feed.stopRetrying();
  }

  /**
   * Stops accepting, flushes everything pending, and lets the event store take what it can;
   * the flush log keeps the rest for the next start.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.tookPending(); // a waiting submitWhenRoom is refused now
    this.clearTimer();
    this.feed.stopRetrying();
    while (this.flushing || this.pending.length > 0) {
      if (!this.flushing) this.flushing = this.flushLoop();
      await this.flushing;
    }
    await this.feed.settled();
    await this.flushLog.close(this.feed.writtenSeq);
  }
}

/** Logged when a flush writes again redelivered events that the metadata store already had. */
export const REWRITE_MESSAGE = 'redelivered events the metadata store already had are written to the event store again';
/** Logged at start-up when a store gets acknowledged flushes replayed from the flush log. */
export const REPLAY_MESSAGE = 'replaying acknowledged flushes from the flush log';
