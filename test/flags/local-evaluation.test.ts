/**
 * Local-evaluation definitions (ETag / 304, personal-key access, legacy routes), the remote
 * config payload for posthog-node, and posthog-js remote config as JSON and as a script.
 */
import assert from 'node:assert/strict';
import vm from 'node:vm';
import { after, before, test } from 'node:test';
import { createTenant, expectError, expectOk, type Tenant } from '../helpers/api-fixtures.js';
import { createFlag, everyone, groupIdentify, patchFlag } from '../helpers/flags.js';
import { send } from '../helpers/ingest.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let other: Tenant;
let base: any;
const definitions = (key?: string | null, headers: Record<string, string> = {}, token = server.projectKey) =>
  server.api(`/flags/definitions?token=${token}&send_cohorts`, { key, headers });

before(async () => {
  server = await startServer();
  await groupIdentify(server, 'company', 'acme', { size: 'big' });
  base = await createFlag(server, everyone('def-base', [], { payloads: { true: '{"theme":"dark"}' } }));
  await createFlag(server, everyone('def-dependent', [{ key: String(base.id), type: 'flag', value: true, operator: 'flag_evaluates_to' }]));
  await createFlag(server, { ...everyone('def-inactive'), active: false });
  const gone = await createFlag(server, everyone('def-deleted'));
  await patchFlag(server, gone.id, { deleted: true });
  other = await createTenant(server, 'defother');
});
after(async () => {
  await server?.stop();
});

test('GET /flags/definitions: every non-deleted flag with dependency chains, group types, cohorts', async () => {
  const response = await definitions();
  const body = await expectOk(response);
  assert.deepEqual(body.flags.map((f: any) => f.key), ['def-base', 'def-dependent', 'def-inactive']);
  assert.deepEqual(body.group_type_mapping, { '0': 'company' });
  assert.deepEqual(body.cohorts, {});
  const [first, dependent, inactive] = body.flags;
  assert.equal(inactive.active, false);
  assert.equal(first.filters.payloads.true, '{"theme":"dark"}');
  assert.equal(first.ensure_experience_continuity, false);
  assert.equal(first.version, 1);
  assert.deepEqual(dependent.filters.groups[0].properties[0], {
    key: 'def-base',
    type: 'flag',
    value: true,
    operator: 'flag_evaluates_to',
    dependency_chain: ['def-base'],
  });
  assert.match(response.headers.get('etag') ?? '', /^"[0-9a-f]+"$/);

  for (const path of [`/api/feature_flag/local_evaluation?token=${server.projectKey}`, '/api/projects/@current/feature_flags/local_evaluation']) {
    assert.deepEqual(await expectOk(await server.api(path)), body, path);
  }
});

test('ETag: 304 while nothing changed, 200 with a new tag after a change', async () => {
  const etag = (await definitions()).headers.get('etag')!;
  const unchanged = await definitions(undefined, { 'if-none-match': etag });
  assert.equal(unchanged.status, 304);
  assert.equal(await unchanged.text(), '');
  assert.equal((await definitions(undefined, { 'if-none-match': `W/${etag}, "other"` })).status, 304);

  const flag = await createFlag(server, everyone('def-new'));
  const changed = await definitions(undefined, { 'if-none-match': etag });
  assert.equal(changed.status, 200);
  assert.notEqual(changed.headers.get('etag'), etag);
  await server.api(`/api/projects/@current/feature_flags/${flag.id}/`, { method: 'DELETE' });
});

test('access: a personal key of a member with feature_flag:read', async () => {
  await expectError(await definitions(null), 401, 'invalid_personal_api_key');
  await expectError(await definitions(server.projectKey), 401, 'invalid_personal_api_key');
  await expectError(await definitions(undefined, {}, 'phc_unknown'), 401, 'invalid_api_key');
  await expectError(await definitions(other.ownerKey), 403, 'permission_denied');
  assert.equal((await definitions(other.ownerKey, {}, other.projectKey)).status, 200);
  const scoped = await expectOk(await server.api('/api/personal_api_keys/', { method: 'POST', body: { label: 'no-flags', scopes: ['project:read'] } }), 201);
  await expectError(await definitions(scoped.value), 403, 'permission_denied');
  await expectError(await server.api(`/api/projects/${other.projectId}/feature_flags/local_evaluation`), 404, 'not_found');
});

test("remote_config: a flag's true payload as a JSON-encoded string", async () => {
  const path = (ref: string) => `/api/projects/@current/feature_flags/${ref}/remote_config?token=${server.projectKey}`;
  const response = await server.api(path('def-base'));
  assert.equal(response.status, 200);
  assert.equal(await response.text(), JSON.stringify('{"theme":"dark"}'));
  assert.equal(await (await server.api(path(String(base.id)))).json(), '{"theme":"dark"}');
  assert.equal(await (await server.api(path('def-dependent'))).json(), null);
  await expectError(await server.api(path('nope')), 404, 'not_found');
});

const REMOTE_CONFIG = {
  supportedCompression: ['gzip', 'gzip-js'],
  analytics: { endpoint: '/i/v0/e/' },
  sessionRecording: false,
  elementsChainAsString: true,
  autocapture_opt_out: false,
  heatmaps: false,
  surveys: false,
  captureDeadClicks: false,
  capturePerformance: false,
  autocaptureExceptions: false,
  defaultIdentifiedOnly: true,
  siteApps: [],
};

test('remote config for posthog-js: JSON and script, with CORS', async () => {
  const origin = { origin: 'http://localhost:1234' };
  const json = await send(server, `/array/${server.projectKey}/config`, { method: 'GET', headers: origin });
  assert.equal(json.status, 200);
  assert.deepEqual(json.json, { ...REMOTE_CONFIG, hasFeatureFlags: true });
  assert.equal(json.headers.get('access-control-allow-origin'), origin.origin);

  const script = await send(server, `/array/${server.projectKey}/config.js`, { method: 'GET', headers: origin });
  assert.equal(script.status, 200);
  assert.match(script.headers.get('content-type') ?? '', /^application\/javascript/);
  assert.equal(script.headers.get('access-control-allow-origin'), origin.origin);
  const window: Record<string, any> = {};
  vm.runInNewContext(script.text, { window });
  // Through JSON: objects made inside the vm context have that context's prototypes.
  assert.deepEqual(JSON.parse(JSON.stringify(window._POSTHOG_REMOTE_CONFIG[server.projectKey])), { config: json.json, siteApps: [] });

  // A project without active flags tells the SDK to skip /flags.
  const empty = await send(server, `/array/${other.projectKey}/config`, { method: 'GET' });
  assert.equal(empty.json.hasFeatureFlags, false);
  assert.equal((await send(server, '/array/phc_unknown/config', { method: 'GET' })).status, 404);
  assert.equal((await send(server, '/array/phc_unknown/config.js', { method: 'GET' })).status, 404);
});
