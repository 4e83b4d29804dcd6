/**
 * /decide: PostHog's exact v3 answer (`posthog/api/decide.py`), the other versions, every body
 * encoding, errors, payload encoding, and partial answers when one flag cannot be computed.
 */
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, test } from 'node:test';
import LZString from 'lz-string';
import { expectError } from '../helpers/api-fixtures.js';
import { createFlag, evaluate, everyone } from '../helpers/flags.js';
import { send } from '../helpers/ingest.js';
import { flagHash } from '../helpers/sdk.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
const USER = 'decide-user';
const variantOf = (id: string) => (flagHash('d-multi', id, 'variant') < 0.5 ? 'control' : 'test');

before(async () => {
  server = await startServer();
  await createFlag(server, everyone('d-on', [], { payloads: { true: '{"color":"blue"}' } }));
  await createFlag(server, { key: 'd-off', filters: { groups: [{ properties: [], rollout_percentage: 0 }] } });
  await createFlag(server, {
    key: 'd-multi',
    filters: {
      groups: [{ properties: [], rollout_percentage: 100 }],
      multivariate: { variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }] },
      // Stored as JSON values, not strings: answers must carry them JSON-encoded.
      payloads: { control: { n: 1 }, test: ['t'] },
    },
  });
  await createFlag(server, everyone('d-pro', [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }]));
  await createFlag(server, { ...everyone('d-inactive'), active: false });
});
after(async () => {
  await server?.stop();
});

const expectedPayload = (id: string) => (variantOf(id) === 'control' ? '{"n":1}' : '["t"]');

test('POST /decide?v=3 answers exactly the shape of PostHog v3', async () => {
  const body = await evaluate(server, '/decide?v=3', { api_key: server.projectKey, distinct_id: USER, person_properties: { plan: 'pro' } });
  assert.deepEqual(body, {
    config: { enable_collect_everything: true },
    editorParams: {},
    errorComputingFlags: false,
    errorsWhileComputingFlags: false,
    isAuthenticated: false,
    supportedCompression: ['gzip', 'gzip-js', 'lz64'],
    featureFlags: { 'd-on': true, 'd-off': false, 'd-multi': variantOf(USER), 'd-pro': true },
    featureFlagPayloads: { 'd-on': '{"color":"blue"}', 'd-multi': expectedPayload(USER) },
  });
});

test('v1, v2 and v4 shapes; GET answers with no flags', async () => {
  const request = { api_key: server.projectKey, distinct_id: USER };
  const v2 = await evaluate(server, '/decide/?v=2', request);
  assert.deepEqual(v2.featureFlags, { 'd-on': true, 'd-multi': variantOf(USER) });
  assert.equal(v2.isAuthenticated, false);
  assert.equal('featureFlagPayloads' in v2, false);

  const v1 = await evaluate(server, '/decide/', request);
  assert.deepEqual(v1.featureFlags, ['d-on', 'd-multi']);

  const v4 = await evaluate(server, '/decide?v=4', request);
  assert.equal(v4.errorsWhileComputingFlags, false);
  assert.equal(typeof v4.requestId, 'string');
  assert.deepEqual(Object.keys(v4.flags), ['d-on', 'd-off', 'd-multi', 'd-pro']);
  assert.deepEqual(v4.flags['d-on'].reason, { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' });
  assert.equal(v4.flags['d-on'].metadata.payload, '{"color":"blue"}');
  assert.deepEqual(v4.flags['d-pro'], {
    key: 'd-pro',
    enabled: false,
    variant: null,
    reason: { code: 'no_condition_match', condition_index: 0, description: 'No matching condition set' },
    metadata: { id: v4.flags['d-pro'].metadata.id, version: 1, description: null, has_experiment: false },
  });

  const get = await send(server, '/decide/?v=3', { method: 'GET' });
  assert.equal(get.status, 200);
  assert.deepEqual(get.json.featureFlags, {});
  assert.deepEqual(get.json.config, { enable_collect_everything: true });
});

test('every body encoding the SDKs use', async () => {
  const json = JSON.stringify({ token: server.projectKey, distinct_id: USER });
  const expected = { 'd-on': true, 'd-off': false, 'd-multi': variantOf(USER), 'd-pro': false };
  const bodies: [string, string | Buffer, Record<string, string>][] = [
    ['/decide?v=3', gzipSync(json), { 'content-type': 'application/json', 'content-encoding': 'gzip' }],
    ['/decide?v=3', gzipSync(json), { 'content-type': 'text/plain' }],
    ['/decide?v=3&compression=gzip-js', gzipSync(json), { 'content-type': 'text/plain' }],
    ['/decide?v=3&compression=base64', `data=${encodeURIComponent(Buffer.from(json).toString('base64'))}`, { 'content-type': 'application/x-www-form-urlencoded' }],
    ['/decide?v=3', `data=${encodeURIComponent(LZString.compressToBase64(json))}&compression=lz64`, { 'content-type': 'application/x-www-form-urlencoded' }],
    ['/decide?v=3', json, {}],
  ];
  for (const [path, body, headers] of bodies) {
    const response = await send(server, path, { body, headers });
    assert.equal(response.status, 200, `${path} ${JSON.stringify(headers)} → ${response.text}`);
    assert.deepEqual(response.json.featureFlags, expected, `${path} ${JSON.stringify(headers)}`);
  }
});

test('errors: unknown or missing token, missing distinct_id, malformed body', async () => {
  await expectError(await server.post('/decide?v=3', { api_key: 'phc_nope', distinct_id: 'x' }), 401, 'invalid_api_key');
  await expectError(await server.post('/decide?v=3', { distinct_id: 'x' }), 401, 'invalid_api_key');
  await expectError(await server.post('/decide?v=3', { api_key: server.projectKey }), 400, 'missing_distinct_id', 'distinct_id');
  await expectError(await server.post('/decide?v=3', { api_key: server.projectKey, distinct_id: '' }), 400, 'missing_distinct_id', 'distinct_id');
  await expectError(await server.post('/decide?v=3', '{"api_key": '), 400, 'invalid_payload');
  await expectError(await server.post('/flags?v=2', { token: server.projectKey }), 400, 'missing_distinct_id', 'distinct_id');
  // A numeric distinct id is read as text.
  const numeric = await evaluate(server, '/decide?v=3', { api_key: server.projectKey, distinct_id: 42 });
  assert.equal(numeric.featureFlags['d-multi'], variantOf('42'));
});

test('a flag that cannot be computed is left out; the others still answer', async () => {
  const other = await startServer();
  try {
    await createFlag(other, everyone('p-on'));
    // A regex that needs more work than an evaluation may spend on this value cannot be decided.
    await createFlag(other, everyone('p-uncomputable', [{ key: 'name', operator: 'regex', value: '(.*a){1000}$', type: 'person' }]));
    const hostile = { name: 'a'.repeat(3_000) + '!' };
    const decide = await evaluate(other, '/decide?v=3', { api_key: other.projectKey, distinct_id: 'u', person_properties: hostile });
    assert.equal(decide.errorComputingFlags, true);
    assert.equal(decide.errorsWhileComputingFlags, true);
    assert.deepEqual(decide.featureFlags, { 'p-on': true });

    const flags = await evaluate(other, '/flags?v=2', { token: other.projectKey, distinct_id: 'u', person_properties: hostile });
    assert.equal(flags.errorsWhileComputingFlags, true);
    assert.equal(flags.flags['p-on'].enabled, true);
    assert.equal(flags.flags['p-uncomputable'].failed, true);
    assert.equal(flags.flags['p-uncomputable'].enabled, false);
  } finally {
    await other.stop();
  }
});
