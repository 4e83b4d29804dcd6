/** The event store's real schema in an in-memory DuckDB, for unit tests of the SQL we print. */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { DuckDbDialect } from '../../src/hogql/duckdb/dialect.js';
import { CREATE_PENDING_EVENTS, INSERT_PENDING_EVENTS, materializedColumns } from '../../src/store/duckdb/materialized.js';
import { duckMigrations } from '../../src/store/duckdb/schema.js';

export async function inMemoryEventStore(): Promise<{ db: DuckDBInstance; conn: DuckDBConnection }> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  for (const migration of duckMigrations) await conn.run(migration.sql);
  return { db, conn };
}

/**
 * Events that `fill` inserts into `pending_events` (the stored columns, in the order of migration
 * 1) reach `events` with their materialized columns, as the store writes them.
 */
export async function insertEvents(conn: DuckDBConnection, fill: () => Promise<void>): Promise<void> {
  await conn.run(CREATE_PENDING_EVENTS);
  await fill();
  await conn.run(INSERT_PENDING_EVENTS);
}

/** The dialect the event store prints with (its materialized columns included). */
export const storeDialect = () => new DuckDbDialect({ materialized: materializedColumns() });
