/**
 * /decide and /flags answered on flag threads (SIGHTLINE_FLAG_THREADS) must be exactly what the
 * main thread answers, and a change made through the management API must show on every thread
 * at once (requests go round-robin, so a few in a row reach each thread).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { createFlag, everyone, identify, patchFlag } from './helpers/flags.js';
import { send } from './helpers/ingest.js';
import { startServer, type TestServer } from './helpers/server.js';

const THREADS = 2;

/** Status and body of an evaluation answer, without the members that differ on every request. */
async function answer(server: TestServer, path: string, body: Record<string, unknown>): Promise<{ status: number; body: unknown }> {
  const reply = await send(server, path, { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  const { requestId: _id, evaluatedAt: _at, ...rest } = reply.json ?? {};
  return { status: reply.status, body: rest };
}

const requests = (server: TestServer) =>
  [
    ['/flags?v=2', { token: server.projectKey, distinct_id: 'pro-user' }],
    ['/flags', { token: server.projectKey, distinct_id: 'someone', person_properties: { plan: 'pro' } }],
    ['/decide?v=3', { api_key: server.projectKey, distinct_id: 'pro-user' }],
    ['/decide?v=4', { api_key: server.projectKey, distinct_id: 'anon-1' }],
    ['/flags?v=2', { token: 'phc_unknown', distinct_id: 'x' }],
    ['/decide?v=3', { api_key: server.projectKey }],
  ] as const;

async function answers(server: TestServer) {
  const all = [];
  for (const [path, body] of requests(server)) all.push(await answer(server, path, body));
  return all;
}

test('flag threads answer as the main thread does, and see API changes at once', async () => {
  const threaded = await startServer({ env: { SIGHTLINE_FLAG_THREADS: String(THREADS) } });
  let final: Awaited<ReturnType<typeof answers>>;
  try {
    const proOnly = everyone('pro-only', [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }]);
    const flagId = (await createFlag(threaded, proOnly)).id;
    await createFlag(threaded, { key: 'half', filters: { groups: [{ properties: [], rollout_percentage: 50 }] } });
    await identify(threaded, 'pro-user', { plan: 'pro' });

    const first = await answers(threaded);
    assert.deepEqual(first.map((a) => a.status), [200, 200, 200, 200, 401, 400]);
    assert.equal((first[0].body as any).flags['pro-only'].enabled, true);
    // Each request again, landing on the other thread: the same answers.
    assert.deepEqual(await answers(threaded), first);

    await patchFlag(threaded, flagId, { filters: { groups: [{ properties: [], rollout_percentage: 0 }] } });
    for (let i = 0; i < THREADS * 2; i++) {
      const after = await answer(threaded, '/flags?v=2', { token: threaded.projectKey, distinct_id: 'pro-user' });
      assert.equal((after.body as any).flags['pro-only'].enabled, false, `request ${i} after the change`);
    }
    await patchFlag(threaded, flagId, { filters: proOnly.filters });
    final = await answers(threaded);
    assert.equal((final[0].body as any).flags['pro-only'].enabled, true);
    assert.deepEqual(await answers(threaded), final);
  } finally {
    assert.equal(await threaded.stop(), 0);
  }

  // The same data dir answered by the main thread alone: the same answers, byte for byte but the ids.
  const onMain = await startServer({ dataDir: threaded.dataDir, projectKey: threaded.projectKey, personalKey: threaded.personalKey, env: { SIGHTLINE_FLAG_THREADS: '0' } });
  try {
    assert.deepEqual(await answers(onMain), final);
  } finally {
    assert.equal(await onMain.stop(), 0);
  }
});
