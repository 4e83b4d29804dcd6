/** A query stopped at the event store's time limit (SIGHTLINE_QUERY_TIMEOUT_MS). */
export class QueryTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the query ran longer than ${timeoutMs} ms and was stopped`);
    this.name = 'QueryTimeoutError';
  }
}

/** By name: errors from the event store's thread arrive as plain Errors that keep their name. */
export const isQueryTimeout = (error: unknown) => error instanceof Error && error.name === 'QueryTimeoutError';
