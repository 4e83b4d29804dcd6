/**
 * Groups API (docs/persons.md, "Groups"): list by type with search and a cursor walk, find,
 * group types with editable names, group property definitions; bad input is a 400.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTenant, expectError, expectOk, ingest, walk } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
const G = '/api/projects/@current/groups/';

const groupIdentify = (type: string, key: string, set: Record<string, unknown>) => ({
  event: '$groupidentify',
  distinct_id: `$${type}_${key}`,
  properties: { $group_type: type, $group_key: key, $group_set: set },
});

before(async () => {
  server = await startServer();
  await ingest(server, [groupIdentify('organization', 'org:5', { name: 'Mr. Krabs', industry: 'food' }), groupIdentify('organization', 'org:6', { name: 'Plankton', industry: 'food', size: 2 })]);
  await ingest(server, Array.from({ length: 130 }, (_, i) => groupIdentify('organization', `bulk-${String(i).padStart(3, '0')}`, { size: i })));
  await ingest(server, [groupIdentify('project', 'p-1', { name: 'Bikini Bottom' })]);
});
after(async () => {
  await server.stop();
});

test('list by group_type_index, newest first, walked with the cursor; search by key or name', async () => {
  const { results, pages } = await walk(server, `${G}?group_type_index=0`);
  assert.equal(results.length, 132);
  assert.equal(pages.length, 2);
  assert.equal(new Set(results.map((g: any) => g.group_key)).size, 132);
  assert.deepEqual(Object.keys(results[0]).sort(), ['created_at', 'group_key', 'group_properties', 'group_type_index']);
  const created = results.map((g: any) => g.created_at);
  assert.deepEqual(created, [...created].sort().reverse());
  const keys = async (query: string) => (await expectOk(await server.api(`${G}?${query}`))).results.map((g: any) => g.group_key);
  assert.deepEqual(await keys('group_type_index=0&search=Krabs'), ['org:5']);
  assert.deepEqual(await keys('group_type_index=0&search=krabs'), ['org:5']);
  assert.deepEqual(await keys('group_type_index=0&search=org%3A5'), ['org:5']);
  assert.deepEqual(await keys('group_type_index=1'), ['p-1']);
  assert.deepEqual(await keys('group_type_index=2'), []);
  await expectError(await server.api(G), 400, 'required', 'group_type_index');
  await expectError(await server.api(`${G}?group_type_index=9`), 400, 'invalid_input', 'group_type_index');
  await expectError(await server.api(`${G}?group_type_index=0&cursor=nope`), 400, 'invalid_input', 'cursor');
});

test('find one group, 404 when absent, 400 without a key', async () => {
  const group = await expectOk(await server.api(`${G}find/?group_type_index=0&group_key=org%3A5`));
  assert.deepEqual(group.group_properties, { name: 'Mr. Krabs', industry: 'food' });
  await expectError(await server.api(`${G}find/?group_type_index=0&group_key=nope`), 404, 'not_found');
  await expectError(await server.api(`${G}find/?group_type_index=0`), 400, 'required', 'group_key');
});

test('group types with editable names', async () => {
  const types = await expectOk(await server.api('/api/projects/@current/groups_types/'));
  assert.deepEqual(types.map((t: any) => [t.group_type, t.group_type_index, t.name_singular]), [['organization', 0, null], ['project', 1, null]]);
  const renamed = await expectOk(await server.api('/api/projects/@current/groups_types/0/', { method: 'PATCH', body: { name_singular: 'Company', name_plural: 'Companies' } }));
  assert.deepEqual([renamed.group_type, renamed.name_singular, renamed.name_plural], ['organization', 'Company', 'Companies']);
  const again = await expectOk(await server.api('/api/projects/@current/groups_types/0/', { method: 'PATCH', body: { name_plural: '' } }));
  assert.deepEqual([again.name_singular, again.name_plural], ['Company', null]);
  await expectError(await server.api('/api/projects/@current/groups_types/3/', { method: 'PATCH', body: { name_singular: 'x' } }), 404, 'not_found');
  await expectError(await server.api('/api/projects/@current/groups_types/0/', { method: 'PATCH', body: { name_singular: 5 } }), 400, 'invalid_input', 'name_singular');
});

test('group property definitions: names per type with how many groups have them', async () => {
  const definitions = await expectOk(await server.api(`${G}property_definitions/`));
  assert.deepEqual(definitions['0'].slice(0, 3), [
    { name: 'size', count: 131 },
    { name: 'industry', count: 2 },
    { name: 'name', count: 2 },
  ]);
  assert.deepEqual(definitions['1'], [{ name: 'name', count: 1 }]);
});

test("another organization's groups are not reachable", async () => {
  const other = await createTenant(server, 'elsewhere');
  const theirs = await expectOk(await server.api(`/api/projects/${other.projectId}/groups/?group_type_index=0`, { key: other.ownerKey }));
  assert.deepEqual(theirs.results, []);
  await expectError(await server.api(`/api/projects/${other.projectId}/groups/?group_type_index=0`), 404, 'not_found');
});
