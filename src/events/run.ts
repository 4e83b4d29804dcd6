/**
 * Running compiled statements. The compiler keeps user expressions from failing at run time
 * where it can (TRY_CAST and friends); whatever DuckDB still rejects while evaluating them is
 * the request's fault, so it becomes a 400 naming the HogQL parameter, never a 500. A query
 * stopped at the event store's time limit becomes a 504 `query_timeout`, one that ran out of the
 * event store's memory a 503 `out_of_memory`.
 */
import { ApiError, validationError } from '../kernel/errors.js';
import { isQueryCancelled, isQueryTimeout } from '../store/errors.js';
import type { EventQuery, EventStore } from '../store/types.js';

export type Row = Record<string, unknown>;
export type Runner = (query: EventQuery) => Promise<Row[]>;

/** DuckDB's error classes that come from evaluating expressions over data. */
const EVALUATION_ERROR = /^(Conversion|Invalid Input|Out of Range|Binder|Not implemented) Error: /;

export function queryError(error: unknown, hogqlAttr: string | null): unknown {
  if (isQueryTimeout(error)) {
    return new ApiError(504, 'server_error', 'query_timeout', `${(error as Error).message}; narrow it (a shorter time range with after/before, an event name, fewer rows) and try again.`, null);
  }
  const message = error instanceof Error ? error.message : '';
  if (isQueryCancelled(error)) {
    // Nobody reads it; the status makes the log line say what happened (as nginx's 499 does).
    return new ApiError(499, 'invalid_request', 'client_closed_request', 'The client went away; its query was stopped.', null);
  }
  if (/^Out of Memory Error/.test(message)) {
    return new ApiError(
      503,
      'server_error',
      'out_of_memory',
      'The query needed more memory than the event store may use (SIGHTLINE_DUCKDB_MEMORY_LIMIT); ask for fewer rows (limit), a shorter time range or fewer properties, or raise the limit.',
      null,
    );
  }
  if (/^INTERRUPT Error/.test(message)) {
    // Only shutdown interrupts a query without a timeout (readers.ts answers those first).
    return new ApiError(503, 'server_error', 'shutting_down', 'The server is shutting down; retry in a moment.', null);
  }
  if (hogqlAttr === null || !EVALUATION_ERROR.test(message)) return error;
  // First line only: DuckDB appends the offending SQL text, which is ours, not the user's.
  return validationError(`The query could not be run: ${message.split('\n')[0]}`, hogqlAttr);
}

/** `signal`: aborted when the client went away, which stops the query. */
export function runner(store: EventStore, hogqlAttr: string | null, signal?: AbortSignal): Runner {
  return async (query) => {
    try {
      return await store.query(query, signal);
    } catch (error) {
      throw queryError(error, hogqlAttr);
    }
  };
}
