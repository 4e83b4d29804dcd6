/**
 * Persons API (docs/persons.md): list with search and filters, pages with next/previous,
 * retrieve by integer id or uuid, update_property / delete_property / PATCH, the events API's
 * person_id taking either id, and another organization's persons being 404.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTenant, expectError, expectOk, ingest, q, walk } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
const BASE = '/api/projects/@current/persons/';

before(async () => {
  server = await startServer();
  // Three identified persons, one anonymous one, and 120 more for paging.
  await ingest(server, [
    { event: '$identify', distinct_id: 'alice', properties: { $set: { email: 'alice@example.com', name: 'Alice Liddell', plan: 'pro', age: 31 }, $anon_distinct_id: 'anon-a' } },
    { event: '$identify', distinct_id: 'bob', properties: { $set: { email: 'bob@example.com', name: 'Bob', plan: 'free', age: 25 } } },
    { event: '$pageview', distinct_id: 'carol', properties: { $set: { name: 'Carol', plan: 'pro' } } },
    { event: '$pageview', distinct_id: '0193a2b0-0000-7000-8000-000000000001' },
  ]);
  await ingest(server, Array.from({ length: 120 }, (_, i) => ({ event: 'bulk', distinct_id: `bulk-${i}`, properties: { $set: { n: i } } })));
});
after(async () => {
  await server.stop();
});

const list = async (query = '') => (await expectOk(await server.api(`${BASE}?${query}`))).results;
const distinctIdsOf = (results: any[]) => results.map((p) => p.distinct_ids[0]).sort();

test('a person carries a stable integer id and a uuid; retrieve by either', async () => {
  const [alice] = await list('distinct_id=alice');
  assert.equal(typeof alice.id, 'number');
  assert.match(alice.uuid, /^[0-9a-f-]{36}$/);
  assert.deepEqual(alice.distinct_ids, ['alice', 'anon-a']);
  assert.equal(alice.name, 'alice@example.com');
  assert.equal(alice.type, 'person');
  assert.equal(alice.is_identified, true);
  assert.deepEqual(alice.properties.plan, 'pro');
  const byId = await expectOk(await server.api(`${BASE}${alice.id}/`));
  const byUuid = await expectOk(await server.api(`${BASE}${alice.uuid}/`));
  assert.deepEqual(byId, byUuid);
  assert.equal(byId.id, alice.id);
  // The id stays the same after the person changes.
  await ingest(server, [{ event: '$set', distinct_id: 'alice', properties: { $set: { plan: 'team' } } }]);
  const again = await expectOk(await server.api(`${BASE}${alice.uuid}/`));
  assert.equal(again.id, alice.id);
  assert.equal(again.properties.plan, 'team');
  await ingest(server, [{ event: '$set', distinct_id: 'alice', properties: { $set: { plan: 'pro' } } }]);

  await expectError(await server.api(`${BASE}not-an-id/`), 400, 'invalid', 'id');
  await expectError(await server.api(`${BASE}999999/`), 404, 'not_found');
  await expectError(await server.api(`${BASE}0193a2c4-0000-7000-8000-00000000ffff/`), 404, 'not_found');
  // The environments alias serves the same persons.
  assert.deepEqual(await expectOk(await server.api(`/api/environments/@current/persons/${alice.id}/`)), byId);
});

test('search (email, name, distinct id) and the distinct_id, email and properties filters', async () => {
  assert.deepEqual(distinctIdsOf(await list('search=ALICE')), ['alice']);
  assert.deepEqual(distinctIdsOf(await list('search=example.com')), ['alice', 'bob']);
  assert.deepEqual(distinctIdsOf(await list('search=carol')), ['carol']);
  assert.deepEqual(distinctIdsOf(await list('search=anon-a')), ['alice']);
  assert.deepEqual(distinctIdsOf(await list('search=anon')), [], 'distinct ids match exactly');
  assert.deepEqual(distinctIdsOf(await list('email=bob@example.com')), ['bob']);
  assert.deepEqual(distinctIdsOf(await list('distinct_id=anon-a')), ['alice']);
  assert.deepEqual(distinctIdsOf(await list(`properties=${q([{ key: 'plan', value: 'pro', type: 'person' }])}`)), ['alice', 'carol']);
  assert.deepEqual(distinctIdsOf(await list(`properties=${q([{ key: 'age', value: 30, operator: 'gt', type: 'person' }])}`)), ['alice']);
  assert.deepEqual(distinctIdsOf(await list(`properties=${q([{ key: 'name', value: '^(Bob|Carol)$', operator: 'regex' }])}`)), ['bob', 'carol']);
  assert.deepEqual(
    distinctIdsOf(await list(`properties=${q({ type: 'AND', values: [{ key: 'plan', value: 'pro' }, { key: 'email', operator: 'is_set' }] })}`)),
    ['alice'],
  );
  await expectError(await server.api(`${BASE}?properties=${q('{nope')}`), 400, 'invalid_input', 'properties');
  await expectError(await server.api(`${BASE}?properties=${q([{ key: 'plan', operator: 'bogus' }])}`), 400, 'invalid_input', 'properties');
  await expectError(await server.api(`${BASE}?properties=${q([{ key: 'x', type: 'event' }])}`), 400, 'invalid_input', 'properties');
  await expectError(await server.api(`${BASE}?limit=0`), 400, 'invalid_input', 'limit');
});

test('pages of 100, newest first, with next and previous', async () => {
  const first = await expectOk(await server.api(BASE));
  assert.equal(first.results.length, 100);
  assert.equal(first.previous, null);
  assert.ok(first.next);
  const { results, pages } = await walk(server, BASE);
  assert.equal(results.length, 124);
  assert.equal(new Set(results.map((p: any) => p.uuid)).size, 124);
  assert.equal(pages.length, 2);
  assert.ok(pages[1].previous);
  const created = results.map((p: any) => p.created_at);
  assert.deepEqual(created, [...created].sort().reverse());
  const filtered = await walk(server, `${BASE}?limit=7&properties=${q([{ key: 'n', operator: 'lt', value: 20 }])}`);
  assert.equal(filtered.results.length, 20);
  assert.deepEqual(filtered.results.map((p: any) => p.properties.n).sort((a: number, b: number) => a - b), Array.from({ length: 20 }, (_, i) => i));
});

test('search pages followed by next links give the unfiltered list filtered by hand', async () => {
  // 60 persons a search matches, in three ingest requests (so several created_at), behind newer ones it does not.
  for (let batch = 0; batch < 3; batch++) {
    await ingest(server, Array.from({ length: 20 }, (_, i) => ({ event: '$identify', distinct_id: `walker-${batch * 20 + i}`, properties: { $set: { email: `walker${batch * 20 + i}@Paging.test` } } })));
  }
  await ingest(server, Array.from({ length: 30 }, (_, i) => ({ event: '$identify', distinct_id: `later-${i}`, properties: { $set: { email: `later${i}@elsewhere.test` } } })));
  const everyone = (await walk(server, `${BASE}?limit=1000`)).results;
  for (const [search, limit] of [['paging.test', 7], ['walker1', 3], ['WALKER', 25], ['r5@paging', 2]] as const) {
    const expected = everyone.filter((p: any) => typeof p.properties.email === 'string' && p.properties.email.toLowerCase().includes(search.toLowerCase()));
    const { results, pages } = await walk(server, `${BASE}?search=${q(search)}&limit=${limit}`);
    assert.deepEqual(results.map((p: any) => p.uuid), expected.map((p: any) => p.uuid), `search ${search} limit ${limit}`);
    assert.equal(pages.length, Math.max(1, Math.ceil(expected.length / limit)), `search ${search}: pages`);
  }
});

test('update_property, PATCH and delete_property change the person through ingestion', async () => {
  const [bob] = await list('distinct_id=bob');
  let response = await server.api(`${BASE}${bob.id}/update_property/`, { method: 'POST', body: { key: 'plan', value: 'enterprise' } });
  assert.equal(response.status, 202);
  assert.equal((await expectOk(await server.api(`${BASE}${bob.id}/`))).properties.plan, 'enterprise');

  response = await server.api(`${BASE}${bob.uuid}/`, { method: 'PATCH', body: { properties: { team: 'core' } } });
  assert.equal(response.status, 202);
  assert.equal((await expectOk(await server.api(`${BASE}${bob.id}/`))).properties.team, 'core');

  assert.deepEqual(await expectOk(await server.api(`${BASE}${bob.id}/delete_property/`, { method: 'POST', body: { $unset: 'team' } }), 201), { success: true });
  const after = await expectOk(await server.api(`${BASE}${bob.id}/`));
  assert.equal('team' in after.properties, false);
  assert.equal(after.properties.plan, 'enterprise');

  await expectError(await server.api(`${BASE}${bob.id}/update_property/`, { method: 'POST', body: { value: 1 } }), 400, 'required', 'key');
  await expectError(await server.api(`${BASE}${bob.id}/update_property/`, { method: 'POST', body: { key: 'x' } }), 400, 'required', 'value');
  await expectError(await server.api(`${BASE}${bob.id}/delete_property/`, { method: 'POST', body: {} }), 400, 'required', '$unset');
  await expectError(await server.api(`${BASE}${bob.id}/`, { method: 'PATCH', body: {} }), 400, 'required', 'properties');
  await expectError(await server.api(`${BASE}999999/update_property/`, { method: 'POST', body: { key: 'a', value: 1 } }), 404, 'not_found');
});

test("the events API's person_id takes the integer id or the uuid", async () => {
  const [alice] = await list('distinct_id=alice');
  const byUuid = await expectOk(await server.api(`/api/projects/@current/events/?person_id=${alice.uuid}`));
  const byId = await expectOk(await server.api(`/api/projects/@current/events/?person_id=${alice.id}`));
  assert.ok(byUuid.results.length >= 1);
  assert.deepEqual(byId.results.map((e: any) => e.id), byUuid.results.map((e: any) => e.id));
  assert.ok(byId.results.every((e: any) => e.distinct_id === 'alice'));
  assert.deepEqual((await expectOk(await server.api('/api/projects/@current/events/?person_id=99999999'))).results, []);
  await expectError(await server.api('/api/projects/@current/events/?person_id=abc'), 400, 'invalid_input', 'person_id');
});

test("another organization's persons are 404, and its own list is its own", async () => {
  const other = await createTenant(server, 'other');
  await ingest(server, [{ event: 'x', distinct_id: 'other-user' }], other.projectKey);
  const [alice] = await list('distinct_id=alice');
  await expectError(await server.api(`/api/projects/${other.projectId}/persons/`), 404, 'not_found');
  await expectError(await server.api(`/api/projects/@current/persons/${alice.id}/`, { key: other.ownerKey }), 404, 'not_found');
  const theirs = await expectOk(await server.api(`/api/projects/${other.projectId}/persons/`, { key: other.ownerKey }));
  assert.deepEqual(distinctIdsOf(theirs.results), ['other-user']);
});

test('split gives every other distinct id a person of its own', async () => {
  await ingest(server, [
    { event: 'seen', distinct_id: 'split-anon-1' },
    { event: 'seen', distinct_id: 'split-anon-2' },
    { event: '$identify', distinct_id: 'split-main', properties: { $anon_distinct_id: 'split-anon-1', $set: { email: 'split@example.com' } } },
    { event: '$create_alias', distinct_id: 'split-main', properties: { alias: 'split-anon-2' } },
  ]);
  const [merged] = await list('distinct_id=split-main');
  assert.deepEqual([...merged.distinct_ids].sort(), ['split-anon-1', 'split-anon-2', 'split-main']);
  assert.equal((await expectOk(await server.api(`/api/projects/@current/events/?person_id=${merged.uuid}`))).results.length, 4);

  await expectError(await server.api(`${BASE}${merged.id}/split/`, { method: 'POST', body: { main_distinct_id: 'not-theirs' } }), 400, 'invalid_input', 'main_distinct_id');
  assert.deepEqual(await expectOk(await server.api(`${BASE}${merged.id}/split/`, { method: 'POST', body: { main_distinct_id: 'split-main' } }), 201), { success: true });

  const main = await expectOk(await server.api(`${BASE}${merged.id}/`));
  assert.deepEqual(main.distinct_ids, ['split-main']);
  assert.equal(main.properties.email, 'split@example.com');
  const [one] = await list('distinct_id=split-anon-1');
  const [two] = await list('distinct_id=split-anon-2');
  assert.deepEqual([one.distinct_ids, two.distinct_ids], [['split-anon-1'], ['split-anon-2']]);
  assert.equal(new Set([main.uuid, one.uuid, two.uuid]).size, 3);
  assert.deepEqual(one.properties, {});
  // The event store's person mirror follows: person_id selects by the current distinct ids.
  const mainEvents = (await expectOk(await server.api(`/api/projects/@current/events/?person_id=${merged.uuid}`))).results;
  assert.deepEqual(mainEvents.map((e: any) => e.distinct_id).sort(), ['split-main', 'split-main']);
  assert.deepEqual((await expectOk(await server.api(`/api/projects/@current/events/?person_id=${one.id}`))).results.map((e: any) => e.distinct_id), ['split-anon-1']);
  // A later event of a split-off id stays with its new person.
  await ingest(server, [{ event: 'later', distinct_id: 'split-anon-2', properties: { $set: { n: 1 } } }]);
  assert.equal((await expectOk(await server.api(`${BASE}${two.id}/`))).properties.n, 1);
  const activity = await expectOk(await server.api(`${BASE}${merged.uuid}/activity/`));
  assert.equal(activity.results[0].activity, 'split');
});
