/**
 * A PostgreSQL database of its own for each test server's data folder, on the cluster's server
 * (cluster.ts): a restart on the same folder finds its metadata again, and no two servers share
 * one. They are dropped when the test file's process is done.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { dropPostgresAtExit } from './drop-at-exit.js';

const databases = new Map<string, string>();

function withDatabase(url: string, database: string): string {
  const next = new URL(url);
  next.pathname = `/${database}`;
  return next.toString();
}

/** Runs `work` on a connection of its own to `url`, closed after. */
export async function admin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The URL of the database kept for `dataDir`, created on first use. */
export async function databaseFor(clusterUrl: string, dataDir: string): Promise<string> {
  let name = databases.get(dataDir);
  if (!name) {
    name = `sightline_test_${randomBytes(6).toString('hex')}`;
    const created = name;
    await admin(clusterUrl, (client) => client.query(`CREATE DATABASE ${created}`));
    databases.set(dataDir, name);
    dropPostgresAtExit(clusterUrl, name);
  }
  return withDatabase(clusterUrl, name);
}

/** The URL of the database a test server on `dataDir` used, if it had one. */
export function databaseUrlOf(clusterUrl: string | null, dataDir: string): string | null {
  const name = databases.get(dataDir);
  return clusterUrl && name ? withDatabase(clusterUrl, name) : null;
}
