/**
 * A ClickHouse database of its own for each test server's data folder, on the local cluster's
 * servers (cluster.ts), when SIGHTLINE_TEST_EVENT_STORE=clickhouse: a restart on the same folder
 * finds its events again, and no two servers share one. The server creates it (its migrations);
 * they are dropped, on every shard, when the test file's process is done.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { clusterAvailability } from './cluster.js';
import { dropClickHouseAtExit } from './drop-at-exit.js';

const databases = new Map<string, string>();

/** The SIGHTLINE_CLICKHOUSE_* settings for a server on `dataDir`; empty unless the tests run on ClickHouse. */
export function clickhouseEnvFor(dataDir: string): Record<string, string> {
  if (process.env.SIGHTLINE_TEST_EVENT_STORE !== 'clickhouse') return {};
  const availability = clusterAvailability();
  if (!availability.enabled) throw new Error(`SIGHTLINE_TEST_EVENT_STORE=clickhouse needs the local cluster: ${availability.reason}`);
  const { clickhouseUrls, clickhouseCluster } = availability.settings;
  let name = databases.get(dataDir);
  if (!name) {
    name = `sightline_test_${randomBytes(6).toString('hex')}`;
    databases.set(dataDir, name);
    dropClickHouseAtExit(clickhouseUrls[0], clickhouseCluster, name);
  }
  return { SIGHTLINE_CLICKHOUSE_URL: clickhouseUrls.join(','), SIGHTLINE_CLICKHOUSE_CLUSTER: clickhouseCluster, SIGHTLINE_CLICKHOUSE_DATABASE: name };
}

/** Rows of a SELECT sent straight to one ClickHouse server over HTTP (JSONEachRow), asserting it answered 200. */
export async function clickhouseRows<T>(url: string, db: string, sql: string): Promise<T[]> {
  const response = await fetch(`${url}/?database=${db}`, { method: 'POST', body: `${sql} FORMAT JSONEachRow` });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as T);
}
