/**
 * The real posthog-node SDK against the server, once through remote evaluation (/flags) and
 * once through local evaluation (/flags/definitions): both must agree with each other and with
 * the configured flags on 1,000 distinct ids. Then the flag events the SDK sends are stored.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PostHog } from 'posthog-node';
import { stopAndRead } from '../helpers/ingest.js';
import { createFlags, expectedFlags, flagHash, type ExpectedFlags } from '../helpers/sdk.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let remote: PostHog;
let local: PostHog;
const USERS = Array.from({ length: 1000 }, (_, i) => ({ id: `sdk-user-${i}`, plan: i % 3 === 0 ? 'pro' : 'free' }));
const remoteValues = new Map<string, ExpectedFlags['values']>();

before(async () => {
  server = await startServer({ env: { SIGHTLINE_GEOIP: 'false' } });
  const failure = await createFlags(server);
  assert.equal(failure, null, failure ?? '');
  remote = new PostHog(server.projectKey, { host: server.url, flushAt: 1, flushInterval: 100 });
  local = new PostHog(server.projectKey, { host: server.url, personalApiKey: server.personalKey, featureFlagsPollingInterval: 60_000 });
});
after(async () => {
  await Promise.allSettled([remote?.shutdown(2000), local?.shutdown(2000)]);
  await server?.stop();
});

/** Runs `work` over `items` with a few requests in flight at a time. */
async function inParallel<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await work(items[next++]);
  }));
}

test('remote evaluation (/flags) matches the configured flags on 1,000 ids', async () => {
  await inParallel(USERS, 20, async ({ id, plan }) => {
    const values = await remote.getAllFlags(id, { personProperties: { plan } });
    assert.deepEqual(values, expectedFlags(id, plan).values, `remote flags of ${id}`);
    remoteValues.set(id, values);
  });
  const half = USERS.filter(({ id }) => remoteValues.get(id)!['sdk-half'] === true).length;
  assert.ok(half > 430 && half < 570, `50 % rollout gave ${half} of 1000`);
  const test = USERS.filter(({ id }) => remoteValues.get(id)!['sdk-multi'] === 'test').length;
  assert.ok(test > 430 && test < 570, `50/50 variants gave ${test} of 1000 "test"`);
});

test('local evaluation (/flags/definitions) agrees with remote evaluation on the same 1,000 ids', async () => {
  assert.equal(await local.waitForLocalEvaluationReady(10_000), true, 'definitions loaded with the personal key');
  for (const { id, plan } of USERS) {
    const values = await local.getAllFlags(id, { personProperties: { plan }, onlyEvaluateLocally: true });
    assert.deepEqual(values, expectedFlags(id, plan).values, `local flags of ${id}`);
    assert.deepEqual(values, remoteValues.get(id), `local and remote flags of ${id}`);
  }
  assert.deepEqual(await local.getFeatureFlagPayload('sdk-bool', 'payload-user', true, { onlyEvaluateLocally: true }), { color: 'blue' });
  assert.deepEqual(await remote.getFeatureFlagPayload('sdk-bool', 'payload-user'), { color: 'blue' });
});

test('$feature_flag_called and $feature/<key> properties are stored like any event', async () => {
  const id = 'called-user';
  const half = await remote.getFeatureFlag('sdk-half', id);
  assert.equal(half, flagHash('sdk-half', id) <= 0.5);
  const variant = await local.getFeatureFlag('sdk-multi', id);
  remote.capture({ distinctId: id, event: 'checkout', properties: { '$feature/sdk-multi': variant } });
  await remote.shutdown(5000);
  await local.shutdown(5000);

  const stored = await stopAndRead(server);
  const events = stored.events.filter((event) => event.distinct_id === id);
  const called = events.filter((event) => event.event === '$feature_flag_called');
  const byFlag = new Map(called.map((event) => [event.properties.$feature_flag, event.properties]));
  assert.equal(byFlag.get('sdk-half')?.$feature_flag_response, half);
  assert.equal(byFlag.get('sdk-half')?.['$feature/sdk-half'], half);
  assert.equal(byFlag.get('sdk-half')?.locally_evaluated, false);
  assert.equal(byFlag.get('sdk-multi')?.$feature_flag_response, variant);
  assert.equal(byFlag.get('sdk-multi')?.locally_evaluated, true);
  const checkout = events.find((event) => event.event === 'checkout');
  assert.equal(checkout?.properties['$feature/sdk-multi'], variant);
});
