import { isStoreUnavailable } from '../kernel/errors.js';
import { storeErrorCode } from './sqlite/result-codes.js';

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
 * conversion, a range, a binding), running out of the store's memory, an interrupt at
 * shutdown, or a store that must be reopened first (an engine failure the next call recovers
 * from).
 */
export type QueryFailure = 'QueryEvaluationError' | 'QueryOutOfMemoryError' | 'QueryInterruptedError' | 'QueryStoreRecoveringError';

export function queryFailure(name: QueryFailure, message: string): Error {
  return Object.assign(new Error(message), { name });
}

export const isQueryFailure = (error: unknown, name: QueryFailure) => error instanceof Error && error.name === name;

/**
 * A flush was planned on persons that another node changed before it was applied (a merge on
 * one node, a property update on another): nothing was written, and planning again on what
 * the store holds now gives the right result.
 */
export class PersonsChangedError extends Error {
  constructor(readonly changed: number) {
    super(`${changed} distinct id(s) of the flush changed person since they were read`);
    this.name = 'PersonsChangedError';
  }
}

/** The data folder, or a store file in it, cannot be created, opened or written. */
export class DataDirError extends Error {
  constructor(
    readonly dataDir: string,
    readonly reason: string,
  ) {
    super(`Cannot use the data folder ${dataDir}: ${reason}`);
    this.name = 'DataDirError';
  }

  /** One line for a person: where, why, and what to do. */
  get advice(): string {
    const uid = typeof process.getuid === 'function' ? ` (uid ${process.getuid()})` : '';
    return `${this.message}. Make it a folder this user${uid} can write, or set SIGHTLINE_DATA_DIR to one.`;
  }
}

/** The PostgreSQL metadata store cannot be reached or migrated at start. */
export class MetaStoreUnreachableError extends Error {
  constructor(url: string, reason: string) {
    super(`Cannot use the PostgreSQL metadata store at ${withoutPassword(url)}: ${reason}`);
    this.name = 'MetaStoreUnreachableError';
  }

  /** One line for a person: where, why, and what to do. */
  get advice(): string {
    return `${this.message}. Start it, or correct SIGHTLINE_POSTGRES_URL.`;
  }
}

/** The ClickHouse event store cannot be reached or migrated at start. */
export class EventStoreUnreachableError extends Error {
  constructor(url: string, reason: string) {
    super(`Cannot use the ClickHouse event store at ${withoutPassword(url)}: ${reason}`);
    this.name = 'EventStoreUnreachableError';
  }

  /** One line for a person: where, why, and what to do. */
  get advice(): string {
    return `${this.message}. Start it, or correct SIGHTLINE_CLICKHOUSE_URL (and SIGHTLINE_CLICKHOUSE_CLUSTER).`;
  }
}

function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unreadable URL)';
  }
}

/** The cause of a failed open, in one line (a SQLite or system error code first when there is one). */
export function describeOpenError(error: unknown): string {
  const code = storeErrorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split('\n')[0];
  return typeof code === 'string' && !line.startsWith(code) ? `${code}: ${line}` : line;
}

// SQLite result codes (extended ones start with these) for changes the store refuses because
// of what they hold; anything else (I/O, a full disk, a lock, a closed store) means the store
// cannot work at the moment, whatever it is given.
const CONTENT_CODES = ['SQLITE_CONSTRAINT', 'SQLITE_MISMATCH', 'SQLITE_TOOBIG', 'SQLITE_RANGE'];
// PostgreSQL's SQLSTATE classes of the same kind: data exceptions (22), integrity constraint
// violations (23) and program limits such as a row too large (54). Connection failures (08,
// or a system code such as ECONNREFUSED) and shutdowns (57) are not content.
const POSTGRES_CONTENT = /^(22|23|54)[0-9A-Z]{3}$/;

/**
 * Did a store refuse a write because of its content (so the same write fails every time, and
 * a write without the offending part may succeed)? Errors without a code are program errors on
 * the data (a TypeError on an unexpected value), so they count as content too.
 */
export function refusesContent(error: unknown): boolean {
  // A server that cannot be reached refuses nothing: node-postgres' lost-connection errors carry no code.
  if (isStoreUnavailable(error)) return false;
  // A write planned on stale persons: planned again, it goes through.
  if (error instanceof PersonsChangedError) return false;
  const code = storeErrorCode(error);
  if (typeof code !== 'string') return error instanceof Error;
  return CONTENT_CODES.some((prefix) => code.startsWith(prefix)) || POSTGRES_CONTENT.test(code);
}
