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
    const found = (await (await b.api(`/api/projects/@current/persons/?distinct_id=${VICTIM}`)).json()) as { results: Array<{ id: number }> };
    assert.equal(found.results.length, 1, "A's metadata commit made the person");
    const deletion = await b.api(`/api/projects/@current/persons/${found.results[0].id}/?delete_events=true`, { method: 'DELETE' });
    assert.equal(deletion.status, 202);
    await waitForDeletion(b, ((await deletion.json()) as { status_url: string }).status_url, 'finished', 60_000);
    assert.equal(await victimRows(), 0);

    // Now B takes the partitions and gets A's batch again (after ack_wait).
    await partitions.release();
    await waitFor('the redelivered batch processed on B', async () => {
      const health = (await (await b.api('/_health', { key: null })).json()) as { log_pending_messages: number | null };
      return health.log_pending_messages === 0;
    }, 90_000);
    assert.equal(await victimRows(), 0, "none of the deleted person's events are written again");
    const metrics = await (await b.api('/metrics', { key: null })).text();
    assert.match(metrics, new RegExp(`^sightline_events_dropped_total\\{reason="person_deleted"\\} ${EVENTS}$`, 'm'), 'B dropped the redelivered events');
    const again = (await (await b.api(`/api/projects/@current/persons/?distinct_id=${VICTIM}`)).json()) as { results: unknown[] };
    assert.equal(again.results.length, 0, 'nor is the person made again');
  } finally {
    await partitions?.release();
    await Promise.all(nodes.map((n) => n.kill()));
  }
});
