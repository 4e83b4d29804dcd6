/**
 * /decide and /flags answered on flag threads (SIGHTLINE_FLAG_THREADS) must be exactly what the
 * main thread answers, and a change made through the management API must show on every thread
 * at once (requests go round-robin, so a few in a row reach each thread).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { createFlag, everyone, groupIdentify, identify, patchFlag } from '../helpers/flags.js';
import { capture, send } from '../helpers/ingest.js';
import { startServer, type TestServer } from '../helpers/server.js';

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

/**
 * Flag answers keep the persons they read between requests (store/cached-person-reads.ts): every
 * kind of person change committed by ingestion must still show in the very next answer, on
 * every flag thread and on the main thread alike.
 */
/**
 * Whether `flag` is enabled for the request `body`, asked enough times in a row to reach every
 * thread and to be answered from what was kept; every answer must agree.
 */
async function enabledEverywhere(server: TestServer, threads: number, flag: string, body: Record<string, unknown>): Promise<boolean> {
  const results: boolean[] = [];
  for (let i = 0; i < Math.max(threads, 1) * 2; i++) {
    const reply = await answer(server, '/flags?v=2', { token: server.projectKey, ...body });
    assert.equal(reply.status, 200);
    results.push((reply.body as any).flags[flag].enabled);
  }
  assert.ok(results.every((r) => r === results[0]), `threads disagree: ${results}`);
  return results[0] as boolean;
}

for (const threads of [THREADS, 0]) {
  test(`persons kept between flag requests never hide a committed change (${threads} flag threads)`, async () => {
    const server = await startServer({ env: { SIGHTLINE_FLAG_THREADS: String(threads) } });
    try {
      await createFlag(server, everyone('pro-only', [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }]));
      const proOnly = (distinctId: string) => enabledEverywhere(server, threads, 'pro-only', { distinct_id: distinctId });

      // Unknown, then created with a property; properties changed back and forth.
      assert.equal(await proOnly('alice'), false);
      await identify(server, 'alice', { plan: 'pro' });
      assert.equal(await proOnly('alice'), true, 'a new person');
      for (const plan of ['free', 'pro', 'free']) {
        await identify(server, 'alice', { plan });
        assert.equal(await proOnly('alice'), plan === 'pro', `plan changed to ${plan}`);
      }

      // An anonymous id, asked for while personless, then merged into a pro person by $identify.
      assert.equal(await proOnly('anon-7'), false);
      await identify(server, 'bob', { plan: 'pro' });
      await identify(server, 'bob', {}, { $anon_distinct_id: 'anon-7' });
      assert.equal(await proOnly('anon-7'), true, 'the anonymous id now points at bob');

      // An anonymous person of its own, merged into an identified one: its id moves with it.
      await capture(server, '/batch/', { api_key: server.projectKey, batch: [{ event: '$pageview', distinct_id: 'anon-9', properties: { $set: { plan: 'free' } } }] });
      assert.equal(await proOnly('anon-9'), false);
      await identify(server, 'dave', { plan: 'pro' });
      await identify(server, 'dave', {}, { $anon_distinct_id: 'anon-9' });
      assert.equal(await proOnly('anon-9'), true, 'the anonymous person was merged into dave');

      // A merged person's other ids move without being named (anon-b is an alias of anon-a).
      await capture(server, '/batch/', { api_key: server.projectKey, batch: [{ event: '$pageview', distinct_id: 'anon-a', properties: { $set: { plan: 'free' } } }] });
      await capture(server, '/batch/', { api_key: server.projectKey, batch: [{ event: '$create_alias', distinct_id: 'anon-a', properties: { alias: 'anon-b' } }] });
      assert.equal(await proOnly('anon-b'), false);
      await identify(server, 'erin', { plan: 'pro' });
      // (The alias made anon-a's person identified, which only $merge_dangerously merges away.)
      await capture(server, '/batch/', { api_key: server.projectKey, batch: [{ event: '$merge_dangerously', distinct_id: 'erin', properties: { alias: 'anon-a' } }] });
      assert.equal(await proOnly('anon-b'), true, 'anon-b moved to erin with anon-a');

      // An alias for an existing person.
      await identify(server, 'carol', { plan: 'free' });
      assert.equal(await proOnly('carol'), false);
      await capture(server, '/batch/', { api_key: server.projectKey, batch: [{ event: '$create_alias', distinct_id: 'carol-login', properties: { alias: 'carol', $set: { plan: 'pro' } } }] });
      assert.equal(await proOnly('carol'), true, 'alias: carol now shares the pro person');
      assert.equal(await proOnly('carol-login'), true);
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });
}

