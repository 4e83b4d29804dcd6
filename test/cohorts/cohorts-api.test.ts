/**
 * Cohorts API (docs/cohorts.md): dynamic cohorts of person properties, behavioural filters and
 * other cohorts, calculated into a membership with count and persons list; static cohorts from
 * CSV uploads and person ids; the 400s (self-reference, unknown cohort, bad CSV rows, with
 * nothing applied) and another organization's cohorts being 404.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTenant, expectError, expectOk, ingest } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
const BASE = '/api/projects/@current/cohorts/';

const person = (key: string, value: unknown, operator = 'exact', extra: Record<string, unknown> = {}) => ({ key, value, operator, type: 'person', ...extra });
const or = (...values: unknown[]) => ({ type: 'OR', values });
const and = (...values: unknown[]) => ({ type: 'AND', values });
const dynamic = (name: string, properties: unknown) => ({ name, filters: { properties } });

before(async () => {
  server = await startServer();
  await ingest(server, [
    { event: '$identify', distinct_id: 'ann', properties: { $set: { email: 'ann@corp.com', plan: 'pro', age: 40 } } },
    { event: '$identify', distinct_id: 'ben', properties: { $set: { email: 'ben@corp.com', plan: 'free', age: 22 } } },
    { event: '$identify', distinct_id: 'cat', properties: { $set: { email: 'cat@home.net', plan: 'pro', age: 31 } } },
    { event: '$identify', distinct_id: 'dan', properties: { $set: { email: 'dan@home.net' } } },
  ]);
  // Purchases: ann 3 times, cat once; ben once, but 40 days ago.
  const ago = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
  const purchase = (distinct_id: string, days: number) => ({ event: 'purchase', distinct_id, timestamp: ago(days), properties: {} });
  const response = await server.post('/batch/', {
    api_key: server.projectKey,
    batch: [purchase('ann', 1), purchase('ann', 2), purchase('ann', 3), purchase('cat', 5), purchase('ben', 40)],
  });
  assert.equal(response.status, 200);
});
after(async () => {
  await server.stop();
});

async function create(body: unknown): Promise<any> {
  return expectOk(await server.api(BASE, { method: 'POST', body }), 201);
}

/** Polls until the cohort's calculation has finished; returns it. */
async function calculated(id: number): Promise<any> {
  for (let i = 0; i < 200; i++) {
    const cohort = await expectOk(await server.api(`${BASE}${id}/`));
    if (!cohort.is_calculating && cohort.last_calculation !== null) return cohort;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`cohort ${id} never finished calculating`);
}

async function members(id: number): Promise<string[]> {
  const page = await expectOk(await server.api(`${BASE}${id}/persons/`));
  return page.results.map((p: any) => p.distinct_ids[0]).sort();
}

test('a property cohort: AND/OR groups, negation; count, last_calculation and the persons list', async () => {
  const created = await create(dynamic('pro or corp', or(and(person('plan', 'pro')), and(person('email', '@corp.com', 'icontains'), person('age', 30, 'gt', { negation: true })))));
  assert.equal(created.is_static, false);
  assert.equal(created.is_calculating, true, 'a new dynamic cohort is being calculated');
  const cohort = await calculated(created.id);
  assert.equal(cohort.count, 3);
  assert.equal(cohort.errors_calculating, 0);
  assert.deepEqual(await members(created.id), ['ann', 'ben', 'cat']);
  const list = await expectOk(await server.api(BASE));
  assert.ok(list.results.some((c: any) => c.id === created.id));

  // A new definition recalculates.
  await expectOk(await server.api(`${BASE}${created.id}/`, { method: 'PATCH', body: { filters: { properties: and(person('plan', 'pro'), person('age', 35, 'lt')) } } }));
  assert.deepEqual(await members((await calculated(created.id)).id), ['cat']);
});

