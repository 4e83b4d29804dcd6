/** Personal API keys: authentication failures, scopes, and the key management routes. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { expectError, expectOk } from '../helpers/api-fixtures.js';
import { newTempDir, startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server.stop();
});

const createKey = async (body: unknown, key?: string) => expectOk(await server.api('/api/personal_api_keys/', { method: 'POST', body, key }), 201);

test('missing, malformed, unknown and project keys are all 401 invalid_personal_api_key', async () => {
  const cases: { name: string; headers?: Record<string, string>; key?: string | null }[] = [
    { name: 'missing', key: null },
    { name: 'not a bearer', key: null, headers: { authorization: `Token ${server.personalKey}` } },
    { name: 'empty bearer', key: null, headers: { authorization: 'Bearer ' } },
    { name: 'unknown key', key: 'phx_thisKeyDoesNotExistAnywhere000000000000000000' },
    { name: 'project key as bearer', key: server.projectKey },
  ];
  for (const c of cases) {
    const response = await server.api('/api/projects/', { key: c.key, headers: c.headers });
    const body = await expectError(response, 401, 'invalid_personal_api_key');
    assert.equal(body.type, 'authentication_error', c.name);
    assert.equal('attr' in body, false, `${c.name}: authentication errors carry no attr`);
  }
});

test('authentication comes before validation: a bad query with no key is still 401', async () => {
  await expectError(await server.api('/api/projects/?limit=abc', { key: null }), 401, 'invalid_personal_api_key');
});

test('a key is shown once on creation, then only masked; it works at once', async () => {
  const created = await createKey({ label: 'ci', scopes: ['project:read', 'personal_api_key:read'] });
  assert.match(created.value, /^phx_[0-9A-Za-z]{20,}$/);
  assert.equal(created.mask_value, `${created.value.slice(0, 4)}...${created.value.slice(-4)}`);
  assert.deepEqual(created.scopes, ['project:read', 'personal_api_key:read']);

  const list = await expectOk(await server.api('/api/personal_api_keys/'));
  const listed = list.results.find((k: any) => k.id === created.id);
  assert.ok(listed);
  assert.equal(listed.value, undefined);
  assert.equal(JSON.stringify(list).includes(created.value), false);

  const own = await expectOk(await server.api('/api/personal_api_keys/@current/', { key: created.value }));
  assert.equal(own.id, created.id);
  assert.equal(own.value, undefined);
  // Read scope only: it cannot create or revoke keys.
  await expectError(await server.api('/api/personal_api_keys/', { method: 'POST', body: {}, key: created.value }), 403, 'permission_denied');
  await expectError(await server.api(`/api/personal_api_keys/${created.id}/`, { method: 'DELETE', key: created.value }), 403, 'permission_denied');
  await expectOk(await server.api('/api/projects/', { key: created.value }));
  assert.equal(server.output().includes(created.value), false, 'the key never reaches the logs');
});

test('a revoked key is rejected with 401', async () => {
  const created = await createKey({ label: 'temporary' });
  await expectOk(await server.api('/api/projects/', { key: created.value }));
  const response = await server.api(`/api/personal_api_keys/${created.id}/`, { method: 'DELETE' });
  assert.equal(response.status, 204);
  assert.equal(await response.text(), '');
  await expectError(await server.api('/api/projects/', { key: created.value }), 401, 'invalid_personal_api_key');
  await expectError(await server.api(`/api/personal_api_keys/${created.id}/`), 404, 'not_found');
});

test('scopes: read-only cannot write (403), write implies read, other objects are refused', async () => {
  const readOnly = await createKey({ scopes: ['property_definition:read', 'project:read'] });
  const writer = await createKey({ scopes: ['property_definition:write'] });
  const path = '/api/projects/@current/property_definitions/';

  await expectOk(await server.api(path, { key: readOnly.value }));
  const patch = await server.api(`${path}00000000-0000-0000-0000-000000000000/`, { method: 'PATCH', body: { tags: ['x'] }, key: readOnly.value });
  const denied = await expectError(patch, 403, 'permission_denied', null);
  assert.match(denied.detail, /property_definition:write/);

  await expectOk(await server.api(path, { key: writer.value }));
  // Past the scope check: the definition does not exist.
  await expectError(await server.api(`${path}00000000-0000-0000-0000-000000000000/`, { method: 'PATCH', body: { tags: ['x'] }, key: writer.value }), 404, 'not_found');

  await expectError(await server.api('/api/organizations/', { key: writer.value }), 403, 'permission_denied');
  await expectError(await server.api('/api/projects/@current/event_definitions/', { key: readOnly.value }), 403, 'permission_denied');
  const star = await createKey({ scopes: ['*'] });
  await expectOk(await server.api('/api/organizations/', { key: star.value }));
});

test('new keys: scopes are validated and cannot exceed the creating key', async () => {
  await expectError(await server.api('/api/personal_api_keys/', { method: 'POST', body: { scopes: ['nonsense'] } }), 400, 'invalid_input', 'scopes');
  await expectError(await server.api('/api/personal_api_keys/', { method: 'POST', body: { scopes: ['project:delete'] } }), 400, 'invalid_input', 'scopes');
  await expectError(await server.api('/api/personal_api_keys/', { method: 'POST', body: { scopes: [] } }), 400, 'invalid_input', 'scopes');
  await expectError(await server.api('/api/personal_api_keys/', { method: 'POST', body: { scopes: 'project:read' } }), 400, 'invalid_input', 'scopes');

  const manager = await createKey({ scopes: ['personal_api_key:write', 'project:read'] });
  const narrower = await createKey({ scopes: ['project:read'] }, manager.value);
  assert.deepEqual(narrower.scopes, ['project:read']);
  const inherited = await createKey({ label: 'default scopes' }, manager.value);
  assert.deepEqual(inherited.scopes, ['personal_api_key:write', 'project:read']);
  await expectError(await server.api('/api/personal_api_keys/', { method: 'POST', body: { scopes: ['*'] }, key: manager.value }), 403, 'permission_denied');
  await expectError(await server.api('/api/personal_api_keys/', { method: 'POST', body: { scopes: ['project:write'] }, key: manager.value }), 403, 'permission_denied');
});

test('at most 10 keys per user', async () => {
  const existing = (await expectOk(await server.api('/api/personal_api_keys/'))).count;
  for (let i = existing; i < 10; i++) await createKey({ label: `k${i}` });
  const listed = await expectOk(await server.api('/api/personal_api_keys/?limit=3'));
  assert.equal(listed.count, 10);
  assert.equal(listed.results.length, 3);
  await expectError(await server.api('/api/personal_api_keys/', { method: 'POST', body: { label: 'eleventh' } }), 400, 'invalid_input');
});

test('a chosen SIGHTLINE_PERSONAL_API_KEY that /api/ could never accept stops the first start with a clear message; later starts ignore it', async () => {
  const dataDir = newTempDir();
  const entry = path.join(import.meta.dirname, '..', '..', 'src', 'main.ts');
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_HOST: '127.0.0.1', SIGHTLINE_PORT: '0', SIGHTLINE_GEOIP: 'false' };
  const refused = spawnSync(process.execPath, ['--import', 'tsx', entry, 'serve'], { env: { ...env, SIGHTLINE_PERSONAL_API_KEY: 'my-own-secret-key-123' }, encoding: 'utf8', timeout: 60_000 });
  assert.equal(refused.status, 2, refused.stderr);
  assert.match(refused.stderr, /^Configuration error: SIGHTLINE_PERSONAL_API_KEY must start with "phx_"/m);
  assert.doesNotMatch(refused.stdout, /personal API key:/, 'no key was created or printed');

  // Fixed, the first start creates it; the old value set again afterwards is not used at all.
  const first = await startServer({ dataDir, personalKey: 'phx_chosen-by-the-operator' });
  await expectOk(await first.api('/api/projects/'));
  assert.equal(await first.stop(), 0);
  const again = await startServer({ dataDir, personalKey: 'my-own-secret-key-123' });
  try {
    await expectOk(await again.api('/api/projects/', { key: 'phx_chosen-by-the-operator' }));
  } finally {
    await again.stop();
  }
});
