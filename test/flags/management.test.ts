/** Feature flag management API: CRUD, validation with attrs, soft/hard delete, scopes, tenancy. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTenant, expectError, expectOk } from '../helpers/api-fixtures.js';
import { createFlag, decideFlags, everyone, patchFlag } from '../helpers/flags.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
const FLAGS = '/api/projects/@current/feature_flags/';
const post = (body: unknown, key?: string) => server.api(FLAGS, { method: 'POST', body, key });

before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

test('create returns the full flag at version 1', async () => {
  const flag = await createFlag(server, { key: 'api-simple', name: 'Simple', filters: { groups: [{ properties: [], rollout_percentage: 50 }] } });
  assert.equal(typeof flag.id, 'number');
  assert.equal(flag.key, 'api-simple');
  assert.equal(flag.name, 'Simple');
  assert.equal(flag.active, true);
  assert.equal(flag.deleted, false);
  assert.equal(flag.ensure_experience_continuity, false);
  assert.equal(flag.version, 1);
  assert.equal(flag.is_simple_flag, true);
  assert.equal(flag.rollout_percentage, 50);
  assert.equal(flag.created_by.email, 'admin@sightline.local');
  assert.ok(!Number.isNaN(Date.parse(flag.created_at)) && flag.updated_at === flag.created_at);
  assert.deepEqual(flag.filters.groups, [{ properties: [], rollout_percentage: 50, variant: null }]);

  const fetched = await expectOk(await server.api(`${FLAGS}${flag.id}/`));
  assert.deepEqual(fetched, flag);
});

test('validation errors name the offending field', async () => {
  await createFlag(server, everyone('api-taken'));
  await expectError(await post(everyone('api-taken')), 400, 'unique', 'key');
  await expectError(await post({ filters: {} }), 400, 'required', 'key');
  await expectError(await post(everyone('has space')), 400, 'invalid_key', 'key');
  await expectError(await post({ ...everyone('api-type'), active: 'yes' }), 400, 'invalid_input', 'active');
  await expectError(
    await post({ key: 'api-mv', filters: { groups: [{ rollout_percentage: 100 }], multivariate: { variants: [{ key: 'a', rollout_percentage: 60 }, { key: 'b', rollout_percentage: 30 }] } } }),
    400,
    'invalid_input',
    'filters__multivariate__variants',
  );
  await expectError(await post({ key: 'api-var', filters: { groups: [{ rollout_percentage: 100, variant: 'nope' }] } }), 400, 'invalid_input', 'filters__groups__0__variant');
  await expectError(
    await post(everyone('api-op', [{ key: 'plan', value: 'x', operator: 'sounds_like', type: 'person' }])),
    400,
    'invalid_operator',
    'filters__groups__0__properties__0__operator',
  );
  await expectError(await post({ key: 'api-rollout', filters: { groups: [{ rollout_percentage: 101 }] } }), 400, 'invalid_input', 'filters__groups__0__rollout_percentage');
  await expectError(
    await post(everyone('api-dep', [{ key: '999999', type: 'flag', value: true, operator: 'flag_evaluates_to' }])),
    400,
    'invalid_input',
    'filters__groups__0__properties__0__key',
  );
});

test('PATCH bumps the version, keeps the key unique, and evaluation sees it at once', async () => {
  const flag = await createFlag(server, everyone('api-patch'));
  assert.equal((await decideFlags(server, { distinct_id: 'patcher' }))['api-patch'], true);

  const renamed = await patchFlag(server, flag.id, { name: 'Renamed' });
  assert.equal(renamed.version, 2);
  assert.equal(renamed.name, 'Renamed');
  assert.ok(renamed.updated_at >= flag.updated_at);

  const targeted = await patchFlag(server, flag.id, { filters: everyone('x', [{ key: 'plan', value: 'pro', type: 'person' }]).filters });
  assert.equal(targeted.version, 3);
  assert.equal(targeted.is_simple_flag, false);
  assert.equal(targeted.rollout_percentage, null);
  assert.equal((await decideFlags(server, { distinct_id: 'patcher' }))['api-patch'], false);

  const inactive = await patchFlag(server, flag.id, { active: false });
  assert.equal(inactive.active, false);
  assert.equal('api-patch' in (await decideFlags(server, { distinct_id: 'patcher' })), false, 'inactive flags are not evaluated');

  await createFlag(server, everyone('api-other'));
  await expectError(await server.api(`${FLAGS}${flag.id}/`, { method: 'PATCH', body: { key: 'api-other' } }), 400, 'unique', 'key');
  await expectError(await server.api(`${FLAGS}${flag.id}/`, { method: 'PATCH', body: { filters: { groups: 'all' } } }), 400, 'invalid_input', 'filters__groups');
});

test('list: newest first, paginated, search and active filters, no deleted flags', async () => {
  await createFlag(server, { ...everyone('list-alpha'), name: 'First of the list' });
  await createFlag(server, { ...everyone('list-beta'), active: false });
  const all = await expectOk(await server.api(`${FLAGS}?search=list-`));
  assert.deepEqual(all.results.map((f: any) => f.key), ['list-beta', 'list-alpha']);
  assert.equal(all.count, 2);

  const byName = await expectOk(await server.api(`${FLAGS}?search=${encodeURIComponent('first LIST')}`));
  assert.deepEqual(byName.results.map((f: any) => f.key), ['list-alpha']);
  const inactive = await expectOk(await server.api(`${FLAGS}?search=list-&active=false`));
  assert.deepEqual(inactive.results.map((f: any) => f.key), ['list-beta']);

  const page = await expectOk(await server.api(`${FLAGS}?search=list-&limit=1`));
  assert.equal(page.results.length, 1);
  assert.equal(page.previous, null);
  assert.ok(page.next.includes('offset=1'));
  const second = await expectOk(await server.api(page.next.slice(server.url.length)));
  assert.deepEqual(second.results.map((f: any) => f.key), ['list-alpha']);
  assert.equal(second.next, null);
});

test('soft delete hides the flag and frees its key; hard delete removes it', async () => {
  const flag = await createFlag(server, everyone('api-delete'));
  const deleted = await patchFlag(server, flag.id, { deleted: true });
  assert.equal(deleted.deleted, true);
  const listed = await expectOk(await server.api(`${FLAGS}?search=api-delete`));
  assert.equal(listed.count, 0);
  assert.equal('api-delete' in (await decideFlags(server, { distinct_id: 'deleter' })), false);
  assert.equal((await expectOk(await server.api(`${FLAGS}${flag.id}/`))).deleted, true, 'a soft-deleted flag can still be read');

  const reborn = await createFlag(server, everyone('api-delete'));
  assert.notEqual(reborn.id, flag.id);
  assert.equal((await decideFlags(server, { distinct_id: 'deleter' }))['api-delete'], true);

  const response = await server.api(`${FLAGS}${reborn.id}/`, { method: 'DELETE' });
  assert.equal(response.status, 204);
  assert.equal(await response.text(), '');
  await expectError(await server.api(`${FLAGS}${reborn.id}/`), 404, 'not_found');
  await expectError(await server.api(`${FLAGS}${reborn.id}/`, { method: 'DELETE' }), 404, 'not_found');
  await expectError(await server.api(`${FLAGS}not-a-number/`), 404, 'not_found');
});

test('flags other flags depend on cannot be deleted', async () => {
  const base = await createFlag(server, everyone('api-base'));
  const dependent = await createFlag(server, everyone('api-dependent', [{ key: String(base.id), type: 'flag', value: true, operator: 'flag_evaluates_to' }]));
  assert.equal((await decideFlags(server, { distinct_id: 'dep' }))['api-dependent'], true);
  await expectError(await server.api(`${FLAGS}${base.id}/`, { method: 'PATCH', body: { deleted: true } }), 400, 'invalid_input');
  await expectError(await server.api(`${FLAGS}${base.id}/`, { method: 'DELETE' }), 400, 'invalid_input');
  // A dependency loop is refused.
  await expectError(
    await server.api(`${FLAGS}${base.id}/`, { method: 'PATCH', body: everyone('api-base', [{ key: String(dependent.id), type: 'flag', value: true, operator: 'flag_evaluates_to' }]) }),
    400,
    'invalid_input',
    'filters__groups__0__properties__0__key',
  );
});

test('scopes and tenancy', async () => {
  const created = await expectOk(await server.api('/api/personal_api_keys/', { method: 'POST', body: { label: 'flags-read', scopes: ['feature_flag:read'] } }), 201);
  await expectOk(await server.api(FLAGS, { key: created.value }));
  await expectError(await post(everyone('api-scoped'), created.value), 403, 'permission_denied');
  await expectError(await server.api(FLAGS, { key: null }), 401, 'invalid_personal_api_key');

  const other = await createTenant(server, 'flagsother');
  await expectError(await server.api(`/api/projects/${other.projectId}/feature_flags/`), 404, 'not_found');
  const theirs = await expectOk(await server.api(`/api/projects/${other.projectId}/feature_flags/`, { method: 'POST', body: everyone('theirs'), key: other.ownerKey }), 201);
  await expectError(await server.api(`/api/projects/${other.projectId}/feature_flags/${theirs.id}/`), 404, 'not_found');
  // Same key in another project is fine, and each project evaluates its own flags.
  await createFlag(server, everyone('theirs'));
  const answer = await server.post('/decide?v=3', { api_key: other.projectKey, distinct_id: 'x' });
  assert.deepEqual(Object.keys((await answer.json()).featureFlags), ['theirs']);
});
