/**
 * Two nodes on one PostgreSQL and one ClickHouse: what one node acknowledged, the other reads at
 * once (no polling), and a merge ingested on one node of a person whose events the other node
 * ingested shows on both. Runs in the two-node pass of scripts/test-cluster.sh (events in
 * ClickHouse); skipped elsewhere.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectOk, ingest } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

const skip = process.env.SIGHTLINE_TEST_EVENT_STORE === 'clickhouse' && process.env.SIGHTLINE_CLUSTER_TESTS === '1' ? false : 'needs events in ClickHouse (the two-node pass of test:cluster)';

describe('two nodes on shared stores', { skip }, () => {
  let a: TestServer;
  let b: TestServer;

  before(async () => {
    a = await startServer({ singleNode: true });
    const { SIGHTLINE_DATA_DIR: _own, ...shared } = a.storeEnv;
    b = await startServer({ singleNode: true, env: shared, projectKey: a.projectKey, personalKey: a.personalKey });
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const events = async (node: TestServer, query: string) => expectOk(await node.api(`/api/projects/@current/events/${query}`));

  test('events acknowledged by one node are listed and counted by the other at once', async () => {
    await ingest(a, Array.from({ length: 25 }, (_, i) => ({ event: 'from-a', distinct_id: `a-${i % 5}`, properties: { i } })));
    const listed = await events(b, '?event=from-a&limit=10');
    assert.equal(listed.count, 25);
    assert.equal(listed.results.length, 10);
    await ingest(b, Array.from({ length: 5 }, () => ({ event: 'from-a', distinct_id: 'b-1' })));
    assert.equal((await events(a, '?event=from-a')).count, 30);
    assert.equal((await events(b, '?event=from-a')).count, 30);
  });

  test('a merge on one node owns the anonymous events the other node ingested', async () => {
    await ingest(b, [
      { event: '$pageview', distinct_id: 'anon-two-nodes', properties: { n: 1 } },
      { event: '$pageview', distinct_id: 'anon-two-nodes', properties: { n: 2 } },
    ]);
    await ingest(a, [{ event: '$identify', distinct_id: 'ada', properties: { $anon_distinct_id: 'anon-two-nodes', $set: { email: 'ada@example.com' } } }]);
    for (const node of [a, b]) {
      const ids = await events(node, `?select=${encodeURIComponent(JSON.stringify(['person_id']))}&distinct_id=ada`);
      const personId = ids.results[0][0];
      const owned = await events(node, `?person_id=${personId}`);
      assert.deepEqual(owned.results.map((e: any) => e.event).sort(), ['$identify', '$pageview', '$pageview']);
      const byEmail = await events(node, `?properties=${encodeURIComponent(JSON.stringify([{ key: 'email', value: 'ada@example.com', type: 'person' }]))}`);
      assert.equal(byEmail.count, 3);
    }
  });
});
