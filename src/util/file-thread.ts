/**
 * File writes and syncs on a thread of their own. libuv's thread pool is shared by the whole
 * process, and DuckDB's queries hold its threads for as long as they run: behind a few slow
 * events-list queries a flush log sync waited 9 s, stalling every acknowledgement. Here the
 * calls are synchronous on a dedicated thread, so the log's latency is the disk's alone.
 * Descriptors belong to the process, so they stay valid if the thread is replaced.
 */
import { startWorker } from './worker.js';
import { WorkerCalls } from './worker-calls.js';

export class FileThread {
  private readonly thread = new WorkerCalls(() => startWorker(import.meta.url, 'file-thread-worker'), 'file');

  /** Creates (or empties) a file and makes its name durable; resolves with its descriptor. */
  create(file: string): Promise<number> {
    return this.thread.call('create', file);
  }

  /** Writes all of `bytes` at `position` and syncs the data. */
  append(fd: number, bytes: Uint8Array, position: number): Promise<void> {
    return this.thread.call('append', fd, bytes, position);
  }

  truncate(fd: number, length: number): Promise<void> {
    return this.thread.call('truncate', fd, length);
  }

  close(fd: number): Promise<void> {
    return this.thread.call('close', fd);
  }

  stop(): Promise<void> {
    return this.thread.stop();
  }
}
