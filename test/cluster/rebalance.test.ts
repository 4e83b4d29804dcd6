/**
 * The NATS log's partitions shared among live nodes (issue #27): a node alone takes them all; a
 * node joining gets its share (floor..ceil of partitions / nodes) from the others, which hand
 * partitions over cleanly; a node stopping or killed -9 leaves its share to the rest. Under capture
 * load throughout, every acknowledged event is stored once, and each person's last `$set` is the
 * one sent last (a person's events keep their order), across the hand-overs and the kill. Nodes share
 * PostgreSQL, ClickHouse and a 6-partition stream. Runs only when a cluster is up.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import pg from 'pg';
import { shareBounds } from '../../src/ingestion/log/fair-share.js';
import { LOST_DELIVERIES_MESSAGE } from '../../src/ingestion/log/delivery-gaps.js';
import { partitionOf } from '../../src/ingestion/log/partitions.js';
import { clusterAvailability } from '../helpers/cluster.js';
import { assertStoredOnce, CaptureLoad, FAULT_EVENT, sharedNodesEnv, sleep, waitFor, type SentEvent } from '../helpers/faults.js';
import { startServer, type TestServer } from '../helpers/server.js';

const availability = clusterAvailability();
const skip = availability.enabled ? false : availability.reason;
const PARTITIONS = 6;
const CLIENTS = 3;
const PEOPLE_PER_CLIENT = 5;
/** A join waits for the 3 s settle time, a batch in hand and a pass or two (1 s each); the machine is loaded. */
const JOIN_BOUND_MS = 30_000;
/** A dead node's locks go with its connection: the next pass (1 s) takes them. */
const LEAVE_BOUND_MS = 15_000;
/** Each client sends its own persons only, one batch at a time, so the order it sent them in is the order they must be applied in. */
class OrderedBatches {
  private sequence = 0;
  private readonly sent = new Map<string, { distinctId: string; seq: number }>();

  make(client: number): SentEvent[] {
    return Array.from({ length: 20 }, (_, i) => {
      const distinctId = `c${client}-p${i % PEOPLE_PER_CLIENT}`;
      const seq = ++this.sequence;
      const uuid = randomUUID();
      this.sent.set(uuid, { distinctId, seq });
      return { event: FAULT_EVENT, distinct_id: distinctId, uuid, timestamp: new Date().toISOString(), properties: { $set: { seq } } };
    });
  }

  /** Each person's highest acknowledged `seq`: its client's last batch (a batch is sent only once the one before is acknowledged). */
  lastAcknowledged(acknowledged: string[]): Map<string, number> {
    const last = new Map<string, number>();
    for (const uuid of acknowledged) {
      const { distinctId, seq } = this.sent.get(uuid)!;
      last.set(distinctId, Math.max(seq, last.get(distinctId) ?? 0));
    }
    return last;
  }
}

/** Partitions that lost deliveries, from the nodes' logs. */
function lossyPartitions(nodes: TestServer[]): Set<number> {
  const lossy = new Set<number>();
  for (const node of nodes) {
    for (const line of node.output().split('\n')) if (line.includes(LOST_DELIVERIES_MESSAGE)) lossy.add((JSON.parse(line) as { partition: number }).partition);
  }
  return lossy;
}

/** Each person's properties hold the last `seq` its client sent (every batch was acknowledged before the next). */
async function assertLastSetIsLastSent(metaUrl: string, batches: OrderedBatches, acknowledged: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: metaUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ distinct_id: string; seq: string }>(
      `SELECT d.distinct_id, p.properties->>'seq' AS seq FROM person_distinct_ids d JOIN persons p ON p.project_id = d.project_id AND p.uuid = d.person_uuid`,
    );
    const stored = new Map(rows.map((r) => [r.distinct_id, Number(r.seq)]));
    assert.equal(stored.size, CLIENTS * PEOPLE_PER_CLIENT);
    const misordered: string[] = [];
    for (const [distinctId, seq] of batches.lastAcknowledged(acknowledged)) {
      const partition = partitionOf({ projectId: 1, event: { distinctId } } as Parameters<typeof partitionOf>[0], PARTITIONS);
      if (stored.get(distinctId) !== seq) misordered.push(`${distinctId} (partition ${partition}): ${stored.get(distinctId)} stored, ${seq} sent last`);
    }
    assert.deepEqual(misordered, [], "each person's last $set is the last one sent");
  } finally {
    await client.end();
  }
}

async function owned(node: TestServer): Promise<number[]> {
  const response = await fetch(`${node.url}/_health`, { signal: AbortSignal.timeout(5_000) });
  return ((await response.json()) as { log_partitions_owned: number[] }).log_partitions_owned;
}

