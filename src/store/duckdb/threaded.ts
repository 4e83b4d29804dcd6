/**
 * The DuckDB event store on a worker thread. @duckdb/node-api's appender calls are synchronous
 * (~15 µs an event), and reading results into JS objects is too: on the main thread they took
 * turns with HTTP, capture decoding and flag evaluation. Here every EventStore call is a message
 * to the thread that owns the database; arguments and rows cross as structured clones, and
 * flushes as the flush log's bytes, in shared memory, decoded on the thread.
 *
 * If the thread dies, the calls in flight fail and the next call starts a new one, which reopens
 * the database (replaying DuckDB's own WAL).
 */
import { QueryCancelledError } from '../errors.js';
import { startWorker } from '../../util/worker.js';
import { WorkerCalls } from '../../util/worker-calls.js';
import type { EventQuery, EventSlice, EventStore, EventStorePosition, PersonRecord, StoredEvent, UuidsByProject } from '../types.js';
import { EXPORT_EVENTS, storedEvents } from './export-rows.js';
import type { DuckOptions } from './event-store.js';
import { readPageBytes } from './memory.js';
import { ROW_GROUP_ROWS } from './schema.js';
import { DuckDbDialect } from '../../hogql/duckdb/dialect.js';
import type { EventStoreWorkerData } from './worker.js';

/** Person rows per message when the person mirror is rebuilt. */
const REBUILD_CHUNK = 5_000;

export class ThreadedEventStore implements EventStore {
  readonly writeUnit = ROW_GROUP_ROWS;
  readonly dialect = new DuckDbDialect();
  readonly pageBytes: number;
  private readonly thread: WorkerCalls;
  private opening: Promise<void> | null = null;
  private nextStreamId = 1;
  private nextQueryId = 1;
  private closed = false;

  private constructor(data: EventStoreWorkerData) {
    this.pageBytes = readPageBytes(data.options.memoryLimit);
    this.thread = new WorkerCalls(() => startWorker(import.meta.url, 'worker', { workerData: data }), 'event store');
  }

  static async open(dataDir: string, options: DuckOptions = {}): Promise<ThreadedEventStore> {
    const store = new ThreadedEventStore({ dataDir, options });
    await store.ready();
    return store;
  }

  /** A thread with the database open: the one running, or a new one that opens it first. */
  private ready(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the event store is closed'));
    if (this.thread.alive && !this.opening) return Promise.resolve();
    this.opening ??= this.thread
      .call<void>('open')
      .catch(async (error: unknown) => {
        await this.thread.terminate();
        throw error;
      })
      .finally(() => (this.opening = null));
    return this.opening;
  }

  private async call<T>(method: string, ...args: unknown[]): Promise<T> {
    await this.ready();
    return this.thread.call<T>(method, ...args);
  }

  /** The flushes' bytes are shared memory (flush-record.ts): the thread decodes them in place. */
  write(slice: EventSlice): Promise<void> {
    return this.call('write', slice);
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

  position(): Promise<EventStorePosition> {
    return this.call('position');
  }

  async rebuildPersonMirror(rows: AsyncIterable<{ person: PersonRecord; distinct_ids: string[] }>): Promise<void> {
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
    await this.call('streamOpen', streamId, query, chunkRows);
    let finished = false;
    try {
      for (;;) {
        const rows = await this.call<Record<string, unknown>[] | null>('streamNext', streamId);
        if (rows === null) break;
        yield rows;
      }
      finished = true;
    } finally {
      if (!finished) await this.call('streamClose', streamId).catch(() => undefined);
    }
  }

  async ping(): Promise<boolean> {
    try {
      return await this.call<boolean>('ping');
    } catch {
      return false;
    }
  }

  sizeBytes(): Promise<number> {
    return this.call('sizeBytes');
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
    try {
      if (this.thread.alive) await this.call('close');
    } finally {
      this.closed = true;
      await this.thread.stop();
    }
  }
}