test('behavioural filters: performed at least N times in the last N days, and did not perform', async () => {
  const behavioural = (extra: Record<string, unknown>) => ({ key: 'purchase', type: 'behavioral', event_type: 'events', time_value: 30, time_interval: 'day', ...extra });
  const twice = await create(dynamic('bought twice', and(behavioural({ value: 'performed_event_multiple', operator: 'gte', operator_value: 2 }))));
  const once = await create(dynamic('bought', and(behavioural({ value: 'performed_event' }))));
  const never = await create(dynamic('did not buy', and(behavioural({ value: 'performed_event', negation: true }))));
  const wide = await create(dynamic('bought this year', and(behavioural({ value: 'performed_event', time_value: 1, time_interval: 'year' }))));
  assert.deepEqual(await members((await calculated(twice.id)).id), ['ann']);
  assert.deepEqual(await members((await calculated(once.id)).id), ['ann', 'cat']);
  assert.deepEqual(await members((await calculated(never.id)).id), ['ben', 'dan']);
  assert.deepEqual(await members((await calculated(wide.id)).id), ['ann', 'ben', 'cat']);
});

test('cohorts naming cohorts; a cohort containing itself or an unknown cohort is a 400', async () => {
  const pro = await create(dynamic('pro', and(person('plan', 'pro'))));
  const proAtHome = await create(dynamic('pro at home', and({ key: 'id', type: 'cohort', value: pro.id }, person('email', 'home.net', 'icontains'))));
  const notPro = await create(dynamic('not pro', and({ key: 'id', type: 'cohort', value: pro.id, negation: true })));
  assert.deepEqual(await members((await calculated(proAtHome.id)).id), ['cat']);
  assert.deepEqual(await members((await calculated(notPro.id)).id), ['ben', 'dan']);

  const self = await expectError(
    await server.api(`${BASE}${pro.id}/`, { method: 'PATCH', body: { filters: { properties: and({ key: 'id', type: 'cohort', value: pro.id }) } } }),
    400,
    'invalid_input',
    'filters',
  );
  assert.match(self.detail, /itself/);
  // Through another cohort: pro → pro at home → pro.
  await expectError(
    await server.api(`${BASE}${pro.id}/`, { method: 'PATCH', body: { filters: { properties: and({ key: 'id', type: 'cohort', value: proAtHome.id }) } } }),
    400,
    'invalid_input',
    'filters',
  );
  await expectError(await server.api(BASE, { method: 'POST', body: dynamic('x', and({ key: 'id', type: 'cohort', value: 999999 })) }), 400, 'invalid_input', 'filters');
  // The definition is unchanged after the refusals.
  assert.deepEqual((await expectOk(await server.api(`${BASE}${pro.id}/`))).filters.properties, and(person('plan', 'pro')));
});

test('bad definitions are 400s naming filters', async () => {
  for (const properties of [
    and({ key: 'plan', type: 'person', operator: 'bogus', value: 1 }),
    and({ key: 'x', type: 'event', value: 1 }),
    and({ key: 'purchase', type: 'behavioral', value: 'performed_event', time_interval: 'fortnight' }),
    and({ key: 'purchase', type: 'behavioral', value: 'performed_event_multiple', operator: 'gte', operator_value: -1 }),
    { type: 'AND', values: 'nope' },
  ]) {
    await expectError(await server.api(BASE, { method: 'POST', body: dynamic('bad', properties) }), 400, 'invalid_input', 'filters');
  }
  await expectError(await server.api(BASE, { method: 'POST', body: { name: 'no filters' } }), 400, 'required', 'filters');
  await expectError(await server.api(`${BASE}999999/`), 404, 'not_found');
  await expectError(await server.api(`${BASE}abc/`), 404, 'not_found');
});

