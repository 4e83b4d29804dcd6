/**
 * `sightline export` / `import` across modes (docs/export-import.md): an embedded folder moved
 * into PostgreSQL + ClickHouse (two shards under a Distributed table) answers the API alike —
 * persons, flags and /flags answers, cohorts, the events list, trends and HogQL queries — and
 * exported again from there into a new embedded folder, still alike.
 * Runs only when the cluster tests are on (test/helpers/cluster.ts).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { clusterAvailability } from '../helpers/cluster.js';
import { dropClickHouseAtExit } from '../helpers/drop-at-exit.js';
import { databaseFor } from '../helpers/postgres-databases.js';
import { newTempDir, startServer, type TestServer } from '../helpers/server.js';
import { checkPaging, fill, OWNER_ENV, sightline, snapshot } from '../helpers/transfer.js';
import { PostgresMetaStore } from '../../src/store/postgres/meta-store.js';

const availability = clusterAvailability();
const skip = availability.enabled ? false : availability.reason;
const EMBEDDED = { ...OWNER_ENV, SIGHTLINE_POSTGRES_URL: '', SIGHTLINE_CLICKHOUSE_URL: '' };

describe('the PostgreSQL store\'s whole-table reads and writes', { skip }, () => {
  test('rows written through the transfer path read back once each, in pages, whatever the collation does with the keys', async () => {
    if (!availability.enabled) return;
    const meta = await PostgresMetaStore.open({ url: await databaseFor(availability.settings.postgresUrl, newTempDir()), node: 'transfer-test', maxConnections: 2 });
    try {
      await checkPaging(meta);
    } finally {
      await meta.close();
    }
  });
});

describe('export from the embedded mode, import into PostgreSQL + ClickHouse, and back', { skip }, () => {
  const servers: TestServer[] = [];
  const clickhouseDatabase = `sightline_test_transfer_${randomBytes(4).toString('hex')}`;
  if (availability.enabled) dropClickHouseAtExit(availability.settings.clickhouseUrls[0], availability.settings.clickhouseCluster, clickhouseDatabase);
  after(async () => {
    for (const server of servers) await server.stop();
  });

  test('every API answer is the same in the distributed mode, and after the way back', async () => {
    if (!availability.enabled) return;
    const { postgresUrl, clickhouseUrls, clickhouseCluster } = availability.settings;
    const source = await startServer({ env: EMBEDDED });
    servers.push(source);
    const filled = await fill(source);
    const before = await snapshot(source, filled);
    assert.equal(await source.stop(), 0);

    const archive = path.join(newTempDir(), 'archive');
    const exported = await sightline({ SIGHTLINE_DATA_DIR: source.dataDir }, ['export', '--out', archive, '--gzip']);
    assert.equal(exported.code, 0, exported.stderr);

    const clusterDir = newTempDir();
    const clusterEnv = {
      SIGHTLINE_POSTGRES_URL: await databaseFor(postgresUrl, clusterDir),
      SIGHTLINE_CLICKHOUSE_URL: clickhouseUrls.join(','),
      SIGHTLINE_CLICKHOUSE_CLUSTER: clickhouseCluster,
      SIGHTLINE_CLICKHOUSE_DATABASE: clickhouseDatabase,
    };
    const imported = await sightline({ SIGHTLINE_DATA_DIR: clusterDir, ...clusterEnv }, ['import', '--from', archive]);
    assert.equal(imported.code, 0, imported.stderr);

    const keys = { projectKey: source.projectKey, personalKey: source.personalKey };
    const distributed = await startServer({ dataDir: clusterDir, env: { ...OWNER_ENV, ...clusterEnv }, ...keys });
    servers.push(distributed);
    const inCluster = await snapshot(distributed, filled);
    for (const key of Object.keys(before)) assert.deepEqual(inCluster[key], before[key], `distributed: ${key}`);
    assert.equal(await distributed.stop(), 0);

    // The way back: the distributed stores exported, into a new embedded folder.
    const secondArchive = path.join(newTempDir(), 'archive');
    const reexported = await sightline({ SIGHTLINE_DATA_DIR: clusterDir, ...clusterEnv }, ['export', '--out', secondArchive]);
    assert.equal(reexported.code, 0, reexported.stderr);
    const manifest = JSON.parse(fs.readFileSync(path.join(secondArchive, 'manifest.json'), 'utf8'));
    assert.deepEqual(manifest.source, { metadata: 'postgresql', events: 'clickhouse' });
    assert.equal(manifest.events.rows, filled.events + 1);
    const embeddedDir = newTempDir();
    const reimported = await sightline({ SIGHTLINE_DATA_DIR: embeddedDir }, ['import', '--from', secondArchive]);
    assert.equal(reimported.code, 0, reimported.stderr);
    const back = await startServer({ dataDir: embeddedDir, env: EMBEDDED, ...keys });
    servers.push(back);
    const afterReturn = await snapshot(back, filled);
    for (const key of Object.keys(before)) assert.deepEqual(afterReturn[key], before[key], `embedded again: ${key}`);
  });
});
