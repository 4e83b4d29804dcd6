/**
 * The connections queries run on. One connection runs one query at a time, so with a single
 * reader one slow events-list query held up every other query and the readiness probe behind
 * it; a few connections let quick queries pass a slow one. Each query also has a time limit:
 * past it the query is interrupted (DuckDB stops at its next check) and fails with
 * QueryTimeoutError, so that no query holds DuckDB's threads, which the event store's writes
 * need too, for longer than that.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { QueryTimeoutError } from '../errors.js';

export class Readers {
  private readonly idle: DuckDBConnection[];
  private readonly waiting: ((connection: DuckDBConnection) => void)[] = [];

  constructor(
    private readonly connections: DuckDBConnection[],
    /** 0 = no limit. */
    private readonly timeoutMs: number,
  ) {
    this.idle = [...connections];
  }

  /** Runs `work` on a free connection (waiting for one, in order of arrival), within the time limit. */
  async run<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    const connection = this.idle.pop() ?? (await new Promise<DuckDBConnection>((resolve) => this.waiting.push(resolve)));
    let timedOut = false;
    const timer =
      this.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            connection.interrupt();
          }, this.timeoutMs)
        : null;
    try {
      return await work(connection);
    } catch (error) {
      if (timedOut) throw new QueryTimeoutError(this.timeoutMs);
      throw error;
    } finally {
      if (timer) clearTimeout(timer);
      const next = this.waiting.shift();
      if (next) next(connection);
      else this.idle.push(connection);
    }
  }

  closeAll(): void {
    for (const connection of this.connections) connection.closeSync();
  }
}
