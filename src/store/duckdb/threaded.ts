/**
 * The DuckDB event store in a child process. @duckdb/node-api's appender calls are synchronous
 * (~15 µs an event), and reading results into JS objects is too: on the main thread they took
 * turns with HTTP, capture decoding and flag evaluation. Here every EventStore call is a message
 * to the child process that owns the database (util/child-worker.ts): a process rather than a
 * thread, so that closing it when idle gives back libduckdb's pages and DuckDB's allocations,
 * which a thread leaves mapped in the server. Arguments and rows cross the pipe serialized; a
 * write's flushes are read by the child from the flush log's files (logged-flushes.ts).
 *
 * If the child dies, the calls in flight fail and the next call starts a new one, which reopens
 * the database (replaying DuckDB's own WAL).
 *
 * DuckDB is open only while it is used: its library's pages, its isolate and its allocations
 * cost ~40 MB that an idle server need not hold (docs/configuration-memory.md). A data folder
 * without an events file is not opened at start (its position is the empty one); the first write
 * or query opens it. After `idleCloseMs` without calls the thread closes the database and ends;
 * the next call opens it again (~0.3-0.5 s, paid by that call).
 */
import fs from 'node:fs';
import path from 'node:path';
import { QueryCancelledError } from '../errors.js';
import { startChild } from '../../util/child-worker.js';
import { WorkerCalls } from '../../util/worker-calls.js';
import type { EventQuery, EventSlice, EventStore, EventStorePosition, PersonRecord, StoredEvent, UuidsByProject } from '../types.js';
import { EXPORT_EVENTS, storedEvents } from './export-rows.js';
import type { DuckOptions } from './event-store.js';
import { UNREADABLE } from './logged-flushes.js';
import { readPageBytes } from './memory.js';
import { ROW_GROUP_ROWS } from './schema.js';
import { DuckDbDialect } from '../../hogql/duckdb/dialect.js';
import { materializedColumns } from './materialized.js';
import type { EventStoreWorkerData } from './worker.js';

/** A flush's bytes in the write's own message: they follow it, one message each. */
const NO_BYTES = new Uint8Array(0);
/** Person rows per message when the person mirror is rebuilt. */
const REBUILD_CHUNK = 5_000;
/** How often the thread is asked whether its back-fill of the materialized columns has ended. */
const MATERIALIZED_POLL_MS = 2_000;
/** The events file, as event-store.ts names it. */
const EVENTS_FILE = 'events.duckdb';

export interface ThreadedOptions extends DuckOptions {
  /** Close DuckDB and end its thread after this long without calls; 0 = keep it open. */
  idleCloseMs?: number;
}

