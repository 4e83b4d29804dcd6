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
  private worker: Worker | null = null;
  private readonly calls = new Map<number, { resolve: (value: number | null) => void; reject: (error: Error) => void }>();
  private nextId = 1;
  private stopped = false;

  /** The running thread, or a new one: a thread that died fails its calls, and the next call starts another. */
  private thread(): Worker {
    this.worker ??= this.start();
    return this.worker;
  }

  private start(): Worker {
    const worker = startWorker(import.meta.url, 'file-thread-worker');
    worker.on('message', (reply: FileReply) => {
      const call = this.calls.get(reply.id);
      this.calls.delete(reply.id);
      if (this.calls.size === 0) worker.unref();
      if (!call) return;
      if ('error' in reply) call.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
      else call.resolve(reply.result);
    });
    const lost = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      for (const call of this.calls.values()) call.reject(error);
      this.calls.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`the file thread exited (code ${code})`)));
    // An idle thread must not keep a stopping process alive; a busy one must (see call).
    worker.unref();
    return worker;
  }

  private call(request: FileOp): Promise<number | null> {
    if (this.stopped) return Promise.reject(new Error('the file thread was stopped'));
    const worker = this.thread();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.calls.size === 0) worker.ref();
      this.calls.set(id, { resolve, reject });
      const message: FileRequest = { id, request };
      worker.postMessage(message);
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
    this.stopped = true;
    await this.worker?.terminate();
  }
}
