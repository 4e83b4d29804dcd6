/**
 * Fault: a Sightline node killed with SIGKILL under load (issue #27, item 6). Two nodes share
 * PostgreSQL, ClickHouse (events) and a NATS stream; SDK-like clients send batches to both,
 * retrying the same uuids on failure and re-sending halves of acknowledged batches. Three kills:
 * node A kills itself right after a metadata commit, before its event-store write
 * (SIGHTLINE_TEST_KILL_AFTER_META_COMMIT), and is restarted; node B, which takes its partitions,
 * does the same (the two share the partitions meanwhile, so either may die first); then A
 * (restarted, owning the partitions again) is killed -9 from outside at an arbitrary moment. Afterwards every acknowledged uuid is in ClickHouse exactly once (FINAL and
 * uniqExact), and persons agree between PostgreSQL, the events and ClickHouse's person mirror.
 * Runs only when a cluster is up.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { describe, test } from 'node:test';
import pg from 'pg';
import { REWRITE_MESSAGE } from '../../src/ingestion/buffer.js';
import { clusterAvailability } from '../helpers/cluster.js';
import { clickhouseRows } from '../helpers/clickhouse-databases.js';
import { CaptureLoad, FAULT_EVENT, settledCounts, sharedNodesEnv, sleep, type SentEvent } from '../helpers/faults.js';
import { newTempDir, startServer, type TestServer } from '../helpers/server.js';

const availability = clusterAvailability();
const skip = availability.enabled ? false : availability.reason;
/** Metadata commits after which a node started with the hook kills itself (a few seconds of load). */
const COMMITS_BEFORE_KILL = 8;
const KNOWN_PEOPLE = 200;
let batches = 0;

/** Events of known persons and of two new ones (persons are created throughout the run); each sets its e-mail. */
function personBatch(): SentEvent[] {
  const batch = batches++;
  return Array.from({ length: 20 }, (_, i) => {
    const distinctId = i < 2 ? `new-${batch}-${i}` : `u-${randomInt(KNOWN_PEOPLE)}`;
    return { event: FAULT_EVENT, distinct_id: distinctId, uuid: randomUUID(), timestamp: new Date().toISOString(), properties: { $set: { email: `${distinctId}@example.com` } } };
  });
}


/** Waits for a node to die (its own hook), at most `timeoutMs`. */
async function died(server: TestServer, timeoutMs: number): Promise<void> {
  const child = server.process;
  if (child.exitCode !== null || child.signalCode !== null) return;
  await Promise.race([once(child, 'exit'), sleep(timeoutMs).then(() => assert.fail(`the node did not kill itself within ${timeoutMs} ms`))]);
}

