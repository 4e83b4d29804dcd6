/**
 * SIGHTLINE_TEST_EVENT_STORE=chdb: each test server keeps its events in ClickHouse 26.7 in its own
 * process (test/chdb/in-process.ts) rather than on the local cluster's 18.16 servers, with one
 * single-node database (no cluster name). The chdb folder belongs to the data folder, so a server
 * restarted on the same data finds its events again; the folders go when the test process exits.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PRELOAD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../chdb/in-process.ts');
const folders = new Map<string, string>();

export const onChdb = () => process.env.SIGHTLINE_TEST_EVENT_STORE === 'chdb';

/** Events in ClickHouse, on the cluster's 18.16 or in chdb's 26.7. */
export const onClickHouse = () => process.env.SIGHTLINE_TEST_EVENT_STORE === 'clickhouse' || onChdb();

/** Events on the cluster's ClickHouse 18.16, where the printer refuses what that server lacks (window functions, JSONExtract). */
export const onClickHouse18 = () => process.env.SIGHTLINE_TEST_EVENT_STORE === 'clickhouse';

/** The settings and node flags that put a server on `dataDir` on chdb; nothing unless the tests run on chdb. */
export function chdbLaunchFor(dataDir: string): { env: Record<string, string>; nodeArgs: string[] } {
  if (!onChdb()) return { env: {}, nodeArgs: [] };
  let folder = folders.get(dataDir);
  if (!folder) {
    if (folders.size === 0) process.once('exit', removeFolders);
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-chdb-'));
    folders.set(dataDir, folder);
  }
  return {
    // The URL is required by the settings but not used: the preload replaces the transport.
    env: { SIGHTLINE_CLICKHOUSE_URL: 'http://chdb.in-process', SIGHTLINE_CLICKHOUSE_DATABASE: 'sightline', SIGHTLINE_TEST_CHDB_DIR: folder },
    nodeArgs: ['--import', PRELOAD],
  };
}

function removeFolders(): void {
  if (process.env.SIGHTLINE_KEEP_TEMP_DIRS === '1') return;
  for (const folder of folders.values()) fs.rmSync(folder, { recursive: true, force: true });
}
