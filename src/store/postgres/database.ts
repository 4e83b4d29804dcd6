import pg from 'pg';
import { storeUnavailable } from '../../kernel/errors.js';
import { migrations } from './migrations.js';
import { jsonColumn } from '../rows.js';

export type PgPool = pg.Pool;
export type PgClient = pg.PoolClient;
export type Row = Record<string, unknown>;

/** Any numbers: keys of the session locks, chosen once (pg_advisory_lock takes a bigint). */
const MIGRATION_LOCK = 7_357_216_001;
export const FIRST_START_LOCK = 7_357_216_003;

/**
 * PostgreSQL text cannot hold U+0000, which JSON and SQLite allow: every string parameter has it
 * replaced by U+FFFD, as PostHog's ingestion does, so such an id or name is stored and found
 * under that spelling instead of failing the flush (JSON text escapes it and is unaffected).
 */
const withoutNul = (value: unknown): unknown => {
  if (typeof value === 'string') return value.includes('\u0000') ? value.replaceAll('\u0000', '\uFFFD') : value;
  if (Array.isArray(value)) return value.map(withoutNul);
  return value;
};

// Failures of reaching the server, not of a statement: system errors of the socket, SQLSTATE
// classes 08 (connection exception) and 57P01–57P03 (shutdown, crash, not accepting connections
// yet), and node-postgres' own messages for a connection lost or never made.
const UNREACHABLE_SYSTEM_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const UNREACHABLE_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[1-3])$/;
const UNREACHABLE_MESSAGE = /Connection terminated|timeout exceeded when trying to connect|connection error|Client was closed|not queryable/i;

function isUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === 'string') return UNREACHABLE_SYSTEM_CODES.has(code) || UNREACHABLE_SQLSTATE.test(code);
  return error instanceof Error && UNREACHABLE_MESSAGE.test(error.message);
}

/** An unreachable server becomes the engine-neutral MetaStoreUnavailableError (a 503 in the API); anything else stays as it is. */
const asUnavailable = (error: unknown): never => {
  throw isUnreachable(error) ? storeUnavailable('MetaStoreUnavailableError', error) : error;
};

const mapRejection = (result: unknown): unknown =>
  result && typeof (result as Promise<unknown>).then === 'function' ? (result as Promise<unknown>).catch(asUnavailable) : result;

class NulSafeClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    // A connection lost while checked out of the pool (a transaction when PostgreSQL stops) also
    // emits 'error', and the pool listens only to idle ones: unheard, it would end the process.
    // Its queries reject with the error, and the pool drops the client when it is released.
    this.on('error', () => {});
  }

  override query(...args: any[]): any {
    if (Array.isArray(args[1])) args[1] = args[1].map(withoutNul);
    else if (args[0] && typeof args[0] === 'object' && Array.isArray(args[0].values)) args[0] = { ...args[0], values: args[0].values.map(withoutNul) };
    return mapRejection((super.query as (...rest: unknown[]) => unknown)(...args));
  }
}

/** `query` too: the pool's own query connects through a callback, which `connect` alone would not map. */
class ReachabilityPool extends pg.Pool {
  override connect(...args: any[]): any {
    return mapRejection((super.connect as (...rest: unknown[]) => unknown)(...args));
  }

  override query(...args: any[]): any {
    return mapRejection((super.query as (...rest: unknown[]) => unknown)(...args));
  }
}

/** A pool on `url`; `max` connections (flag threads need few, the main thread more). */
export function openPool(url: string, max: number): PgPool {
  const pool = new ReachabilityPool({ connectionString: url, max, idleTimeoutMillis: 30_000, connectionTimeoutMillis: 10_000, Client: NulSafeClient });
  // An idle connection the server dropped (restart, failover) must not crash the process; the
  // next query takes a new one.
  pool.on('error', () => {});
  return pool;
}

/** Applies pending migrations; returns the versions it applied. Safe to run from many nodes at once. */
export function migrate(pool: PgPool): Promise<number[]> {
  return withSessionLock(pool, MIGRATION_LOCK, (client) => applyMigrations(client));
}

/** Runs `work` while this session holds the advisory lock `key`: nodes doing the same take turns. */
export async function withSessionLock<T>(pool: PgPool, key: number, work: (client: PgClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [key]);
    return await work(client);
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [key]).catch(() => {});
    client.release();
  }
}

async function applyMigrations(client: PgClient): Promise<number[]> {
  const applied: number[] = [];
  await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)');
  const done = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((row) => row.version));
  for (const migration of migrations) {
    if (done.has(migration.version)) continue;
    await inTransaction(client, async () => {
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [migration.version, migration.name, new Date().toISOString()]);
    });
    applied.push(migration.version);
  }
  return applied;
}

async function inTransaction<T>(client: PgClient, work: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/** Runs `work` in one transaction on one connection of the pool. */
export async function transaction<T>(pool: PgPool, work: (client: PgClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    return await inTransaction(client, () => work(client));
  } finally {
    client.release();
  }
}

/** Something `query` can run on: the pool, or a transaction's client. */
export type Queryable = Pick<pg.Pool, 'query'> | PgClient;

export async function rows<T = Row>(db: Queryable, sql: string, params: unknown[] = []): Promise<T[]> {
  return (await db.query(sql, params)).rows as T[];
}

export async function one<T = Row>(db: Queryable, sql: string, params: unknown[] = []): Promise<T | undefined> {
  return (await db.query(sql, params)).rows[0] as T | undefined;
}

/** Rows a write touched. */
export async function changes(db: Queryable, sql: string, params: unknown[] = []): Promise<number> {
  return (await db.query(sql, params)).rowCount ?? 0;
}

export const isUniqueViolation = (error: unknown): boolean => (error as { code?: string }).code === '23505';

/** `json` columns come back parsed; a text value (never expected) is parsed too. */
export const jsonValue = jsonColumn;

/** Whether `id` fits an `integer` column: a larger one names nothing (and PostgreSQL would refuse to compare it). */
export const isInt4 = (id: number): boolean => Number.isInteger(id) && id >= -2_147_483_648 && id <= 2_147_483_647;

/** Builds a statement's `$n` placeholders as its parameters are added. */
export class Params {
  readonly values: unknown[] = [];

  /** Adds a value and returns its placeholder. */
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}
