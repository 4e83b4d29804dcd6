/**
 * Worker threads that answer /decide and /flags (answer.ts), so that flag evaluation uses the
 * cores the main thread does not: on the main thread it took turns with HTTP parsing and
 * ingestion (~85 µs of a ~190 µs request). Each thread has its own connection to the metadata
 * store and its own caches of projects and flags, cleared by a message whenever the management
 * API changes them here. GeoIP answers come with the requests (request.ts looks them up: each
 * thread would otherwise keep caches of its own for it).
 *
 * Threads start with the first requests (answered on the main thread until a thread is ready)
 * and stop again after a minute without any: each holds its own isolate, connection and caches
 * (tens of MB once warm), which a server that answers no flags has no use for.
 *
 * A thread that dies fails nothing: its requests in flight, and every request while no thread
 * is alive, are answered on the main thread, and the next request starts a new thread, which
 * gets requests once it is ready (has loaded and opened its store). One that dies soon after it
 * started (say, it cannot open the store) is started again only after a pause that doubles each
 * time, so a thread that cannot start does not cost every request an attempt.
 */
import type { Worker } from 'node:worker_threads';
import type { Logger } from '../../kernel/logger.js';
import { ByteRing } from '../../util/byte-ring.js';
import { BytesPool } from '../../util/bytes-pool.js';
import { startWorker } from '../../util/worker.js';
import type { FlagAnswer, FlagRoute } from '../remote/answer.js';
import type { FlagAnswerer } from '../remote/answerer.js';
import type { FlagHttpRequest } from '../remote/request.js';
import type { FlagThreadMessage, FlagThreadOutput, FlagThreadReply, FlagThreadRequest, FlagThreadSettings } from './flag-worker.js';

/** A thread that lived less than this was not well: the next start waits. */
const SHORT_LIFE_MS = 10_000;
const FIRST_PAUSE_MS = 1_000;
const MAX_PAUSE_MS = 60_000;
/** A thread without requests for this long is stopped (the next request starts it again). */
const IDLE_STOP_MS = 60_000;
/** Room for answers on their way from a thread (~50 answers of a 50-flag /flags; larger ones come by message). */
const ANSWER_RING_BYTES = 2 * 1024 * 1024;

interface Pending {
  route: FlagRoute;
  input: FlagHttpRequest;
  resolve: (answer: FlagAnswer) => void;
}

class FlagThread {
  readonly pending = new Map<number, Pending>();
  readonly startedAt = Date.now();
  /** Whether it has opened its store: until then its requests are answered on the main thread. */
  ready = false;
  /** Requests of this event-loop turn, posted together (one wake-up of the thread, not one each). */
  outbox: FlagThreadRequest[] = [];
  lastUsed = Date.now();
  /** Stopped for being idle: its exit is no failure. */
  retired = false;

  constructor(
    readonly worker: Worker,
    readonly answerRing: ByteRing,
  ) {}
}

export class FlagThreads implements FlagAnswerer {
  private readonly threads: (FlagThread | null)[];
  /** Per slot: the pause before its next start, and when that start may happen. */
  private readonly restarts: { pauseMs: number; notBefore: number }[];
  private next = 0;
  private nextId = 1;
  private closed = false;
  /** Memory for answers read from the threads' rings, reused once their response has closed. */
  private readonly answerMemory = new BytesPool({ shared: false, minClassBytes: 4096, maxPooledBytes: 8 * 1024 * 1024 });

  constructor(
    count: number,
    private readonly settings: FlagThreadSettings,
    /** Answers on the main thread when no flag thread can. */
    private readonly fallback: FlagAnswerer,
    private readonly log: Logger,
  ) {
    this.threads = Array.from({ length: count }, () => null);
    this.restarts = Array.from({ length: count }, () => ({ pauseMs: 0, notBefore: 0 }));
    this.idleCheck = setInterval(() => this.stopIdle(), IDLE_STOP_MS / 4);
    this.idleCheck.unref();
  }

  private readonly idleCheck: NodeJS.Timeout;