describe('fault: a Sightline node killed -9 under load', { skip, concurrency: false }, () => {
  test('nothing acknowledged is lost, nothing is stored twice, persons stay consistent', { timeout: 300_000 }, async () => {
    if (!availability.enabled) return;
    const { clickhouseUrls } = availability.settings;
    const shared = await sharedNodesEnv(availability.settings, 'faultnode', 4);
    const { database } = shared;
    const { metaUrl, env } = shared;
    const keys = { projectKey: `phc_test${randomBytes(12).toString('hex')}`, personalKey: `phx_test${randomBytes(12).toString('hex')}` };
    const began = Date.now();
    const timeline: string[] = [];
    const mark = (what: string) => timeline.push(`${((Date.now() - began) / 1000).toFixed(1)} s ${what}`);
    const hooked = { ...env, SIGHTLINE_TEST_KILL_AFTER_META_COMMIT: String(COMMITS_BEFORE_KILL) };
    // A node that exits before it serves (a store's answer lost under the machine's load) is
    // started again, as a supervisor would.
    const start = async (name: string, dataDir: string, withHook: boolean) => {
      for (let attempt = 1; ; attempt++) {
        try {
          const node = await startServer({ env: withHook ? hooked : env, dataDir, singleNode: true, ...keys });
          node.process.once('exit', (code, signal) => mark(`${name} exited (${signal ?? code})`));
          return node;
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          if (attempt === 3 || !message.includes('before accepting traffic')) throw error;
          mark(`${name} did not start (${message.split('\n')[1]}); starting it again`);
        }
      }
    };
    const dirA = newTempDir();
    const dirB = newTempDir();
    const live: TestServer[] = [];
    const everyNode: TestServer[] = [];
    const drop = (gone: TestServer) => live.splice(live.indexOf(gone), 1);
    let load: CaptureLoad | null = null;
    try {
      // A first, so that it takes every partition; B gets half of them ~3 s after it starts.
      const a = await start('A', dirA, true);
      everyNode.push(a);
      live.push(a);
      await sleep(500);
      const b = await start('B', dirB, true);
      everyNode.push(b);
      live.push(b);
      mark('both nodes up');
      const capture = new CaptureLoad(() => live, 2, 20, { makeBatch: personBatch, resendShare: 0.1 });
      load = capture;

      // Kill 1: A, between its metadata commit and its event-store write. B takes its partitions;
      // A restarts meanwhile (and replays its flush log into ClickHouse).
      await died(a, 60_000);
      drop(a);
      const restartingA = start('A (restarted)', dirA, false);
      restartingA.catch(() => undefined); // awaited below; a failure must not surface as unhandled meanwhile

      // Kill 2: B, the same way, once it has taken A's partitions and committed as often.
      await died(b, 90_000);
      drop(b);
      const a2 = await restartingA;
      live.push(a2);
      everyNode.push(a2);
      mark('A restarted; it takes the partitions');
      const restartingB = start('B (restarted)', dirB, false);
      restartingB.catch(() => undefined);

      // Kill 3: A again, from outside, at an arbitrary moment while it owns the partitions (B is still starting).
      await sleep(2_000 + randomInt(3_000));
      drop(a2);
      mark('killing A -9 from outside');
      await a2.kill();
      const b2 = await restartingB;
      live.push(b2);
      everyNode.push(b2);
      mark('B restarted; it takes the partitions');
      await sleep(2_000);
      await capture.stop();
      const acknowledged = new Set(capture.acknowledged);
      mark(`load stopped: ${acknowledged.size} events acknowledged, ${capture.resent.acknowledged} of ${capture.resent.sent} re-sent halves acknowledged`);

      const [total, distinct] = await settledCounts(b2, acknowledged.size, 120_000);
      mark(`the API counts ${total} events, ${distinct} distinct`);
      assert.equal(total, distinct, 'no event is counted twice');
      assert.match(everyNode.map((n) => n.output()).join('\n'), new RegExp(REWRITE_MESSAGE), 'a redelivered batch was written again by the next owner');

      // In ClickHouse itself: every acknowledged uuid, one row each with FINAL, none that was never sent.
      const ch = (sql: string) => clickhouseRows<Record<string, string>>(clickhouseUrls[0], database, sql);
      const [final] = await ch(`SELECT count() AS rows, uniqExact(uuid) AS uuids FROM events FINAL WHERE event = '${FAULT_EVENT}'`);
      const [plain] = await ch(`SELECT count() AS rows, uniqExact(uuid) AS uuids FROM events WHERE event = '${FAULT_EVENT}'`);
      mark(`ClickHouse: FINAL ${final.rows} rows / ${final.uuids} uuids; without FINAL ${plain.rows} rows / ${plain.uuids} uuids`);
      assert.equal(final.rows, final.uuids, 'one row per uuid (FINAL)');
      assert.equal(plain.uuids, final.uuids);
      const stored = new Set((await ch(`SELECT uuid FROM events WHERE event = '${FAULT_EVENT}' GROUP BY uuid`)).map((r) => r.uuid));
      const missing = [...acknowledged].filter((uuid) => !stored.has(uuid));
      assert.deepEqual(missing.slice(0, 5), [], `every acknowledged event is stored (${missing.length} missing)`);
      const unknown = [...stored].filter((uuid) => !capture.sent.has(uuid));
      assert.deepEqual(unknown, [], 'nothing is stored that was never sent');

      // Persons: each distinct id has one person in PostgreSQL, with its e-mail; the events and the mirror agree.
      const client = new pg.Client({ connectionString: metaUrl });
      await client.connect();
      let personOf: Map<string, { uuid: string; email: unknown }>;
      try {
        const { rows } = await client.query<{ distinct_id: string; uuid: string; properties: { email?: unknown } }>(
          `SELECT d.distinct_id, p.uuid, p.properties FROM person_distinct_ids d JOIN persons p ON p.project_id = d.project_id AND p.uuid = d.person_uuid`,
        );
        personOf = new Map(rows.map((r) => [r.distinct_id, { uuid: r.uuid.toLowerCase(), email: r.properties.email }]));
        const { rows: counts } = await client.query<{ n: string }>('SELECT count(*) AS n FROM persons');
        assert.equal(Number(counts[0].n), personOf.size, 'one person per distinct id (no merges in this load)');
      } finally {
        await client.end();
      }
      const eventPersons = await ch(`SELECT distinct_id, groupUniqArray(stored_person_id) AS persons FROM events FINAL WHERE event = '${FAULT_EVENT}' GROUP BY distinct_id`);
      assert.equal(personOf.size, eventPersons.length, 'every distinct id with events has a person, and no other');
      for (const row of eventPersons) {
        const person = personOf.get(row.distinct_id);
        assert.ok(person, `${row.distinct_id} has a person in PostgreSQL`);
        assert.equal(person.email, `${row.distinct_id}@example.com`);
        assert.deepEqual(row.persons, [person.uuid], `${row.distinct_id}'s events are stored under its person`);
      }
      const mirrorIds = await ch(`SELECT distinct_id, person_id FROM person_distinct_ids FINAL WHERE is_deleted = 0`);
      assert.equal(mirrorIds.length, personOf.size, 'the mirror has every distinct id');
      for (const row of mirrorIds) assert.equal(row.person_id, personOf.get(row.distinct_id)?.uuid, `the mirror maps ${row.distinct_id} as PostgreSQL does`);
      const mirrorPersons = await ch(`SELECT id, properties FROM persons FINAL WHERE is_deleted = 0`);
      const emails = new Map([...personOf.entries()].map(([d, p]) => [p.uuid, `${d}@example.com`]));
      assert.equal(mirrorPersons.length, personOf.size, 'the mirror has every person');
      for (const row of mirrorPersons) assert.equal((JSON.parse(row.properties) as { email?: string }).email, emails.get(row.id.toLowerCase()));
      mark(`persons consistent: ${personOf.size} in PostgreSQL, the events and the mirror`);
    } finally {
      console.log(`node kill -9:\n  ${timeline.join('\n  ')}`);
      await load?.stop(); // stopped already, unless the test failed midway
      await Promise.all(everyNode.map((n) => n.kill()));
    }
  });
});
