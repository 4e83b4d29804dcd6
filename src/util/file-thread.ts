/**
 * File writes and syncs on a thread of their own. libuv's thread pool is shared by the whole
 * process, and DuckDB's queries hold its threads for as long as they run: behind a few slow
 * events-list queries a flush log sync waited 9 s, stalling every acknowledgement. Here the
 * calls are synchronous on a dedicated thread, so the log's latency is the disk's alone.
 */
import type { Worker } from 'node:worker_threads';
import type { FileOp, FileReply, FileRequest } from './file-thread-worker.js';
import { startWorker } from './worker.js';

export class FileThread {
  private readonly worker: Worker;
  private readonly calls = new Map<number, { resolve: (value: number | null) => void; reject: (error: Error) => void }>();
  private nextId = 1;
  /** Set once the thread is gone: later calls fail at once instead of waiting forever. */
  private lost: Error | null = null;

  constructor() {
    this.worker = startWorker(import.meta.url, 'file-thread-worker');
    this.worker.on('message', (reply: FileReply) => {
      const call = this.calls.get(reply.id);
      this.calls.delete(reply.id);
      if (this.calls.size === 0) this.worker.unref();
      if (!call) return;
      if ('error' in reply) call.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
      else call.resolve(reply.result);
    });
    const fail = (error: Error) => {
      this.lost = error;
      for (const call of this.calls.values()) call.reject(error);
      this.calls.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the file thread exited (code ${code})`)));
    // An idle thread must not keep a stopping process alive; a busy one must (see call).
    this.worker.unref();
  }

  private call(request: FileOp): Promise<number | null> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.lost) return reject(this.lost);
      if (this.calls.size === 0) this.worker.ref();
      this.calls.set(id, { resolve, reject });
      const message: FileRequest = { id, request };
      this.worker.postMessage(message);
    });
  }

  /** Creates (or empties) a file and makes its name durable; resolves with its descriptor. */
  async create(file: string): Promise<number> {
    return (await this.call({ op: 'create', file })) as number;
  }

  /** Writes all of `bytes` at `position` and syncs the data. */
  async append(fd: number, bytes: Uint8Array, position: number): Promise<void> {
    await this.call({ op: 'append', fd, bytes, position });
  }

  async truncate(fd: number, length: number): Promise<void> {
    await this.call({ op: 'truncate', fd, length });
  }

  async close(fd: number): Promise<void> {
    await this.call({ op: 'close', fd });
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}
