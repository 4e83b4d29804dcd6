/**
 * Fault: one ClickHouse server (shard 2 of the Distributed table) stops under capture load, with
 * events in ClickHouse and the NATS log on (issue #27, item 6). Capture keeps acknowledging
 * (the stream holds the batches); ingestion waits and catches up once the server is back, with
 * nothing acknowledged lost and nothing stored twice; a query during the outage fails clearly:
 * 503 `event_store_unavailable` with Retry-After, within a bound (a query over a Distributed table
 * with a shard missing would be silently partial otherwise); /_ready names the shard. The server is started again at the
 * end with the cluster script's command line. Runs only when a cluster is up.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { clusterAvailability } from '../helpers/cluster.js';
import { assertStoredOnce, CaptureLoad, clusterCommand, FAULT_EVENT, sleep, timedGet } from '../helpers/faults.js';
import { dropClickHouseAtExit } from '../helpers/drop-at-exit.js';
import { databaseFor } from '../helpers/postgres-databases.js';
import { newTempDir, startServer } from '../helpers/server.js';

const availability = clusterAvailability();
const skip = availability.enabled ? false : availability.reason;
/** A query during the outage must answer within this (the waits for acknowledged batches included). */
const QUERY_BOUND_MS = 15_000;
const OUTAGE_MS = 15_000;
const STOPPED = 'clickhouse-2';
let stopped = false;

after(async () => {
  if (!availability.enabled) return;
  if (stopped) await clusterCommand('start', STOPPED).catch(() => undefined);
});

describe('fault: one ClickHouse server stops under capture load', { skip, concurrency: false }, () => {
  test('capture acknowledges, queries fail clearly, ingestion catches up with nothing lost or doubled', { timeout: 300_000 }, async () => {
    if (!availability.enabled) return;
    const { postgresUrl, clickhouseUrls, clickhouseCluster, natsServers } = availability.settings;
    const tag = randomBytes(6).toString('hex');
    const database = `sightline_test_faultch_${tag}`;
    dropClickHouseAtExit(clickhouseUrls[0], clickhouseCluster, database);
    const server = await startServer({
      env: {
        SIGHTLINE_POSTGRES_URL: await databaseFor(postgresUrl, newTempDir()),
        SIGHTLINE_CLICKHOUSE_URL: clickhouseUrls.join(','),
        SIGHTLINE_CLICKHOUSE_CLUSTER: clickhouseCluster,
        SIGHTLINE_CLICKHOUSE_DATABASE: database,
        SIGHTLINE_NATS_URL: natsServers.join(','),
        SIGHTLINE_NATS_STREAM: `T_FAULTCH_${tag}`,
        SIGHTLINE_NATS_PARTITIONS: '4',
      },
    });
    let loadToStop: CaptureLoad | null = null;
    try {
      const load = new CaptureLoad([server], 2);
      loadToStop = load;
      await sleep(3_000);
      const stoppingAt = Date.now();
      stopped = true;
      await clusterCommand('stop', STOPPED);
      const stoppedAt = Date.now();

      await sleep(1_000);
      const query = await timedGet(`${server.url}/api/projects/@current/query/`, QUERY_BOUND_MS, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.personalKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: { kind: 'HogQLQuery', query: `select count() from events where event = '${FAULT_EVENT}'` }, refresh: 'force_blocking' }),
      });
      console.log(`a query during the outage: ${query.response.status} in ${query.ms} ms`, JSON.stringify(query.body));
      assert.equal(query.response.status, 503);
      assert.equal((query.body as any).code, 'event_store_unavailable');
      assert.ok(query.response.headers.get('retry-after'));

      const health = await timedGet(`${server.url}/_health`, 5_000);
      console.log('/_health during the outage:', JSON.stringify(health.body));
      const ready = await timedGet(`${server.url}/_ready`, 5_000);
      console.log(`/_ready during the outage: ${ready.response.status} in ${ready.ms} ms`, JSON.stringify(ready.body));
      assert.equal(ready.response.status, 503);
      assert.deepEqual((ready.body as any).checks, { postgres: 'ok', clickhouse: 'down', clickhouse_shard_1: 'ok', clickhouse_shard_2: 'down', nats: 'ok' }, '/_ready names the shard that is down');

      await sleep(Math.max(0, OUTAGE_MS - (Date.now() - stoppedAt)));
      const restartingAt = Date.now();
      const during = load.acknowledgedBetween(stoppedAt, restartingAt);
      console.log(`capture during the outage (${restartingAt - stoppedAt} ms):`, JSON.stringify(load.statuses(stoppedAt, restartingAt)));
      assert.ok(during > 0, 'capture keeps acknowledging while a ClickHouse server is down');
      await clusterCommand('start', STOPPED);
      stopped = false;
      const restartedAt = Date.now();
      await sleep(2_000);
      await load.stop();
      const storedMs = await assertStoredOnce(server, load.acknowledged, 180_000);
      console.log(
        `clickhouse fault: stop took ${stoppedAt - stoppingAt} ms, start ${restartedAt - restartingAt} ms; ${load.acknowledged.length} events acknowledged (${during} batches during the outage); ` +
          `all stored once ${Date.now() - restartedAt} ms after the server answered again (${storedMs} ms after the load stopped)`,
      );
    } finally {
      await loadToStop?.stop(); // stopped already, unless the test failed midway
      await server.stop();
    }
  });
});