/** Every partition held by exactly one of `nodes`, each holding its fair share; the holdings, or null. */
async function spread(nodes: TestServer[]): Promise<number[][] | null> {
  const holdings = await Promise.all(nodes.map(owned));
  const all = holdings.flat().sort((a, b) => a - b);
  const { low, high } = shareBounds(PARTITIONS, nodes.length);
  const fair = holdings.every((h) => h.length >= low && h.length <= high);
  return fair && all.join() === Array.from({ length: PARTITIONS }, (_, p) => p).join() ? holdings : null;
}

async function waitForSpread(what: string, nodes: TestServer[], boundMs: number, timeline: string[]): Promise<void> {
  let holdings: number[][] | null = null;
  const ms = await waitFor(what, async () => (holdings = await spread(nodes)) !== null, boundMs);
  timeline.push(`${what}: ${JSON.stringify(holdings)} after ${ms} ms`);
}

describe('NATS log: partitions shared among live nodes', { skip, concurrency: false }, () => {
  test('joining and leaving nodes share the partitions; nothing acknowledged is lost, stored twice or reordered', { timeout: 300_000 }, async () => {
    if (!availability.enabled) return;
    const shared = await sharedNodesEnv(availability.settings, 'rebalance', PARTITIONS);
    const { metaUrl, env } = shared;
    const keys = { projectKey: `phc_test${randomBytes(12).toString('hex')}`, personalKey: `phx_test${randomBytes(12).toString('hex')}` };
    const start = () => startServer({ env, singleNode: true, ...keys });
    const timeline: string[] = [];
    const everyNode: TestServer[] = [];
    const live: TestServer[] = [];
    let load: CaptureLoad | null = null;
    try {
      const a = await start();
      everyNode.push(a);
      live.push(a);
      await waitForSpread('A alone holds every partition', [a], LEAVE_BOUND_MS, timeline);

      // Clean hand-overs under load: B joins, C joins, C stops.
      const batches = new OrderedBatches();
      load = new CaptureLoad(() => live, CLIENTS, 20, { makeBatch: (client) => batches.make(client) });
      await sleep(1_000);
      const b = await start();
      everyNode.push(b);
      live.push(b);
      await waitForSpread('B joined: A and B share', [a, b], JOIN_BOUND_MS, timeline);
      const c = await start();
      everyNode.push(c);
      live.push(c);
      await waitForSpread('C joined: A, B and C share', [a, b, c], JOIN_BOUND_MS, timeline);
      await sleep(1_000);
      live.splice(live.indexOf(c), 1);
      assert.equal(await c.stop(), 0);
      await waitForSpread('C stopped: A and B share its partitions', [a, b], LEAVE_BOUND_MS, timeline);
      await load.stop();
      const acknowledged = [...load.acknowledged];
      timeline.push(`clean phase: ${acknowledged.length} events acknowledged, answers ${JSON.stringify(load.statuses())}`);
      await assertStoredOnce(a, acknowledged);

      // Order: each person's last `$set` is the last one its client sent, across the hand-overs.
      await assertLastSetIsLastSent(metaUrl, batches, acknowledged);
      // No delivery is lost on the way (pull-subscription.ts), so no partition waits out ack_wait.
      const lossy = [...lossyPartitions(everyNode)];
      timeline.push(`clean phase: partitions with lost deliveries: [${lossy.join(', ')}]`);
      assert.deepEqual(lossy, [], 'no partition lost deliveries in the clean phase');

      // A node killed -9 under load: its partitions go to the node left.
      load = new CaptureLoad(() => live, CLIENTS, 20, { makeBatch: (client) => batches.make(client) });
      await sleep(2_000);
      live.splice(live.indexOf(b), 1);
      await b.kill();
      await waitForSpread('B killed -9: A takes its partitions', [a], LEAVE_BOUND_MS, timeline);
      await sleep(1_000);
      await load.stop();
      const waited = await assertStoredOnce(a, load.acknowledged);
      // The dead node's unacknowledged batches come back after ack_wait; A waits for them before later ones.
      await assertLastSetIsLastSent(metaUrl, batches, [...acknowledged, ...load.acknowledged]);
      timeline.push(`kill phase: ${load.acknowledged.length} events acknowledged, all stored once ${waited} ms after the load stopped`);
    } finally {
      const handOvers = everyNode.map((n) => n.output().split('handed a NATS log partition over').length - 1);
      console.log(`rebalance:\n  ${timeline.join('\n  ')}\n  hand-overs by node: ${handOvers.join(' / ')}`);
      await load?.stop();
      await Promise.all(everyNode.map((n) => n.kill()));
    }
  });
});
