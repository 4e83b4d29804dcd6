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

/**
 * What a query failed of, as an engine-neutral name (engines map their own errors to these;
 * the names survive the event store's thread): evaluating an expression over the data (a
 * conversion, a range, a binding), running out of the store's memory, or an interrupt at
 * shutdown.
 */
export type QueryFailure = 'QueryEvaluationError' | 'QueryOutOfMemoryError' | 'QueryInterruptedError';

export function queryFailure(name: QueryFailure, message: string): Error {
  return Object.assign(new Error(message), { name });
}

export const isQueryFailure = (error: unknown, name: QueryFailure) => error instanceof Error && error.name === name;
