/**
 * The NATS JetStream log between capture and ingestion (SIGHTLINE_NATS_URL): what capture
 * acknowledged is stored exactly once, a re-sent batch once, two nodes on one stream share the
 * work, and a node killed under load loses nothing it acknowledged. Servers share one PostgreSQL
 * database, one ClickHouse database and one stream of their own. Runs only when a cluster is up.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { connect, RetentionPolicy } from 'nats';
import { clusterAvailability, type ClusterSettings } from '../helpers/cluster.js';
import { partitionOf } from '../../src/ingestion/log/partitions.js';
import { batchOf, CaptureLoad, counts, holdPartitions, settledCounts, sharedNodesEnv, sleep, uuidsStored, waitFor, type SentEvent } from '../helpers/faults.js';
import { LOST_DELIVERIES_MESSAGE } from '../../src/ingestion/log/delivery-gaps.js';
import { startServer, type TestServer } from '../helpers/server.js';

const availability = clusterAvailability();
const skip = availability.enabled ? false : availability.reason;
const settings = (): ClusterSettings => {
  if (!availability.enabled) throw new Error(availability.reason);
  return availability.settings;
};
const TIMEOUT = 240_000;

/** Settings for servers that share one PostgreSQL database, ClickHouse database and stream of 4 partitions. */
const sharedEnv = async () => (await sharedNodesEnv(settings(), 'natslog', 4)).env;

const keys = () => ({ projectKey: `phc_test${randomBytes(12).toString('hex')}`, personalKey: `phx_test${randomBytes(12).toString('hex')}` });

const post = (server: TestServer, batch: SentEvent[]) => server.post('/batch/', { api_key: server.projectKey, batch });

