/**
 * Fault: a node dies between its metadata commit and its ClickHouse write, and a person deletion
 * on another node finishes before that node's events reach ClickHouse (its wait for the dead
 * node's flush is bounded). They come back two ways, and neither may bring the person's events
 * back: the restarted node replays its flush log (it erases them again: persons/deletion.ts,
 * `resume`), and the next owner of its partitions gets the NATS log's redelivery (it does not
 * write them: ingestion/plan/redelivered.ts). Runs only when a cluster is up.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { randomBytes, randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { waitForDeletion } from '../persons/deletion-helpers.js';
import { clusterAvailability } from '../helpers/cluster.js';
import { clickhouseRows } from '../helpers/clickhouse-databases.js';
import { holdPartitions, sharedNodesEnv, waitFor } from '../helpers/faults.js';
import { newTempDir, startServer, type TestServer } from '../helpers/server.js';
import { partitionOf } from '../../src/ingestion/log/partitions.js';

const availability = clusterAvailability();
const skip = availability.enabled ? false : availability.reason;
const VICTIM = 'late-victim';
const EVENTS = 12;

/** The `events` of each line the node logged on erasing a deletion's events again. */
function erasedAgain(node: TestServer): number[] {
  return node
    .output()
    .split('\n')
    .filter((line) => line.includes('erased again"'))
    .map((line) => Number((JSON.parse(line) as { events: number }).events));
}

/**
 * Two nodes' shared settings (a 2 s bound on a deletion's wait for a dead node), and node A, alone
 * so that it owns every partition, killed by itself after its metadata commit of the victim's
 * batch and before its ClickHouse write.
 */
async function nodeDeadAfterCommit(nodes: TestServer[]) {
  if (!availability.enabled) throw new Error(availability.reason);
  const { clickhouseUrls } = availability.settings;
  const { database, metaUrl, env } = await sharedNodesEnv(availability.settings, 'latedel', 2);
  const ch = (sql: string) => clickhouseRows<Record<string, string>>(clickhouseUrls[0], database, sql);
  const victimRows = async () => Number((await ch(`SELECT count() AS n FROM events FINAL WHERE distinct_id = '${VICTIM}'`))[0].n);
  const keys = { projectKey: `phc_test${randomBytes(12).toString('hex')}`, personalKey: `phx_test${randomBytes(12).toString('hex')}` };
  // A short bounded wait, so that the deletion gives up on the dead node within the test.
  const shared = { ...env, SIGHTLINE_DELETION_NODE_WAIT_SECONDS: '2' };
  const dirA = newTempDir();
  const a = await startServer({ env: { ...shared, SIGHTLINE_TEST_KILL_AFTER_META_COMMIT: '1' }, dataDir: dirA, singleNode: true, ...keys });
  nodes.push(a);
  const batch = Array.from({ length: EVENTS }, (_, i) => ({ event: 'late-fault', distinct_id: VICTIM, uuid: randomUUID(), properties: { i, $set: { email: 'late@example.com' } } }));
  assert.equal((await a.post('/batch/', { api_key: keys.projectKey, batch })).status, 200);
  if (a.process.exitCode === null && a.process.signalCode === null) await once(a.process, 'exit');
  assert.equal(a.process.signalCode, 'SIGKILL', 'A killed itself between its metadata commit and its ClickHouse write');
  return { ch, victimRows, keys, shared, dirA, metaUrl, stream: env.SIGHTLINE_NATS_STREAM };
}

const personsOfVictim = async (node: TestServer) =>
  ((await (await node.api(`/api/projects/@current/persons/?distinct_id=${VICTIM}`)).json()) as { results: Array<{ id: number }> }).results;

/** Deletes the victim (made by A's metadata commit) with its events, through `node`, and waits until the deletion finished. */
async function deleteVictim(node: TestServer): Promise<void> {
  const found = await personsOfVictim(node);
  assert.equal(found.length, 1, "A's metadata commit made the person");
  const deletion = await node.api(`/api/projects/@current/persons/${found[0].id}/?delete_events=true`, { method: 'DELETE' });
  assert.equal(deletion.status, 202);
  await waitForDeletion(node, ((await deletion.json()) as { status_url: string }).status_url, 'finished', 60_000);
}

/** Once `node` has processed the whole stream: none of the victim's events are stored, and the node dropped them. */
async function assertRedeliveryDropped(node: TestServer, victimRows: () => Promise<number>, message: string): Promise<void> {
  await waitFor('the redelivered batch processed', async () => {
    const health = (await (await node.api('/_health', { key: null })).json()) as { log_pending_messages: number | null };
    return health.log_pending_messages === 0;
  }, 90_000);
  assert.equal(await victimRows(), 0, message);
  const metrics = await (await node.api('/metrics', { key: null })).text();
  assert.match(metrics, new RegExp(`^sightline_events_dropped_total\\{reason="person_deleted"\\} ${EVENTS}$`, 'm'), 'the node dropped the redelivered events');
}

