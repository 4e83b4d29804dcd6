/**
 * File writes and syncs on a thread of their own. libuv's thread pool is shared by the whole
 * process, and DuckDB's queries hold its threads for as long as they run: behind a few slow
 * events-list queries a flush log sync waited 9 s, stalling every acknowledgement. Here the
 * calls are synchronous on a dedicated thread, so the log's latency is the disk's alone.
 *
 * The thread stops after a while without calls and the next call starts another (~20 ms): an
 * isolate costs ~8-11 MB, which a server that ingests nothing for minutes need not hold. Files
 * are opened here, on the caller's thread: Node closes the descriptors a worker opened when it
 * exits, and these must outlive it (opening is quick; the syncs are what is slow).
 */
import fs from 'node:fs';
import { startWorker } from './worker.js';
import { WorkerCalls } from './worker-calls.js';

/** How long the thread may go without calls before it is stopped. */
const IDLE_STOP_MS = 30_000;

export class FileThread {
  private readonly thread = new WorkerCalls(() => startWorker(import.meta.url, 'file-thread-worker'), 'file');
  private inFlight = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  /** The idle thread being ended: calls wait for it, since ending fails every call not yet answered. */
  private ending: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly idleStopMs = IDLE_STOP_MS) {}

  /** Creates (or empties) a file and makes its name durable; resolves with its descriptor. */
  async create(file: string): Promise<number> {
    const fd = fs.openSync(file, 'w');
    try {
      await this.call('syncDirectoryOf', file);
      return fd;
    } catch (error) {
      fs.closeSync(fd);
      fs.rmSync(file, { force: true });
      throw error;
    }
  }

  /** Writes all of `bytes` at `position` and syncs the data. */
  append(fd: number, bytes: Uint8Array, position: number): Promise<void> {
    return this.call('append', fd, bytes, position);
  }

  truncate(fd: number, length: number): Promise<void> {
    return this.call('truncate', fd, length);
  }

  close(fd: number): Promise<void> {
    return this.call('close', fd);
  }

  /** Whether the thread is running now (for tests). */
  get running(): boolean {
    return this.thread.alive;
  }

  stop(): Promise<void> {
    this.stopped = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    return this.thread.stop();
  }

  private async call<T>(method: string, ...args: unknown[]): Promise<T> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    this.inFlight++;
    try {
      await this.ending;
      return await this.thread.call<T>(method, ...args);
    } finally {
      if (--this.inFlight === 0 && !this.stopped) {
        this.idleTimer = setTimeout(() => this.endIdleThread(), this.idleStopMs);
        this.idleTimer.unref();
      }
    }
  }

  private endIdleThread(): void {
    this.idleTimer = null;
    this.ending = this.thread.terminate().finally(() => (this.ending = null));
  }
}