/** The same for groups and group types, which flag evaluation keeps too. */
for (const threads of [THREADS, 0]) {
  test(`groups kept between flag requests never hide a committed change (${threads} flag threads)`, async () => {
    const server = await startServer({ env: { SIGHTLINE_FLAG_THREADS: String(threads) } });
    try {
      const enterprise = { key: 'plan', value: ['enterprise'], operator: 'exact', type: 'group', group_type_index: 0 };
      await createFlag(server, everyone('enterprise-only', [enterprise], { aggregation_group_type_index: 0 }));
      const enterpriseOnly = (key: string) => enabledEverywhere(server, threads, 'enterprise-only', { distinct_id: 'u1', groups: { company: key } });

      // Asked before any group type exists (an empty type list is kept), then the type and the
      // group are created by one $groupidentify.
      assert.equal(await enterpriseOnly('acme'), false);
      await groupIdentify(server, 'company', 'acme', { plan: 'enterprise' });
      assert.equal(await enterpriseOnly('acme'), true, 'a new group type and group');

      for (const plan of ['free', 'enterprise', 'free']) {
        await groupIdentify(server, 'company', 'acme', { plan });
        assert.equal(await enterpriseOnly('acme'), plan === 'enterprise', `plan changed to ${plan}`);
      }

      // A group asked for before it existed.
      assert.equal(await enterpriseOnly('globex'), false);
      await groupIdentify(server, 'company', 'globex', { plan: 'enterprise' });
      assert.equal(await enterpriseOnly('globex'), true, 'a new group of a known type');
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });
}

/**
 * Answers come back from the flag threads through a ring of shared memory and are sent from
 * reused memory (flag-threads.ts): under many requests in flight at once, each must get its own
 * answer, intact, including answers too large for the ring (which come by message instead).
 */
test('answers of many requests in flight at once each reach their own request, intact', async () => {
  const server = await startServer({ env: { SIGHTLINE_FLAG_THREADS: String(THREADS) } });
  try {
    const DIGITS = 10;
    // Bigger than the 2 MiB ring: the answers that carry it cannot go through it.
    const bigPayload = 'x'.repeat(2.5 * 1024 * 1024);
    const payloadOf = (digit: number) => (digit === 7 ? bigPayload : `payload of ${digit} `.repeat(digit * 40));
    for (let digit = 0; digit < DIGITS; digit++) {
      await createFlag(server, everyone(`digit-${digit}`, [{ key: 'last', value: [String(digit)], operator: 'exact', type: 'person' }], { payloads: { true: JSON.stringify(payloadOf(digit)) } }));
    }
    const REQUESTS = 1500;
    const CONNECTIONS = 40;
    let next = 0;
    const wrong: string[] = [];
    const client = async () => {
      while (next < REQUESTS) {
        const i = next++;
        const digit = i % DIGITS;
        const reply = await send(server, '/flags?v=2', {
          body: JSON.stringify({ token: server.projectKey, distinct_id: `user-${i}`, person_properties: { last: String(digit) } }),
          headers: { 'content-type': 'application/json' },
        });
        const flags = reply.json?.flags ?? {};
        const enabled = Object.keys(flags).filter((key) => flags[key].enabled);
        const payload = reply.json ? JSON.parse(flags[`digit-${digit}`].metadata.payload) : null;
        if (reply.status !== 200 || enabled.join() !== `digit-${digit}` || payload !== payloadOf(digit)) {
          wrong.push(`request ${i}: ${reply.status} enabled ${enabled.join()} ${reply.text.slice(0, 200)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, client));
    assert.deepEqual(wrong.slice(0, 5), [], `${wrong.length} of ${REQUESTS} answers wrong`);
  } finally {
    assert.equal(await server.stop(), 0);
  }
});
