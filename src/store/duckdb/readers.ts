/**
 * The connections queries run on. One connection runs one query at a time, so with a single
 * reader one slow events-list query held up every other query and the readiness probe behind
 * it; a few connections let quick queries pass a slow one.
 *
 * Each query has a time limit, counted from its arrival (waiting for a connection included).
 * At the deadline the caller gets QueryTimeoutError at once, and the query is interrupted
 * (DuckDB stops at its next check), again every second until it has ended: an interrupt that
 * arrives before DuckDB has started the query is forgotten. Its connection is free again only
 * once the query has really ended, so a timed-out query never holds DuckDB's threads, which the
 * event store's writes need too, for long.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { QueryTimeoutError } from '../errors.js';

const REINTERRUPT_MS = 1_000;

export class Readers {
  private readonly idle: DuckDBConnection[];
  private readonly waiting: ((connection: DuckDBConnection) => void)[] = [];
  private readonly running = new Set<DuckDBConnection>();

  constructor(
    private readonly connections: DuckDBConnection[],
    /** 0 = no limit. */
    private readonly timeoutMs: number,
  ) {
    this.idle = [...connections];
  }

  /** Runs `work` on a free connection (waiting for one, in order of arrival), within the time limit. */
  run<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      let connection: DuckDBConnection | null = null;
      let reinterrupt: NodeJS.Timeout | null = null;
      const settle = (finish: () => void) => {
        if (settled) return;
        settled = true;
        finish();
      };
      const begin = (free: DuckDBConnection) => {
        connection = free;
        this.running.add(free);
        work(free)
          .then(
            (value) => settle(() => resolve(value)),
            (error: unknown) => settle(() => reject(error)),
          )
          .finally(() => {
            if (deadline) clearTimeout(deadline);
            if (reinterrupt) clearInterval(reinterrupt);
            this.running.delete(free);
            this.release(free);
          });
      };
      const deadline =
        this.timeoutMs > 0
          ? setTimeout(() => {
              settle(() => reject(new QueryTimeoutError(this.timeoutMs)));
              if (!connection) {
                const at = this.waiting.indexOf(begin);
                if (at !== -1) this.waiting.splice(at, 1);
                return;
              }
              const running = connection;
              running.interrupt();
              reinterrupt = setInterval(() => running.interrupt(), REINTERRUPT_MS);
            }, this.timeoutMs)
          : null;
      const free = this.idle.pop();
      if (free) begin(free);
      else this.waiting.push(begin);
    });
  }

  private release(connection: DuckDBConnection): void {
    const next = this.waiting.shift();
    if (next) next(connection);
    else this.idle.push(connection);
  }

  /** Shutdown: running queries are interrupted (their callers get DuckDB's interrupt error). */
  interruptAll(): void {
    for (const connection of this.running) connection.interrupt();
  }

  closeAll(): void {
    for (const connection of this.connections) connection.closeSync();
  }
}