  private stopIdle(): void {
    const now = Date.now();
    this.threads.forEach((thread, slot) => {
      if (!thread || thread.pending.size > 0 || thread.outbox.length > 0 || now - thread.lastUsed < IDLE_STOP_MS) return;
      thread.retired = true;
      this.threads[slot] = null;
      void thread.worker.terminate();
    });
  }

  private start(slot: number): FlagThread {
    const answerRing = ByteRing.memory(ANSWER_RING_BYTES);
    const worker = startWorker(import.meta.url, 'flag-worker', { workerData: { ...this.settings, answerRing } });
    const thread = new FlagThread(worker, new ByteRing(answerRing));
    thread.worker.on('message', (output: FlagThreadOutput) => {
      if (output.type === 'ready') {
        thread.ready = true;
        return;
      }
      for (const reply of output.replies) {
        const answer = this.answerOf(thread, reply);
        const pending = thread.pending.get(reply.id);
        thread.pending.delete(reply.id);
        if (pending) pending.resolve(answer);
        else answer.release?.();
      }
      // Once closing, a late answer must not unref a thread whose exit close() waits for.
      if (thread.pending.size === 0 && !this.closed) thread.worker.unref();
    });
    const lost = (error: Error) => {
      if (thread.retired || this.threads[slot] !== thread) return;
      this.threads[slot] = null;
      const restart = this.restarts[slot];
      restart.pauseMs = Date.now() - thread.startedAt < SHORT_LIFE_MS ? Math.min(MAX_PAUSE_MS, Math.max(FIRST_PAUSE_MS, restart.pauseMs * 2)) : 0;
      restart.notBefore = Date.now() + restart.pauseMs;
      if (!this.closed) this.log.error({ err: error, restartPauseMs: restart.pauseMs }, 'a flag thread stopped; its requests are answered on the main thread');
      for (const { route, input, resolve } of thread.pending.values()) void this.fallback.answer(route, input).then(resolve);
      thread.pending.clear();
    };
    thread.worker.on('error', lost);
    thread.worker.on('exit', (code) => lost(new Error(`flag thread exited with code ${code}`)));
    // An idle thread must not keep a stopping process alive; a busy one must (see answer).
    thread.worker.unref();
    return thread;
  }

  answer(route: FlagRoute, input: FlagHttpRequest): Promise<FlagAnswer> {
    if (this.closed) return this.fallback.answer(route, input);
    const slot = this.next;
    this.next = (this.next + 1) % this.threads.length;
    let thread = this.threads[slot];
    if (!thread) {
      if (Date.now() < this.restarts[slot].notBefore) return this.fallback.answer(route, input);
      thread = this.threads[slot] = this.start(slot);
    }
    thread.lastUsed = Date.now();
    if (!thread.ready) return this.fallback.answer(route, input);
    const id = this.nextId++;
    return new Promise((resolve) => {
      if (thread.pending.size === 0) thread.worker.ref();
      thread.pending.set(id, { route, input, resolve });
      if (thread.outbox.length === 0) setImmediate(() => this.post(thread));
      thread.outbox.push({ id, route, input });
    });
  }

  /** A reply's answer; JSON in the ring is copied out at once (in order, freeing its room). */
  private answerOf(thread: FlagThread, { status, body }: FlagThreadReply): FlagAnswer {
    if (body instanceof Uint8Array) return { status, body };
    const bytes = this.answerMemory.take(body.length);
    thread.answerRing.read(body.position, bytes);
    return { status, body: bytes, release: () => this.answerMemory.recycle(bytes) };
  }

  private post(thread: FlagThread): void {
    const requests = thread.outbox;
    thread.outbox = [];
    const message: FlagThreadMessage = { type: 'answer', requests };
    thread.worker.postMessage(message);
  }

  invalidateFlags(projectId: number): void {
    this.broadcast({ type: 'invalidate-flags', projectId });
  }

  invalidateProjects(): void {
    this.broadcast({ type: 'invalidate-projects' });
  }

  private broadcast(message: FlagThreadMessage): void {
    for (const thread of this.threads) thread?.worker.postMessage(message);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.idleCheck);
    // Worker.terminate() refs each thread until its exit (and, closed, no answer unrefs it).
    await Promise.all(this.threads.map((thread) => thread?.worker.terminate()));
  }
}
