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
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../util/worker.js';
import type { EventQuery, EventSlice, EventStore, EventStorePosition, PersonRecord } from '../types.js';
import type { DuckOptions } from './event-store.js';
import { ROW_GROUP_ROWS } from './schema.js';
import type { EventStoreWorkerData, WorkerAnswer, WorkerRequest } from './worker.js';

interface Call {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

/** Person rows per message when the person mirror is rebuilt. */
const REBUILD_CHUNK = 5_000;

export class ThreadedEventStore implements EventStore {
  readonly writeUnit = ROW_GROUP_ROWS;
  private worker: Worker | null = null;
  private opening: Promise<void> | null = null;
  private readonly calls = new Map<number, Call>();
  private nextId = 1;
  private closed = false;

  private constructor(private readonly data: EventStoreWorkerData) {}

  static async open(dataDir: string, options: DuckOptions = {}): Promise<ThreadedEventStore> {
    const store = new ThreadedEventStore({ dataDir, options });
    await store.ready();
    return store;
  }

  /** A worker with the database open: the one running, or a new one. */
  private ready(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the event store is closed'));
    if (this.worker && !this.opening) return Promise.resolve();
    this.opening ??= this.spawn().finally(() => (this.opening = null));
    return this.opening;
  }

  private async spawn(): Promise<void> {
    const worker = startWorker(import.meta.url, 'worker', { workerData: this.data });
    this.worker = worker;
    worker.on('message', (answer: WorkerAnswer) => this.settle(answer));
    // Calls in flight fail at once; a new thread starts only once this one has exited, so that
    // two DuckDB instances never have the file open together.
    worker.on('error', (error) => this.failCalls(error));
    worker.on('exit', (code) => this.lost(worker, new Error(`the event store thread exited (code ${code})`)));
    try {
      await this.send(worker, 'open', []);
    } catch (error) {
      this.worker = null;
      await worker.terminate();
      throw error;
    }
  }

  private settle(answer: WorkerAnswer): void {
    const call = this.calls.get(answer.id);
    if (!call) return;
    this.calls.delete(answer.id);
    if ('error' in answer) {
      const error = new Error(answer.error.message);
      error.name = answer.error.name;
      call.reject(error);
    } else {
      call.resolve(answer.result);
    }
  }

  /** The thread is gone: every call in flight fails, and the next call starts another. */
  private lost(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.failCalls(error);
  }

  private failCalls(error: Error): void {
    for (const call of this.calls.values()) call.reject(error);
    this.calls.clear();
  }

  private send<T>(worker: Worker, method: string, args: unknown[]): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.calls.set(id, { resolve: resolve as (value: unknown) => void, reject });
      const request: WorkerRequest = { id, method, args };
      worker.postMessage(request);
    });
  }

  private async call<T>(method: string, ...args: unknown[]): Promise<T> {
    await this.ready();
    return this.send<T>(this.worker!, method, args);
  }

  /** The flushes' bytes are shared memory (flush-record.ts): the thread decodes them in place. */
  write(slice: EventSlice): Promise<void> {
    return this.call('write', slice);
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

  query(query: EventQuery): Promise<Record<string, unknown>[]> {
    return this.call('query', query);
  }

  async *stream(query: EventQuery, chunkRows = 2048): AsyncIterable<Record<string, unknown>[]> {
    const streamId = this.nextId++;
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

  async interruptQueries(): Promise<void> {
    if (this.worker) await this.call('interruptQueries');
  }

  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) {
      this.closed = true;
      return;
    }
    try {
      await this.call('close');
    } finally {
      this.closed = true;
      this.worker = null;
      await worker.terminate();
      this.failCalls(new Error('the event store is closed'));
    }
  }
}
