/**
 * /flags answers and what evaluation reads: stored persons and groups merged with request
 * overrides, distinct_id and $group_key, GeoIP from X-Forwarded-For, and experience continuity.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createFlag, decideFlags, evaluate, everyone, groupIdentify, identify } from '../helpers/flags.js';
import { flagHash } from '../helpers/sdk.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
const person = (key: string, value: unknown, operator = 'exact') => ({ key, value, operator, type: 'person' });
const flagsOf = async (body: Record<string, unknown>, headers: Record<string, string> = {}, query = '?v=2') =>
  (await evaluate(server, `/flags${query}`, { token: server.projectKey, ...body }, headers)).flags;

before(async () => {
  server = await startServer();
  await createFlag(server, everyone('e-on', [], { payloads: { true: '{"a":1}' } }));
  await createFlag(server, everyone('e-pro', [person('plan', 'pro')]));
  await createFlag(server, everyone('e-pro-fr', [person('plan', 'pro'), person('country', 'FR')]));
  await createFlag(server, everyone('e-self', [person('distinct_id', 'special-user')]));
  await createFlag(server, everyone('e-gb', [person('$geoip_country_code', 'GB')]));
  await groupIdentify(server, 'company', 'acme', { size: 'big' });
  await createFlag(server, {
    key: 'e-big-company',
    filters: { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'size', value: 'big', type: 'group', group_type_index: 0 }], rollout_percentage: 100 }] },
  });
  await createFlag(server, {
    key: 'e-acme',
    filters: { aggregation_group_type_index: 0, groups: [{ properties: [{ key: '$group_key', value: 'acme', type: 'group', group_type_index: 0 }], rollout_percentage: 100 }] },
  });
});
after(async () => {
  await server?.stop();
});

test('/flags?v=2 shape, flag_keys_to_evaluate, disable_flags', async () => {
  const answer = await evaluate(server, '/flags?v=2', { token: server.projectKey, distinct_id: 'shape-user' });
  assert.deepEqual(Object.keys(answer).sort(), ['errorsWhileComputingFlags', 'evaluatedAt', 'flags', 'quotaLimited', 'requestId']);
  assert.equal(answer.errorsWhileComputingFlags, false);
  assert.deepEqual(answer.quotaLimited, []);
  assert.match(answer.requestId, /^[0-9a-f-]{36}$/);
  assert.ok(Math.abs(answer.evaluatedAt - Date.now()) < 60_000);
  assert.deepEqual(answer.flags['e-on'], {
    key: 'e-on',
    enabled: true,
    variant: null,
    reason: { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
    metadata: { id: answer.flags['e-on'].metadata.id, version: 1, payload: '{"a":1}', description: null, has_experiment: false },
  });
  assert.equal(answer.flags['e-big-company'].reason.code, 'no_group_type');

  assert.deepEqual(Object.keys(await flagsOf({ distinct_id: 'u', flag_keys_to_evaluate: ['e-on', 'e-pro', 'missing'] })), ['e-on', 'e-pro']);
  assert.deepEqual(Object.keys(await flagsOf({ distinct_id: 'u', flag_keys: ['e-self'] })), ['e-self']);
  assert.deepEqual(await flagsOf({ distinct_id: 'u', disable_flags: true }), {});
});

test('/flags config: none given means v2 with config; config=true adds it; v=1 is the legacy shape', async () => {
  const request = { token: server.projectKey, distinct_id: 'config-user' };
  for (const query of ['', '?v=2&config=true']) {
    const answer = await evaluate(server, `/flags${query}`, request);
    assert.equal(answer.hasFeatureFlags, true, query);
    assert.deepEqual(answer.supportedCompression, ['gzip', 'gzip-js'], query);
    assert.deepEqual(answer.analytics, { endpoint: '/i/v0/e/' }, query);
    assert.equal(answer.flags['e-on'].enabled, true, query);
  }
  const plain = await evaluate(server, '/flags?v=2', request);
  assert.equal('hasFeatureFlags' in plain, false);
  const legacy = await evaluate(server, '/flags?v=1', request);
  assert.equal(legacy.featureFlags['e-on'], true);
  assert.equal(legacy.featureFlags['e-pro'], false);
  assert.deepEqual(legacy.featureFlagPayloads, { 'e-on': '{"a":1}' });
});

test('stored person properties, overridden key by key by the request', async () => {
  await identify(server, 'stored-pro', { plan: 'pro', country: 'FR' });
  const stored = await decideFlags(server, { distinct_id: 'stored-pro' });
  assert.equal(stored['e-pro'], true);
  assert.equal(stored['e-pro-fr'], true);

  const overridden = await decideFlags(server, { distinct_id: 'stored-pro', person_properties: { plan: 'free' } });
  assert.equal(overridden['e-pro'], false);
  // Only country is overridden: plan still comes from the stored person.
  const partial = await decideFlags(server, { distinct_id: 'stored-pro', person_properties: { country: 'DE' } });
  assert.equal(partial['e-pro'], true);
  assert.equal(partial['e-pro-fr'], false);

  assert.equal((await decideFlags(server, { distinct_id: 'nobody' }))['e-pro'], false);
  assert.equal((await decideFlags(server, { distinct_id: 'nobody', person_properties: { plan: 'pro' } }))['e-pro'], true);
  assert.equal((await decideFlags(server, { distinct_id: 'special-user' }))['e-self'], true, 'distinct_id is a person property');
  assert.equal((await decideFlags(server, { distinct_id: 'other-user' }))['e-self'], false);
});

test('group flags read stored group properties, request overrides and $group_key', async () => {
  const acme = await decideFlags(server, { distinct_id: 'g-user', groups: { company: 'acme' } });
  assert.equal(acme['e-big-company'], true);
  assert.equal(acme['e-acme'], true);
  assert.equal((await decideFlags(server, { distinct_id: 'g-user' }))['e-big-company'], false);
  const other = await decideFlags(server, { distinct_id: 'g-user', groups: { company: 'globex' } });
  assert.equal(other['e-big-company'], false);
  assert.equal(other['e-acme'], false);
  const small = await decideFlags(server, { distinct_id: 'g-user', groups: { company: 'acme' }, group_properties: { company: { size: 'small' } } });
  assert.equal(small['e-big-company'], false);
  const overridden = await decideFlags(server, { distinct_id: 'g-user', groups: { company: 'globex' }, group_properties: { company: { size: 'big' } } });
  assert.equal(overridden['e-big-company'], true);
});

test('GeoIP from the first X-Forwarded-For address; request values win; geoip_disable skips it', async () => {
  const forwarded = { 'x-forwarded-for': '81.2.69.142, 10.0.0.1' };
  assert.equal((await decideFlags(server, { distinct_id: 'geo' }, forwarded))['e-gb'], true);
  assert.equal((await decideFlags(server, { distinct_id: 'geo' }))['e-gb'], false, 'loopback is not located');
  assert.equal((await decideFlags(server, { distinct_id: 'geo' }, { 'x-forwarded-for': '192.168.1.4' }))['e-gb'], false);
  assert.equal((await decideFlags(server, { distinct_id: 'geo', geoip_disable: true }, forwarded))['e-gb'], false);
  assert.equal((await decideFlags(server, { distinct_id: 'geo', person_properties: { $geoip_country_code: 'FR' } }, forwarded))['e-gb'], false);
  assert.equal((await flagsOf({ distinct_id: 'geo' }, forwarded))['e-gb'].enabled, true);
});

test('experience continuity: the anon id becomes the hash key, first write wins', async () => {
  const key = 'e-continuity';
  await createFlag(server, { key, ensure_experience_continuity: true, filters: { groups: [{ properties: [], rollout_percentage: 50 }] } });
  const ids = Array.from({ length: 200 }, (_, i) => `cont-${i}`);
  const [anonIn, otherIn] = ids.filter((id) => flagHash(key, id) <= 0.5);
  const [userOut, anonOut] = ids.filter((id) => flagHash(key, id) > 0.5);

  await identify(server, userOut, { plan: 'free' }, { $anon_distinct_id: anonIn });
  assert.equal((await flagsOf({ distinct_id: userOut }))[key].enabled, false, 'no override yet: the own id decides');
  assert.equal((await flagsOf({ distinct_id: userOut, $anon_distinct_id: anonIn }))[key].enabled, true);
  assert.equal((await flagsOf({ distinct_id: userOut }))[key].enabled, true, 'the override is stored');
  assert.equal((await flagsOf({ distinct_id: userOut, $anon_distinct_id: anonOut }))[key].enabled, true, 'first write wins');
  assert.equal((await flagsOf({ distinct_id: otherIn }))[key].enabled, true);
});
