/**
 * The local scale-out cluster answers the way the distributed mode will use it: PostgreSQL takes
 * DDL and notifications, ClickHouse spreads rows over both shards through one Distributed
 * table, and NATS keeps a three-replica stream that drops re-sent messages.
 * Runs only when a cluster is up (see test/helpers/cluster.ts).
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { describe, test } from 'node:test';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { AckPolicy, connect, StorageType, type JsMsg } from 'nats';
import pg from 'pg';
import { clusterAvailability, type ClusterSettings } from '../helpers/cluster.js';

const availability = clusterAvailability();
const skip = availability.enabled ? false : availability.reason;
const settings = (): ClusterSettings => {
  if (!availability.enabled) throw new Error(availability.reason);
  return availability.settings;
};
/** A name no earlier run has used, so leftovers of a failed run cannot interfere. */
const uniqueName = (prefix: string): string => `${prefix}_${randomBytes(5).toString('hex')}`;
const TIMEOUT = 120_000;

describe('PostgreSQL', { skip }, () => {
  test('accepts a connection, a CREATE TABLE and an upsert', { timeout: TIMEOUT }, async () => {
    const client = new pg.Client({ connectionString: settings().postgresUrl });
    await client.connect();
    const table = uniqueName('smoke');
    try {
      await client.query(`CREATE TABLE ${table} (id bigint PRIMARY KEY, body jsonb NOT NULL)`);
      const upsert = `INSERT INTO ${table} (id, body) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body`;
      await client.query(upsert, [1, { plan: 'free' }]);
      await client.query(upsert, [1, { plan: 'pro' }]);
      const { rows } = await client.query(`SELECT id, body FROM ${table}`);
      assert.deepEqual(rows, [{ id: '1', body: { plan: 'pro' } }]);
    } finally {
      await client.query(`DROP TABLE IF EXISTS ${table}`);
      await client.end();
    }
  });

  test('delivers a NOTIFY to another connection that listens', { timeout: TIMEOUT }, async () => {
    const listener = new pg.Client({ connectionString: settings().postgresUrl });
    const notifier = new pg.Client({ connectionString: settings().postgresUrl });
    await Promise.all([listener.connect(), notifier.connect()]);
    const channel = uniqueName('smoke');
    try {
      await listener.query(`LISTEN ${channel}`);
      const received = once(listener, 'notification');
      await notifier.query('SELECT pg_notify($1, $2)', [channel, 'flags:42']);
      const [message] = (await received) as [pg.Notification];
      assert.equal(message.channel, channel);
      assert.equal(message.payload, 'flags:42');
    } finally {
      await Promise.all([listener.end(), notifier.end()]);
    }
  });
});

describe('ClickHouse', { skip }, () => {
  const count = async (client: ClickHouseClient, query: string): Promise<number> => {
    const rows = await (await client.query({ query, format: 'JSONEachRow' })).json<{ n: string | number }>();
    return Number(rows[0].n);
  };
  const distinctIds = async (client: ClickHouseClient, table: string): Promise<string[]> => {
    const rows = await (await client.query({ query: `SELECT DISTINCT distinct_id FROM ${table}`, format: 'JSONEachRow' })).json<{ distinct_id: string }>();
    return rows.map((row) => row.distinct_id);
  };

  test('a Distributed table over a ReplicatedReplacingMergeTree spreads rows over both shards', { timeout: TIMEOUT }, async () => {
    const { clickhouseUrls, clickhouseCluster: cluster } = settings();
    assert.equal(clickhouseUrls.length, 2, 'SIGHTLINE_CLICKHOUSE_URL names both servers');
    assert.match(cluster, /^\w+$/);
    // Debian's 18.16 knows neither JSONCompactEachRow (the client's default) nor server-side
    // parameters, so every call names its format and the SQL carries only our own names.
    const [first, second] = clickhouseUrls.map((url) => createClient({ url }));
    const table = uniqueName('smoke_events');
    try {
      await first.command({
        query: `CREATE TABLE default.${table}_local ON CLUSTER ${cluster}
          (uuid UUID, distinct_id String, event String, timestamp DateTime, version UInt64)
          ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/${table}_local', '{replica}', version)
          PARTITION BY toYYYYMM(timestamp) ORDER BY (distinct_id, uuid)`,
      });
      await first.command({
        query: `CREATE TABLE default.${table} ON CLUSTER ${cluster} AS default.${table}_local
          ENGINE = Distributed(${cluster}, default, ${table}_local, sipHash64(distinct_id))`,
      });

      const rows = Array.from({ length: 200 }, (_, i) => ({
        uuid: randomUUID(),
        distinct_id: `user-${i % 50}`,
        event: '$pageview',
        timestamp: 1_700_000_000 + i,
        version: 1,
      }));
      // Synchronous: the insert returns once both shards hold their rows.
      await first.insert({ table, values: rows, format: 'JSONEachRow', clickhouse_settings: { insert_distributed_sync: 1 } });

      const onFirst = await count(first, `SELECT count() AS n FROM ${table}_local`);
      const onSecond = await count(second, `SELECT count() AS n FROM ${table}_local`);
      assert.ok(onFirst > 0 && onSecond > 0, `both shards hold rows (${onFirst} and ${onSecond})`);
      assert.equal(onFirst + onSecond, rows.length);
      const [peopleFirst, peopleSecond] = await Promise.all([first, second].map((client) => distinctIds(client, `${table}_local`)));
      assert.deepEqual(peopleFirst.filter((id) => peopleSecond.includes(id)), [], 'a person lives on one shard only');

      for (const client of [first, second]) {
        assert.equal(await count(client, `SELECT count() AS n FROM ${table}`), rows.length);
        assert.equal(await count(client, `SELECT uniqExact(distinct_id) AS n FROM ${table}`), 50);
      }

      // A second version of one event replaces the first once read with FINAL.
      await second.insert({ table, values: [{ ...rows[7], event: 'renamed', version: 2 }], format: 'JSONEachRow', clickhouse_settings: { insert_distributed_sync: 1 } });
      assert.equal(await count(first, `SELECT count() AS n FROM ${table} FINAL`), rows.length);
      const replaced = await (await first.query({ query: `SELECT event FROM ${table} FINAL WHERE uuid = '${rows[7].uuid}'`, format: 'JSONEachRow' })).json<{ event: string }>();
      assert.deepEqual(replaced, [{ event: 'renamed' }]);
    } finally {
      await first.command({ query: `DROP TABLE IF EXISTS default.${table} ON CLUSTER ${cluster}` });
      await first.command({ query: `DROP TABLE IF EXISTS default.${table}_local ON CLUSTER ${cluster}` });
      await Promise.all([first.close(), second.close()]);
    }
  });
});

