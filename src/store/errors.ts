/** A query stopped at the event store's time limit (SIGHTLINE_QUERY_TIMEOUT_MS). */
export class QueryTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the query ran longer than ${timeoutMs} ms and was stopped`);
    this.name = 'QueryTimeoutError';
  }
}

/** By name: errors from the event store's thread arrive as plain Errors that keep their name. */
export const isQueryTimeout = (error: unknown) => error instanceof Error && error.name === 'QueryTimeoutError';

/** A query stopped because its caller no longer wants it (the client went away). */
export class QueryCancelledError extends Error {
  constructor() {
    super('the query was cancelled: its client went away');
    this.name = 'QueryCancelledError';
  }
}

export const isQueryCancelled = (error: unknown) => error instanceof Error && error.name === 'QueryCancelledError';
