/**
 * Running statements. The compiler keeps user expressions from failing at run time where it can
 * (conversions that give NULL); whatever the store still rejects while evaluating them is the
 * request's fault, so it becomes a 400 naming the HogQL parameter, never a 500. A query stopped
 * at the event store's time limit becomes a 504 `query_timeout`, one that ran out of the event
 * store's memory a 503 `out_of_memory`, one that met an event store being recovered (DuckDB
 * invalidated its database, say after a failed checkpoint; the next call reopens it) a 503
 * with Retry-After.
 */
import { ApiError, serviceUnavailable, validationError } from '../kernel/errors.js';
import { decodeRows, HogQLError, type ir, type PrintedQuery, type PrintOptions, type SqlDialect } from '../hogql/index.js';
import { isQueryCancelled, isQueryFailure, isQueryTimeout } from '../store/errors.js';
import type { EventStore } from '../store/types.js';

/** Reopening the event store takes a moment (DuckDB replays its WAL). */
const STORE_RECOVERY_RETRY_SECONDS = 1;

export type Row = Record<string, unknown>;
/** Runs a statement; rows come back decoded (hogql/dialect.ts, RowValue). */
export type Runner = (query: ir.IrQuery, options?: PrintOptions) => Promise<Row[]>;

export function queryError(error: unknown, hogqlAttr: string | null): unknown {
  if (isQueryTimeout(error)) {
    return new ApiError(504, 'server_error', 'query_timeout', `${(error as Error).message}; narrow it (a shorter time range with after/before, an event name, fewer rows) and try again.`, null);
  }
  if (isQueryCancelled(error)) {
    // Nobody reads it; the status makes the log line say what happened (as nginx's 499 does).
    return new ApiError(499, 'invalid_request', 'client_closed_request', 'The client went away; its query was stopped.', null);
  }
  if (isQueryFailure(error, 'QueryOutOfMemoryError')) {
    return new ApiError(
      503,
      'server_error',
      'out_of_memory',
      'The query needed more memory than the event store may use (SIGHTLINE_DUCKDB_MEMORY_LIMIT); ask for fewer rows (limit), a shorter time range or fewer properties, or raise the limit.',
      null,
    );
  }
  if (isQueryFailure(error, 'QueryStoreRecoveringError')) {
    return serviceUnavailable('The event store is recovering from an error; retry in a moment.', STORE_RECOVERY_RETRY_SECONDS);
  }
  if (isQueryFailure(error, 'QueryInterruptedError')) {
    // Only shutdown interrupts a query without a timeout (the store answers those first).
    return new ApiError(503, 'server_error', 'shutting_down', 'The server is shutting down; retry in a moment.', null);
  }
  if (hogqlAttr === null || !isQueryFailure(error, 'QueryEvaluationError')) return error;
  return validationError(`The query could not be run: ${(error as Error).message}`, hogqlAttr);
}

/**
 * A statement in the store's dialect. A dialect refuses what its engine cannot run (the
 * ClickHouse 18.16 gaps) with a HogQLError: a 400 naming the gap, not a 500.
 */
function printFor(dialect: SqlDialect, query: ir.IrQuery, hogqlAttr: string | null, options?: PrintOptions): PrintedQuery {
  try {
    return dialect.print(query, options);
  } catch (error) {
    if (error instanceof HogQLError) throw validationError(error.message, error.attr ?? hogqlAttr);
    throw error;
  }
}

/** `signal`: aborted when the client went away, which stops the query. */
export function runner(store: EventStore, hogqlAttr: string | null, signal?: AbortSignal): Runner {
  return async (query, options) => {
    const printed = printFor(store.dialect, query, hogqlAttr, options);
    try {
      return decodeRows(store.dialect, query, await store.query(printed, signal));
    } catch (error) {
      throw queryError(error, hogqlAttr);
    }
  };
}

/** Streams a statement's rows in chunks (exports), decoded. */
export async function* streamRows(store: EventStore, query: ir.IrQuery, chunkRows: number): AsyncGenerator<Row[]> {
  for await (const rows of store.stream(printFor(store.dialect, query, null), chunkRows)) yield decodeRows(store.dialect, query, rows);
}
