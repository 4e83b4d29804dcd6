/** The event store's real schema in an in-memory DuckDB, for unit tests of the SQL we print. */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { duckMigrations } from '../../src/store/duckdb/schema.js';

export async function inMemoryEventStore(): Promise<{ db: DuckDBInstance; conn: DuckDBConnection }> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  for (const migration of duckMigrations) await conn.run(migration.sql);
  return { db, conn };
}