describe('NATS JetStream', { skip }, () => {
  test('a three-replica stream drops a re-sent message id and feeds a durable consumer', { timeout: TIMEOUT }, async () => {
    const { natsServers } = settings();
    assert.equal(natsServers.length, 3, 'SIGHTLINE_NATS_URL names three nodes');
    const nc = await connect({ servers: natsServers });
    const jsm = await nc.jetstreamManager();
    const stream = uniqueName('SMOKE');
    try {
      await jsm.streams.add({ name: stream, subjects: [`${stream}.>`], storage: StorageType.File, num_replicas: 3 });
      const info = await jsm.streams.info(stream);
      assert.equal(info.config.num_replicas, 3);
      assert.ok(info.cluster?.leader, 'the stream has a leader');
      assert.equal(info.cluster?.replicas?.length, 2, 'and two followers');

      const js = nc.jetstream();
      const batches = Array.from({ length: 10 }, (_, i) => ({ id: randomUUID(), body: `batch-${i}` }));
      for (const batch of batches) {
        const ack = await js.publish(`${stream}.events`, Buffer.from(batch.body), { msgID: batch.id });
        assert.equal(ack.duplicate, false);
      }
      const retried = await js.publish(`${stream}.events`, Buffer.from(batches[3].body), { msgID: batches[3].id });
      assert.equal(retried.duplicate, true, 'a re-sent message id is recognised');
      assert.equal((await jsm.streams.info(stream)).state.messages, batches.length, 'and not stored twice');

      const durable = 'smoke-writer';
      await jsm.consumers.add(stream, { durable_name: durable, ack_policy: AckPolicy.Explicit });
      const consumer = await js.consumers.get(stream, durable);
      const received: string[] = [];
      while (received.length < batches.length) {
        const messages = await consumer.fetch({ max_messages: batches.length, expires: 2000 });
        let got = 0;
        for await (const message of messages as AsyncIterable<JsMsg>) {
          received.push(message.string());
          await message.ackAck();
          got++;
        }
        assert.ok(got > 0, 'the consumer keeps receiving until every message is in');
      }
      assert.deepEqual(received, batches.map((batch) => batch.body));

      // The acknowledgements belong to the durable consumer, not to this connection.
      await nc.drain();
      const again = await connect({ servers: natsServers });
      try {
        const state = await (await again.jetstreamManager()).consumers.info(stream, durable);
        assert.equal(state.num_pending, 0);
        assert.equal(state.num_ack_pending, 0);
        assert.equal(state.ack_floor.stream_seq, batches.length);
      } finally {
        await again.close();
      }
    } finally {
      const cleanup = await connect({ servers: natsServers });
      await (await cleanup.jetstreamManager()).streams.delete(stream).catch(() => undefined);
      await cleanup.close();
      if (!nc.isClosed()) await nc.close();
    }
  });
});
