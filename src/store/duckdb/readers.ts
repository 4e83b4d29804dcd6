/**
 * The connections queries run on. One connection runs one query at a time, so with a single
 * reader one slow events-list query held up every other query and the readiness probe behind
 * it; a few connections let quick queries pass a slow one.
 *
 * Each query has a time limit, counted from its arrival (waiting for a connection included).
 * At the deadline the caller gets QueryTimeoutError at once, and the query is interrupted
 * (DuckDB stops at its next check), again every 100 ms until it has ended: an interrupt that
 * arrives before DuckDB has started the query is forgotten. Its connection is free again only
 * once the query has really ended, so a timed-out query never holds DuckDB's threads, which the
 * event store's writes need too, for long. A query whose caller went away (its signal aborted)
 * is stopped the same way, with QueryCancelledError.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { QueryCancelledError, QueryTimeoutError } from '../errors.js';

/** How often a query that must stop is interrupted again (event-store.ts's exports too). */
export const REINTERRUPT_MS = 100;

export class Readers {
  private readonly idle: DuckDBConnection[];
  /** Queries waiting for a connection: how to start each, and how to fail it. */
  private readonly waiting: { begin: (connection: DuckDBConnection) => void; stop: (error: Error) => void }[] = [];
  /** Set by stopAll(): the connections are about to be closed, so no query may start on them. */
  private stopping: Error | null = null;
  /**
   * Connections running a query: the timer that re-interrupts it once it must stop, and a
   * promise settled once it has ended and its connection is free.
   */
  private readonly running = new Map<DuckDBConnection, { reinterrupt: NodeJS.Timeout | null; ended: Promise<void> }>();

  constructor(
    private readonly connections: DuckDBConnection[],
    /** 0 = no limit. */
    private readonly timeoutMs: number,
  ) {
    this.idle = [...connections];
  }

  /**
   * Runs `work` on a free connection (waiting for one, in order of arrival), within the time
   * limit; `signal` cancels it (the caller went away) the same way the limit does.
   */
  run<T>(work: (connection: DuckDBConnection) => Promise<T>, signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      let connection: DuckDBConnection | null = null;
      const settle = (finish: () => void) => {
        if (settled) return;
        settled = true;
        finish();
      };
      /** The deadline and the cancel listener, once the query has ended or left the queue. */
      const done = () => {
        if (deadline) clearTimeout(deadline);
        signal?.removeEventListener('abort', cancel);
      };
      /** Fails the caller now; a waiting query leaves the queue, a running one is interrupted. */
      const stop = (error: Error) => {
        if (settled) return;
        settle(() => reject(error));
        if (!connection) {
          const at = this.waiting.findIndex((entry) => entry.begin === begin);
          if (at !== -1) this.waiting.splice(at, 1);
          done();
          return;
        }
        this.interruptUntilEnded(connection);
      };
      const cancel = () => stop(new QueryCancelledError());
      const begin = (free: DuckDBConnection) => {
        connection = free;
        const query = { reinterrupt: null as NodeJS.Timeout | null, ended: Promise.resolve() };
        this.running.set(free, query);
        query.ended = work(free)
          .then(
            (value) => settle(() => resolve(value)),
            (error: unknown) => settle(() => reject(error)),
          )
          .finally(() => {
            done();
            if (query.reinterrupt) clearInterval(query.reinterrupt);
            this.running.delete(free);
            this.release(free);
          });
      };
      if (signal?.aborted) return reject(new QueryCancelledError());
      if (this.stopping) return reject(this.stopping);
      const deadline = this.timeoutMs > 0 ? setTimeout(() => stop(new QueryTimeoutError(this.timeoutMs)), this.timeoutMs) : null;
      signal?.addEventListener('abort', cancel, { once: true });
      const free = this.idle.pop();
      if (free) begin(free);
      else this.waiting.push({ begin, stop });
    });
  }

  private release(connection: DuckDBConnection): void {
    const next = this.stopping ? undefined : this.waiting.shift();
    if (next) next.begin(connection);
    else this.idle.push(connection);
  }

  /**
   * Interrupts the connection's query now and every 100 ms until it has ended: an interrupt
   * that reaches DuckDB before the query has started is forgotten.
   */
  private interruptUntilEnded(connection: DuckDBConnection): void {
    connection.interrupt();
    const query = this.running.get(connection);
    if (query && !query.reinterrupt) query.reinterrupt = setInterval(() => connection.interrupt(), REINTERRUPT_MS);
  }

  /** Shutdown: running queries are interrupted (their callers get DuckDB's interrupt error). */
  interruptAll(): void {
    for (const connection of this.running.keys()) this.interruptUntilEnded(connection);
  }

  /**
   * Before closing: interrupts the running queries until they have ended, and waits for that;
   * queries waiting for a connection, and any asked for later, fail with `reason`. Closing a
   * connection whose query still runs blocks this thread until the query ends, and with it the
   * re-interrupts: a query whose first interrupt was forgotten then ran on for good, and one that
   * a waiting query started on a connection as it was freed held the close the same way.
   */
  async stopAll(reason: Error): Promise<void> {
    this.stopping ??= reason;
    for (const { stop } of this.waiting.splice(0)) stop(reason);
    this.interruptAll();
    await Promise.all([...this.running.values()].map((query) => query.ended));
  }

  closeAll(): void {
    for (const connection of this.connections) connection.closeSync();
  }
}