describe('NATS JetStream log', { skip, concurrency: false }, () => {
  test('acknowledged events are stored exactly once; a re-sent batch once; lag is reported', { timeout: TIMEOUT }, async () => {
    const server = await startServer({ env: await sharedEnv(), ...keys() });
    try {
      assert.match(server.output(), /capture appends to the NATS JetStream log/);
      const batches = Array.from({ length: 20 }, () => batchOf(10));
      for (const batch of batches) assert.equal((await post(server, batch)).status, 200);
      // The same batch again (an SDK retry): same Nats-Msg-Id, same uuids.
      assert.equal((await post(server, batches[3])).status, 200);
      assert.equal((await post(server, batches[3])).status, 200);
      assert.deepEqual(await settledCounts(server, 200), [200, 200]);

      const health = (await (await server.api('/_health', { key: null })).json()) as { log_pending_messages: number | null };
      assert.equal(health.log_pending_messages, 0);
      const metrics = await (await server.api('/metrics', { key: null })).text();
      assert.match(metrics, /^sightline_ingest_log_pending_messages 0$/m);
    } finally {
      await server.stop();
    }
  });

  test("a person's share of a batch larger than a NATS message is published in parts, in order", { timeout: TIMEOUT }, async () => {
    // Events up to 2 MB are taken, more than one NATS message holds.
    const server = await startServer({ env: { ...(await sharedEnv()), SIGHTLINE_MAX_EVENT_BYTES: '2000000' }, ...keys() });
    try {
      // ~1.6 MB for one person: above NATS's default max_payload (1 MiB) for a message.
      const filler = 'x'.repeat(1_500);
      const batch = batchOf(1_000, 1).map((e, i) => ({ ...e, properties: { filler, $set: { last: i } } }));
      const response = await post(server, batch);
      assert.equal(response.status, 200, await response.text());
      assert.equal((await post(server, batch)).status, 200, 'a retry of the same batch');
      assert.deepEqual(await settledCounts(server, 1_000), [1_000, 1_000]);
      const found = await server.api(`/api/projects/@current/persons/?distinct_id=${batch[0].distinct_id}`);
      const [person] = ((await found.json()) as { results: { properties: Record<string, unknown> }[] }).results;
      assert.equal(person.properties.last, 999, "the parts were applied in the batch's order");

      const [huge] = batchOf(1).map((e) => ({ ...e, properties: { filler: 'x'.repeat(1_500_000) } }));
      const refused = await post(server, [huge, ...batchOf(3)]);
      assert.equal(refused.status, 413, 'an event no message can hold is refused: a retry cannot help');
      const body = (await refused.json()) as { code: string; detail: string };
      assert.equal(body.code, 'request_too_large');
      assert.match(body.detail, /max_payload/);
    } finally {
      await server.stop();
    }
  });

  test("a node that stops reading while its pulls deliver loses no deliveries (the pulls are bounded in bytes)", { timeout: TIMEOUT }, async () => {
    const env = await sharedEnv();
    const holder = await holdPartitions(env.SIGHTLINE_POSTGRES_URL, env.SIGHTLINE_NATS_STREAM, Number(env.SIGHTLINE_NATS_PARTITIONS));
    const server = await startServer({ env, ...keys() });
    const nc = await connect({ servers: settings().natsServers });
    try {
      // ~120 MB waiting in the stream: more than the NATS server leaves unread for one client (its
      // max_pending, 64 MiB) before it cuts the client off, losing the deliveries on their way.
      const filler = 'x'.repeat(10_000);
      const acknowledged: string[] = [];
      for (let i = 0; i < 60; i++) {
        const batch = batchOf(200).map((e) => ({ ...e, properties: { filler } }));
        assert.equal((await post(server, batch)).status, 200);
        acknowledged.push(...batch.map((e) => e.uuid));
      }
      await holder.release();
      const jsm = await nc.jetstreamManager();
      const partitions = Array.from({ length: Number(env.SIGHTLINE_NATS_PARTITIONS) }, (_, p) => p);
      await waitFor('the pulls to be served', async () => {
        const infos = await Promise.all(partitions.map((p) => jsm.consumers.info(env.SIGHTLINE_NATS_STREAM, `p${p}`)));
        return infos.every((info) => info.num_ack_pending > 0);
      });
      // A stalled event loop: the node reads nothing of what its pulls deliver meanwhile.
      server.process.kill('SIGSTOP');
      await sleep(3_000);
      server.process.kill('SIGCONT');
      assert.deepEqual(await settledCounts(server, acknowledged.length), [acknowledged.length, acknowledged.length]);
      assert.ok(!server.output().includes(LOST_DELIVERIES_MESSAGE), 'no deliveries were lost');
    } finally {
      await holder.release();
      await nc.close();
      await server.stop();
    }
  });

  test('the stream holds only unprocessed batches; a full stream answers 503 until ingestion catches up', { timeout: TIMEOUT }, async () => {
    const env = { ...(await sharedEnv()), SIGHTLINE_NATS_MAX_MB: '1' };
    const stream = env.SIGHTLINE_NATS_STREAM;
    // Every partition held, as by another node that does not consume: nothing leaves the stream.
    const holder = await holdPartitions(env.SIGHTLINE_POSTGRES_URL, stream, Number(env.SIGHTLINE_NATS_PARTITIONS));
    const server = await startServer({ env, ...keys() });
    const nc = await connect({ servers: settings().natsServers });
    const streamState = async () => (await (await nc.jetstreamManager()).streams.info(stream)).state;
    try {
      const filler = 'x'.repeat(1_000);
      const acknowledged: string[] = [];
      let refused: { response: Response; batch: SentEvent[] } | null = null;
      // 100 events of ~1 KB a batch: the 1 MB stream is full after about ten.
      for (let i = 0; i < 100 && !refused; i++) {
        const batch = batchOf(100).map((e) => ({ ...e, properties: { filler } }));
        const response = await post(server, batch);
        if (response.status === 200) acknowledged.push(...batch.map((e) => e.uuid));
        else refused = { response, batch };
      }
      assert.ok(refused, 'a batch was refused');
      assert.equal(refused.response.status, 503);
      assert.equal(refused.response.headers.get('retry-after'), '1');
      const body = (await refused.response.json()) as { code: string; detail: string };
      assert.equal(body.code, 'service_unavailable');
      assert.match(body.detail, /ingestion log is full/);
      assert.ok(acknowledged.length >= 500, `${acknowledged.length} events acknowledged before the bound`);
      const full = await streamState();
      assert.ok(full.bytes <= 1024 * 1024, `${full.bytes} bytes in the stream`);
      // Each acknowledged batch waits in the stream as one message per partition it touched (1–4);
      // the refused batch may have some of its parts there too.
      const batches = acknowledged.length / 100;
      assert.ok(full.messages >= batches && full.messages <= (batches + 1) * 4, `${full.messages} messages for ${batches} batches`);
      const health = (await (await server.api('/_health', { key: null })).json()) as { log_pending_messages: number | null };
      assert.equal(health.log_pending_messages, full.messages);

      await holder.release();
      // The SDK retries the refused batch until the stream has room again; its parts already in
      // the stream are dropped as duplicates.
      let retried = await post(server, refused.batch);
      for (let tries = 1; retried.status === 503 && tries < 60; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        retried = await post(server, refused.batch);
      }
      assert.equal(retried.status, 200);
      acknowledged.push(...refused.batch.map((e) => e.uuid));
      assert.deepEqual(await settledCounts(server, acknowledged.length), [acknowledged.length, acknowledged.length]);
      assert.equal(await uuidsStored(server, acknowledged), acknowledged.length);
      // Acknowledged by their consumers, the batches left the stream.
      assert.equal((await streamState()).messages, 0);
    } finally {
      await holder.release();
      await nc.close();
      await server.stop();
    }
  });

  test('a stream an earlier version made (limits retention) still serves, and the log says how to get work-queue retention', { timeout: TIMEOUT }, async () => {
    const env = await sharedEnv();
    const stream = env.SIGHTLINE_NATS_STREAM;
    const nc = await connect({ servers: settings().natsServers });
    try {
      await (await nc.jetstreamManager()).streams.add({ name: stream, subjects: [`${stream}.p.*`], retention: RetentionPolicy.Limits });
      const server = await startServer({ env, ...keys() });
      try {
        assert.match(server.output(), /has limits retention: it keeps processed batches and has no byte bound/);
        assert.equal((await post(server, batchOf(10))).status, 200);
        assert.deepEqual(await settledCounts(server, 10), [10, 10]);
      } finally {
        await server.stop();
      }
    } finally {
      await nc.close();
    }
  });

  test("a merge waits for the other distinct id's earlier batches, which another node consumes", { timeout: TIMEOUT }, async () => {
    const env = { ...(await sharedEnv()), SIGHTLINE_NATS_PARTITIONS: '2' };
    // Partition 0 is held, as by a node that has not processed it yet (the holder is one of two
    // live nodes, so the server takes partition 1 alone).
    const idIn = (prefix: string, partition: number) => {
      for (let i = 0; ; i++) if (partitionOf({ projectId: 1, event: { distinctId: `${prefix}-${i}` } } as Parameters<typeof partitionOf>[0], 2) === partition) return `${prefix}-${i}`;
    };
    const anon = idIn('anon', 0);
    const user = idIn('user', 1);
    const holder = await holdPartitions(env.SIGHTLINE_POSTGRES_URL, env.SIGHTLINE_NATS_STREAM, 2, [0]);
    const server = await startServer({ env, ...keys() });
    try {
      assert.equal((await (await server.api('/api/projects/@current/')).json()).id, 1, 'the partitions above assume project 1');
      const send = async (event: string, distinctId: string, properties: Record<string, unknown>) =>
        assert.equal((await post(server, [{ event, distinct_id: distinctId, uuid: randomUUID(), timestamp: new Date().toISOString(), properties }])).status, 200);
      await send('$pageview', anon, { $set: { shared: 'from-anon', anon_prop: 'a' } });
      await send('signed up', user, { $set: { shared: 'from-user' } });
      await send('$identify', user, { $anon_distinct_id: anon });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await holder.release();
      const response = await server.api(`/api/projects/@current/persons/?distinct_id=${user}`);
      const [person] = ((await response.json()) as { results: { distinct_ids: string[]; properties: Record<string, unknown> }[] }).results;
      assert.deepEqual([...person.distinct_ids].sort(), [anon, user]);
      // Applied after the anonymous $set (captured before it), the merge keeps the surviving person's value.
      assert.deepEqual({ shared: person.properties.shared, anon_prop: person.properties.anon_prop }, { shared: 'from-user', anon_prop: 'a' });
      assert.doesNotMatch(server.output(), /a merge waited too long/);
    } finally {
      await holder.release();
      await server.stop();
    }
  });

  test('two nodes on one stream both accept capture, and every event is stored once', { timeout: TIMEOUT }, async () => {
    const env = await sharedEnv();
    const k = keys();
    const a = await startServer({ env, ...k });
    const b = await startServer({ env, ...k });
    try {
      const sent: Promise<Response>[] = [];
      for (let i = 0; i < 30; i++) sent.push(post(i % 2 === 0 ? a : b, batchOf(10)));
      for (const response of await Promise.all(sent)) assert.equal(response.status, 200);
      assert.deepEqual(await settledCounts(a, 300), [300, 300]);
      assert.deepEqual(await counts(b), [300, 300]);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  test('two nodes stopped together in the middle of a hand-over leave nothing unprocessed in the stream', { timeout: TIMEOUT }, async () => {
    const env = await sharedEnv();
    const k = keys();
    const a = await startServer({ env, ...k });
    const nc = await connect({ servers: settings().natsServers });
    const load = new CaptureLoad([a], 1, 50);
    try {
      const owned = async () => ((await (await a.api('/_health', { key: null })).json()) as { log_partitions_owned: number[] }).log_partitions_owned.length;
      const b = await startServer({ env, ...k });
      // Node a holds all 4 partitions until b has been live for the settle time, then hands 2 over:
      // stop both the moment a gives the first one up, before b has taken it.
      await waitFor('node a hands a partition over', async () => (await owned()) < 4, 30_000);
      await load.stop();
      assert.deepEqual(await Promise.all([a.stop(), b.stop()]), [0, 0]);
      assert.ok(load.acknowledged.length > 0);
      const state = (await (await nc.jetstreamManager()).streams.info(env.SIGHTLINE_NATS_STREAM)).state;
      assert.equal(state.messages, 0, 'every acknowledged batch was processed before the nodes stopped');
    } finally {
      await load.stop();
      await nc.close();
      await a.stop();
    }
  });

  test('a node killed (-9) under load loses nothing it acknowledged', { timeout: TIMEOUT }, async () => {
    const env = await sharedEnv();
    const k = keys();
    const a = await startServer({ env, ...k });
    const b = await startServer({ env, ...k });
    // Node a takes every partition first, then hands half to b (rebalance.test.ts checks that).
    const acknowledged: string[] = [];
    let stop = false;
    const load = async (server: TestServer) => {
      while (!stop) {
        const batch = batchOf(20, 13);
        const response = await post(server, batch).catch(() => null);
        if (response?.status === 200) acknowledged.push(...batch.map((e) => e.uuid));
        else if (response && response.status !== 503) assert.fail(`capture answered ${response.status}`);
        else await new Promise((resolve) => setTimeout(resolve, 50)); // a dead node: try again shortly
      }
    };
    try {
      const loads = [load(a), load(b), load(a)];
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      await a.kill();
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      stop = true;
      await Promise.all(loads);
      assert.ok(acknowledged.length > 0);
      const waited = Date.now();
      const [total, distinct] = await settledCounts(b, acknowledged.length, 90_000);
      console.log(`kill -9: ${acknowledged.length} events acknowledged, ${distinct} stored (${total} rows) after ${Date.now() - waited} ms`);
      assert.equal(await uuidsStored(b, acknowledged), acknowledged.length, 'every acknowledged event is stored');
      assert.equal(total, distinct, 'no event is stored twice');
    } finally {
      stop = true;
      await Promise.all([a.kill(), b.stop()]);
    }
  });
});