test('static cohorts: CSV of distinct ids or emails, bad rows reported with nothing applied, persons added by id', async () => {
  const byIds = await create({ name: 'csv ids', is_static: true, csv: 'ann\nben\n' });
  assert.equal(byIds.count, 2);
  assert.equal(byIds.is_calculating, false);
  assert.deepEqual(await members(byIds.id), ['ann', 'ben']);

  const byEmail = await create({ name: 'csv emails', is_static: true, csv: 'name,Email\nCat,"CAT@home.net"\nDan,dan@home.net\n' });
  assert.deepEqual(await members(byEmail.id), ['cat', 'dan']);

  const bad = await expectError(await server.api(BASE, { method: 'POST', body: { name: 'bad', is_static: true, csv: 'distinct_id\nann\nnobody\n\nzed\n' } }), 400, 'invalid_input', 'csv');
  assert.match(bad.detail, /row 3 \("nobody"\)/);
  assert.match(bad.detail, /row 5 \("zed"\)/);
  assert.ok(!(await expectOk(await server.api(BASE))).results.some((c: any) => c.name === 'bad'), 'no cohort was created');

  // A bad upload to an existing cohort adds nobody.
  await expectError(await server.api(`${BASE}${byIds.id}/`, { method: 'PATCH', body: { csv: 'cat\nnobody\n' } }), 400, 'invalid_input', 'csv');
  assert.deepEqual(await members(byIds.id), ['ann', 'ben']);
  await expectOk(await server.api(`${BASE}${byIds.id}/`, { method: 'PATCH', body: { csv: 'cat\n' } }));
  assert.deepEqual(await members(byIds.id), ['ann', 'ben', 'cat']);

  const dan = (await expectOk(await server.api('/api/projects/@current/persons/?distinct_id=dan'))).results[0];
  const unknown = await expectError(
    await server.api(`${BASE}${byIds.id}/add_persons_to_static_cohort/`, { method: 'PATCH', body: { person_ids: [dan.uuid, '0193a2c4-0000-7000-8000-00000000ffff'] } }),
    400,
    'invalid_input',
    'person_ids',
  );
  assert.match(unknown.detail, /row 2/);
  assert.equal((await expectOk(await server.api(`${BASE}${byIds.id}/`))).count, 3);
  const added = await expectOk(await server.api(`${BASE}${byIds.id}/add_persons_to_static_cohort/`, { method: 'PATCH', body: { person_ids: [dan.id] } }));
  assert.equal(added.count, 4);
  const removed = await expectOk(await server.api(`${BASE}${byIds.id}/remove_person_from_static_cohort/`, { method: 'PATCH', body: { person_id: dan.uuid } }));
  assert.equal(removed.count, 3);

  await expectError(await server.api(BASE, { method: 'POST', body: { name: 'x', csv: 'ann' , filters: { properties: and(person('plan', 'pro')) } } }), 400, 'invalid_input', 'csv');
  await expectError(await server.api(`${BASE}${byIds.id}/`, { method: 'PATCH', body: { is_static: false } }), 400, 'invalid_input', 'is_static');

  // The cohorts a person is in.
  const ann = (await expectOk(await server.api('/api/projects/@current/persons/?distinct_id=ann'))).results[0];
  const annIn = await expectOk(await server.api(`/api/projects/@current/persons/cohorts/?person_id=${ann.id}`));
  assert.ok(annIn.results.some((c: any) => c.id === byIds.id));
  assert.ok(!annIn.results.some((c: any) => c.id === byEmail.id));
  await expectError(await server.api('/api/projects/@current/persons/cohorts/?person_id=nope'), 400, 'invalid_input', 'person_id');
  await expectError(await server.api('/api/projects/@current/persons/cohorts/?person_id=999999'), 404, 'not_found');

  // A dynamic cohort can name a static one.
  const staticPro = await create(dynamic('static and pro', and({ key: 'id', type: 'cohort', value: byIds.id }, person('plan', 'pro'))));
  assert.deepEqual(await members((await calculated(staticPro.id)).id), ['ann', 'cat']);
});

test('deleted cohorts are gone; another organization cannot see a cohort', async () => {
  const cohort = await create({ name: 'temp', is_static: true, csv: 'ann' });
  const other = await createTenant(server, 'cohortother');
  // With their own key, @current is their project: our cohort is not found there.
  await expectError(await server.api(`/api/projects/@current/cohorts/${cohort.id}/`, { key: other.ownerKey }), 404, 'not_found');
  await expectError(await server.api(`/api/projects/${other.projectId}/cohorts/${cohort.id}/`, { key: other.ownerKey }), 404, 'not_found');
  const response = await server.api(`${BASE}${cohort.id}/`, { method: 'DELETE' });
  assert.equal(response.status, 204);
  await expectError(await server.api(`${BASE}${cohort.id}/`), 404, 'not_found');
});