/** 0 for a missing file. */
function fileBytes(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

export class ThreadedEventStore implements EventStore {
  readonly writeUnit = ROW_GROUP_ROWS;
  readonly dialect = new DuckDbDialect();
  readonly pageBytes: number;
  private readonly thread: WorkerCalls;
  private opening: Promise<void> | null = null;
  private nextStreamId = 1;
  private nextQueryId = 1;
  private closed = false;
  private readonly file: string;
  private readonly idleCloseMs: number;
  /** Calls, streams and rebuilds under way: the thread is closed only without any. */
  private inUse = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  private lastUsed = Date.now();
  /** The idle thread being closed: calls wait for it, then open the database again. */
  private idleClosing: Promise<void> | null = null;
  /** The last opening failed: readiness asks the thread again rather than trusting the file. */
  private openFailed = false;
  /** The materialized columns' back-fill is followed (followMaterialized). */
  private followingMaterialized = false;

  private constructor(data: EventStoreWorkerData, idleCloseMs: number) {
    this.pageBytes = readPageBytes(data.options.memoryLimit);
    this.file = path.join(data.dataDir, EVENTS_FILE);
    this.idleCloseMs = idleCloseMs;
    this.thread = new WorkerCalls(() => startChild(import.meta.url, 'worker', data), 'event store');
  }

  /**
   * Opens an existing events file now, so that a broken one stops the start with its cause (and
   * DuckDB loads while the rest of the service does); a missing one waits for the first call.
   */
  static async open(dataDir: string, options: ThreadedOptions = {}): Promise<ThreadedEventStore> {
    const { idleCloseMs = 0, ...duck } = options;
    const store = new ThreadedEventStore({ dataDir, options: duck }, idleCloseMs);
    if (store.hasFile()) await store.use(() => store.ready());
    return store;
  }

  /** Whether the database has anything on disk yet (DuckDB's WAL alone counts). */
  private hasFile(): boolean {
    return fs.existsSync(this.file) || fs.existsSync(`${this.file}.wal`);
  }

  /** Whether DuckDB is open (or opening) now. */
  get isOpen(): boolean {
    return this.thread.alive;
  }

  /** A thread with the database open: the one running, or a new one that opens it first. */
  private async ready(): Promise<void> {
    while (this.idleClosing) await this.idleClosing;
    if (this.closed) throw new Error('the event store is closed');
    if (this.thread.alive && !this.opening) return;
    this.opening ??= this.thread
      .call<boolean>('open')
      .then((materializedReady) => {
        this.openFailed = false;
        this.followMaterialized(materializedReady);
      })
      .catch(async (error: unknown) => {
        this.openFailed = true;
        await this.thread.terminate();
        throw error;
      })
      .finally(() => (this.opening = null));
    return this.opening;
  }

  /**
   * The dialect reads the materialized columns once the thread says every row has them. Until
   * then the thread is asked every few seconds, and kept open meanwhile (the back-fill runs on it).
   */
  private followMaterialized(ready: boolean): void {
    if (ready) return this.dialect.useMaterialized(materializedColumns());
    if (this.followingMaterialized) return;
    this.followingMaterialized = true;
    void this.use(async () => {
      try {
        while (!this.closed && this.thread.alive) {
          await new Promise((resolve) => setTimeout(resolve, MATERIALIZED_POLL_MS).unref());
          if (this.closed || !this.thread.alive) return;
          if (await this.thread.call<boolean>('materializedReady')) return this.dialect.useMaterialized(materializedColumns());
        }
      } catch {
        // the thread ended: its next opening answers again
      } finally {
        this.followingMaterialized = false;
      }
    }, false);
  }

  /**
   * Runs `work` with the thread kept open. `activity`: whether it counts as use, which a
   * readiness probe does not (a probe every few seconds would keep DuckDB open for good).
   */
  private async use<T>(work: () => Promise<T>, activity = true): Promise<T> {
    this.inUse++;
    try {
      return await work();
    } finally {
      if (activity) this.lastUsed = Date.now();
      if (--this.inUse === 0) this.scheduleIdleClose();
    }
  }

  private scheduleIdleClose(): void {
    if (this.idleCloseMs === 0 || this.closed) return;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.closeIdleThread(), Math.max(0, this.lastUsed + this.idleCloseMs - Date.now()));
    this.idleTimer.unref();
  }

  /** Checkpoints and closes the database (the worker's `close`), then ends its thread. */
  private closeIdleThread(): void {
    this.idleTimer = null;
    // In use: the use's end schedules the next check.
    if (this.inUse > 0 || this.closed || !this.thread.alive) return;
    if (Date.now() - this.lastUsed < this.idleCloseMs) return this.scheduleIdleClose();
    this.idleClosing = this.thread
      .call('close')
      .catch(() => undefined) // an unclean close leaves the WAL to the next opening, as a crash would
      .then(() => this.thread.terminate())
      .finally(() => (this.idleClosing = null));
  }

  private call<T>(method: string, ...args: unknown[]): Promise<T> {
    return this.callAs(true, method, ...args);
  }

  private callAs<T>(activity: boolean, method: string, ...args: unknown[]): Promise<T> {
    return this.use(async () => {
      await this.ready();
      return this.thread.call<T>(method, ...args);
    }, activity);
  }

  /**
   * Flushes the flush log holds are read by the process from its files (logged-flushes.ts);
   * others, or all when a segment cannot be read, cross the pipe (`streamed`).
   */
  write(slice: EventSlice): Promise<void> {
    return this.use(async () => {
      await this.ready();
      if (slice.flushes.every((flush) => flush.logged)) {
        try {
          return await this.thread.call<void>('writeLogged', { ...slice, flushes: slice.flushes.map(({ seq, events, logged }) => ({ seq, events, bytes: NO_BYTES, logged })) });
        } catch (error) {
          if (!(error instanceof Error && error.message.startsWith(UNREADABLE))) throw error;
        }
      }
      await this.streamed(slice);
    });
  }

  /**
   * The write goes first with its flushes' sizes, then their bytes one message each, each sent
   * once the process has taken the one before: a slice in one message (~30 MB) was held whole
   * in the pipe's buffers on both sides, and then in the process for the whole write.
   */
  private async streamed(slice: EventSlice): Promise<void> {
    const writing = this.thread.call<void>('write', { ...slice, flushes: slice.flushes.map(({ seq, events }) => ({ seq, events, bytes: NO_BYTES })) });
    writing.catch(() => undefined); // awaited below, after the bytes
    try {
      for (const flush of slice.flushes) await this.thread.call('flushBytes', flush.bytes);
    } catch {
      // The write ended early (its answer says why) or the process died (and the write with it).
    }
    await writing;
  }

  importEvents(events: StoredEvent[]): Promise<void> {
    return this.call('importEvents', events);
  }

  countEvents(): Promise<number> {
    return this.call('countEvents');
  }

  exportEvents(chunkRows = 2_048): AsyncIterable<StoredEvent[]> {
    return storedEvents(this.stream(EXPORT_EVENTS, chunkRows));
  }

  /** With no events file yet, the position is the empty one: nothing to open for it. */
  position(): Promise<EventStorePosition> {
    if (!this.thread.alive && !this.hasFile()) return Promise.resolve({ seq: 0, events: 0 });
    return this.call('position');
  }

  /** Held open for the whole rebuild: the worker keeps the chunks until the last one. */
  rebuildPersonMirror(rows: AsyncIterable<{ person: PersonRecord; distinct_ids: string[] }>): Promise<void> {
    return this.use(() => this.rebuild(rows));
  }

  private async rebuild(rows: AsyncIterable<{ person: PersonRecord; distinct_ids: string[] }>): Promise<void> {
    let chunk: { person: PersonRecord; distinct_ids: string[] }[] = [];
    for await (const row of rows) {
      chunk.push(row);
      if (chunk.length >= REBUILD_CHUNK) {
        await this.call('rebuildRows', chunk);
        chunk = [];
      }
    }
    await this.call('rebuildRows', chunk);
    await this.call('rebuildEnd');
  }

  async query(query: EventQuery, signal?: AbortSignal): Promise<Record<string, unknown>[]> {
    if (signal?.aborted) throw new QueryCancelledError();
    const queryId = this.nextQueryId++;
    const cancel = () => void this.call('cancelQuery', queryId).catch(() => undefined);
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      return await this.call('query', query, queryId);
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
  }

  async *stream(query: EventQuery, chunkRows = 2048): AsyncIterable<Record<string, unknown>[]> {
    const streamId = this.nextStreamId++;
    // The stream lives on the thread between calls: it must not be closed under it.
    let release = () => {};
    void this.use(() => new Promise<void>((resolve) => (release = resolve)));
    let finished = false;
    try {
      await this.call('streamOpen', streamId, query, chunkRows);
      for (;;) {
        const rows = await this.call<Record<string, unknown>[] | null>('streamNext', streamId);
        if (rows === null) break;
        yield rows;
      }
      finished = true;
    } finally {
      if (!finished) await this.call('streamClose', streamId).catch(() => undefined);
      release();
    }
  }

  /**
   * Readiness. A database closed for idleness (or not opened yet) is not opened for a probe:
   * the next call opens it, and a failure to is reported until an opening succeeds.
   */
  async ping(): Promise<boolean> {
    if (!this.thread.alive && !this.opening && !this.idleClosing && !this.openFailed) return true;
    try {
      return await this.callAs<boolean>(false, 'ping');
    } catch {
      return false;
    }
  }

  /** From the files, on this thread: a metrics scrape must not open the database. */
  async sizeBytes(): Promise<number> {
    return fileBytes(this.file) + fileBytes(`${this.file}.wal`);
  }

  checkpoint(): Promise<void> {
    return this.call('checkpoint');
  }

  expireEvents(cutoff: Date, limit: number): Promise<UuidsByProject> {
    return this.call('expireEvents', cutoff, limit);
  }

  compact(): Promise<void> {
    return this.call('compact');
  }

  erasePerson(input: Parameters<EventStore['erasePerson']>[0]): Promise<number> {
    return this.call('erasePerson', input);
  }

  replaceCohortMembers(projectId: number, cohortId: number, personUuids: string[]): Promise<void> {
    return this.call('replaceCohortMembers', projectId, cohortId, personUuids);
  }

  async interruptQueries(): Promise<void> {
    if (this.thread.alive) await this.call('interruptQueries');
  }

  async close(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    await this.idleClosing;
    try {
      if (this.thread.alive) await this.call('close');
    } finally {
      this.closed = true;
      await this.thread.stop();
    }
  }
}
