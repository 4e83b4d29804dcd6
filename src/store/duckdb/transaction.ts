import type { DuckDBConnection } from '@duckdb/node-api';

/**
 * Runs `work` in a transaction on `c`. `work` commits itself, so that the commit can share a
 * round trip with its last statement; if anything fails, the transaction is rolled back and the
 * error rethrown.
 */
export async function inTransaction<T>(c: DuckDBConnection, work: () => Promise<T>): Promise<T> {
  await c.run('BEGIN TRANSACTION');
  try {
    return await work();
  } catch (error) {
    await c.run('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