test('a deletion that finished while a node was down erases the events that node writes at its restart', { skip, timeout: 240_000 }, async () => {
  if (!availability.enabled) return;
  const nodes: TestServer[] = [];
  try {
    const { ch, victimRows, keys, shared, dirA } = await nodeDeadAfterCommit(nodes);

    // B takes the partitions and writes the redelivered batch; then the person is deleted through B.
    const b = await startServer({ env: shared, singleNode: true, ...keys });
    nodes.push(b);
    let person: { id: number } | undefined;
    await waitFor('the person on B', async () => {
      const body = (await (await b.api(`/api/projects/@current/persons/?distinct_id=${VICTIM}`)).json()) as { results: Array<{ id: number }> };
      person = body.results[0];
      return person !== undefined;
    }, 90_000);
    await waitFor('the events in ClickHouse', async () => (await victimRows()) === EVENTS, 90_000);
    const deletion = await b.api(`/api/projects/@current/persons/${person!.id}/?delete_events=true`, { method: 'DELETE' });
    assert.equal(deletion.status, 202);
    await waitForDeletion(b, ((await deletion.json()) as { status_url: string }).status_url, 'finished', 30_000);
    assert.match(b.output(), /another node's flushes from before it are not in the event store yet/, 'the deletion gave up waiting for A');
    assert.equal(await victimRows(), 0, 'the deletion erased what ClickHouse held');

    // A comes back: its flush log's replay writes the victim's events again, and A erases them.
    const a2 = await startServer({ env: shared, dataDir: dirA, singleNode: true, ...keys });
    nodes.push(a2);
    await waitFor('the erasure on A', async () => erasedAgain(a2).some((n) => n > 0));
    assert.equal(erasedAgain(a2).find((n) => n > 0), EVENTS, 'A erased its replayed rows of the deleted person');
    assert.equal(await victimRows(), 0, "none of the deleted person's events are left");
    const [plain] = await ch(`SELECT count() AS n FROM events WHERE distinct_id = '${VICTIM}'`);
    assert.equal(Number(plain.n), 0, 'nor any unmerged copy');
  } finally {
    await Promise.all(nodes.map((n) => n.kill()));
  }
});

test("a batch redelivered after its person's deletion is not written again", { skip, timeout: 240_000 }, async () => {
  if (!availability.enabled) return;
  const nodes: TestServer[] = [];
  let partitions: { release(): Promise<void> } | null = null;
  try {
    const { victimRows, keys, shared, metaUrl, stream } = await nodeDeadAfterCommit(nodes);

    // B may not consume yet: the person is deleted while A's batch waits for its redelivery.
    partitions = await holdPartitions(metaUrl, stream, 2);
    const b = await startServer({ env: shared, singleNode: true, ...keys });
    nodes.push(b);
    await deleteVictim(b);
    assert.equal(await victimRows(), 0);

    // Now B takes the partitions and gets A's batch again (after ack_wait).
    await partitions.release();
    await assertRedeliveryDropped(b, victimRows, "none of the deleted person's events are written again");
    assert.equal((await personsOfVictim(b)).length, 0, 'nor is the person made again');
  } finally {
    await partitions?.release();
    await Promise.all(nodes.map((n) => n.kill()));
  }
});

test("a batch redelivered after its person's deletion is not written under a person made since for its distinct id", { skip, timeout: 240_000 }, async () => {
  if (!availability.enabled) return;
  const nodes: TestServer[] = [];
  let partitions: { release(): Promise<void> } | null = null;
  try {
    const { victimRows, keys, shared, metaUrl, stream } = await nodeDeadAfterCommit(nodes);
    const partitionOfId = (distinctId: string) => partitionOf({ projectId: 1, event: { distinctId } } as Parameters<typeof partitionOf>[0], 2);
    const victimPartition = partitionOfId(VICTIM);
    // Only the victim's partition waits: B consumes the other one.
    partitions = await holdPartitions(metaUrl, stream, 2, [victimPartition]);
    const b = await startServer({ env: shared, singleNode: true, ...keys });
    nodes.push(b);
    assert.equal(((await (await b.api('/api/projects/@current/')).json()) as { id: number }).id, 1, 'the partitions above assume project 1');
    await deleteVictim(b);

    // A new person for the victim's distinct id, made on the other partition: another id's
    // $identify with the victim's as its anonymous id (its merge waits for the held partition, then goes on).
    let other = 'other-0';
    for (let i = 1; partitionOfId(other) === victimPartition; i++) other = `other-${i}`;
    const identify = { event: '$identify', distinct_id: other, uuid: randomUUID(), properties: { $anon_distinct_id: VICTIM } };
    assert.equal((await b.post('/batch/', { api_key: keys.projectKey, batch: [identify] })).status, 200);
    await waitFor("a new person for the victim's distinct id", async () => (await personsOfVictim(b)).length === 1, 60_000);

    // Now B takes the victim's partition and gets A's batch again.
    await partitions.release();
    await assertRedeliveryDropped(b, victimRows, "the deleted person's events are not written under the new person");
  } finally {
    await partitions?.release();
    await Promise.all(nodes.map((n) => n.kill()));
  }
});
