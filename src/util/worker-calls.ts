/**
 * Calls to a worker thread or a child process (child-worker.ts) that owns a resource (the event
 * store's DuckDB, the flush log's files). Each call is a message `{ id, method, args }`, answered
 * `{ id, result }` or `{ id, error }`; errors keep their name and code across the thread.
 *
 * A thread that dies fails the calls in flight at once, and the next call starts a new one, but
 * only once the old one has exited: two threads never hold the resource together. The thread
 * keeps the process alive only while calls are pending, so an idle one never holds up an exit.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CHILD_DATA_VARIABLE } from './child-worker.js';

export interface CallRequest {
  id: number;
  method: string;
  args: unknown[];
}

export type CallAnswer = { id: number; result: unknown } | { id: number; error: { name: string; message: string; code?: string } };

/** What the caller needs of a thread (node's Worker) or a child process (ChildWorker). */
export interface CallPeer {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (answer: CallAnswer) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'exit', listener: (code: number | string) => void): unknown;
  ref(): void;
  unref(): void;
  terminate(): Promise<unknown>;
}

interface Call {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

export class WorkerCalls {
  private worker: CallPeer | null = null;
  private readonly calls = new Map<number, Call>();
  private nextId = 1;
  private stopped = false;

  constructor(
    /** Starts the thread (util/worker.ts). */
    private readonly start: () => CallPeer,
    /** Names the thread in errors. */
    private readonly name: string,
  ) {}

  /** Whether a thread is running (the next call starts one otherwise). */
  get alive(): boolean {
    return this.worker !== null;
  }

  call<T>(method: string, ...args: unknown[]): Promise<T> {
    if (this.stopped) return Promise.reject(new Error(`the ${this.name} thread was stopped`));
    const worker = (this.worker ??= this.spawn());
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      if (this.calls.size === 0) worker.ref();
      this.calls.set(id, { resolve: resolve as (value: unknown) => void, reject });
      const request: CallRequest = { id, method, args };
      worker.postMessage(request);
    });
  }

  private spawn(): CallPeer {
    const worker = this.start();
    worker.on('message', (answer: CallAnswer) => {
      const call = this.calls.get(answer.id);
      this.calls.delete(answer.id);
      // Not a thread being terminated: an answer that arrives after terminate() began (say, to a
      // call nobody awaited) must not let the process exit before the thread has.
      if (this.calls.size === 0 && this.worker === worker) worker.unref();
      if (!call) return;
      if ('error' in answer) call.reject(Object.assign(new Error(answer.error.message), { name: answer.error.name, code: answer.error.code }));
      else call.resolve(answer.result);
    });
    // A replaced thread (terminate() already failed its calls) must not fail its successor's.
    worker.on('error', (error) => {
      if (this.worker === worker) this.fail(error);
    });
    worker.on('exit', (code) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.fail(new Error(`the ${this.name} thread exited (code ${code})`));
    });
    worker.unref();
    return worker;
  }

  private fail(error: Error): void {
    for (const call of this.calls.values()) call.reject(error);
    this.calls.clear();
  }

  /** Ends the running thread (its calls in flight fail); the next call starts another. */
  async terminate(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    // Worker.terminate() refs the thread until its exit; the answer handler above no longer
    // unrefs it once it is not `this.worker`.
    await worker?.terminate();
    this.fail(new Error(`the ${this.name} thread was stopped`));
  }

  /** Ends the thread for good: later calls fail. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.terminate();
  }
}

/** The input the caller gave this thread (`workerData`) or child process (startChild). */
export function callerInput<T>(): T {
  return (parentPort ? workerData : JSON.parse(process.env[CHILD_DATA_VARIABLE] ?? 'null')) as T;
}

/**
 * A child process's side of the pipe. It ends when its parent is gone or ends it, never on a
 * signal of its own: a terminal's Ctrl-C and systemd's stop signal the whole process group, and
 * the server, shutting down in order, still has calls for it (the last write, the close).
 */
function parentProcess(): { on(event: 'message', listener: (request: CallRequest) => void): unknown; postMessage(answer: CallAnswer): void } {
  process.once('disconnect', () => process.exit(0));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => undefined);
  return { on: (event, listener) => process.on(event, listener), postMessage: (answer) => process.send!(answer) };
}

/** The callee's side: answers each call with its handler's result (awaited) or error. */
export function answerCalls(handlers: Record<string, (...args: any[]) => unknown>): void {
  const caller = parentPort ?? parentProcess();
  caller.on('message', async ({ id, method, args }: CallRequest) => {
    let answer: CallAnswer;
    try {
      const handler = handlers[method];
      if (!handler) throw new Error(`unknown call ${method}`);
      answer = { id, result: await handler(...args) };
    } catch (error) {
      const err: NodeJS.ErrnoException = error instanceof Error ? error : new Error(String(error));
      answer = { id, error: { name: err.name, message: err.message, code: err.code } };
    }
    caller.postMessage(answer);
  });
}
