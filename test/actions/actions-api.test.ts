/**
 * Actions API: create, list, retrieve, update, soft delete and restore; steps checked with a
 * 400 naming the field; names unique among live actions; another organization's action is 404.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTenant, expectError, expectOk, type Tenant } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let other: Tenant;
const ACTIONS = '/api/projects/@current/actions/';

const create = async (body: Record<string, unknown>, key?: string) => expectOk(await server.api(ACTIONS, { method: 'POST', body, key }), 201);
const refused = async (body: Record<string, unknown>, attr: string, code = 'invalid_input') =>
  expectError(await server.api(ACTIONS, { method: 'POST', body }), 400, code, attr);

before(async () => {
  server = await startServer();
  other = await createTenant(server, 'otherorg');
});
after(async () => {
  await server?.stop();
});

test('an action is created with its steps in PostHog shape, retrieved, listed and searched', async () => {
  const action = await create({
    name: 'Clicked buy',
    description: 'any buy button',
    tags: ['growth', ' growth '],
    steps: [
      { event: '$autocapture', selector: 'div > a.btn', text: 'Buy', url: '/shop', url_matching: 'contains' },
      { event: 'purchase', properties: [{ key: 'plan', value: 'pro', type: 'event' }] },
    ],
  });
  assert.equal(action.name, 'Clicked buy');
  assert.deepEqual(action.tags, ['growth']);
  assert.equal(action.deleted, false);
  assert.equal(action.is_action, true);
  assert.equal(action.created_by.email, 'admin@sightline.local');
  assert.deepEqual(action.steps[0], {
    event: '$autocapture',
    properties: [],
    selector: 'div > a.btn',
    tag_name: null,
    text: 'Buy',
    text_matching: null,
    href: null,
    href_matching: null,
    url: '/shop',
    url_matching: 'contains',
  });
  assert.deepEqual(action.steps[1].properties, [{ key: 'plan', value: 'pro', type: 'event' }]);

  const fetched = await expectOk(await server.api(`${ACTIONS}${action.id}/`));
  assert.deepEqual(fetched, action);
  await create({ name: 'Signed up', steps: [{ event: 'signup' }] });
  const listed = await expectOk(await server.api(`${ACTIONS}?search=buy`));
  assert.deepEqual(listed.results.map((a: any) => a.name), ['Clicked buy']);
  const all = await expectOk(await server.api(ACTIONS));
  assert.deepEqual(all.results.map((a: any) => a.name), ['Clicked buy', 'Signed up']);
});

test('a url step without url_matching matches by contains, as in PostHog', async () => {
  const action = await create({ name: 'Pricing visit', steps: [{ event: '$pageview', url: 'pricing' }] });
  assert.equal(action.steps[0].url_matching, 'contains');
});

test('bad steps are 400s naming the field', async () => {
  await refused({ name: 'x1', steps: 'nope' }, 'steps');
  await refused({ name: 'x2', steps: [3] }, 'steps.0');
  await refused({ name: 'x3', steps: [{ url: 'a', url_matching: 'startswith' }] }, 'steps.0.url_matching', 'invalid_choice');
  await refused({ name: 'x4', steps: [{ url: '(unclosed', url_matching: 'regex' }] }, 'steps.0.url');
  await refused({ name: 'x5', steps: [{}, { text: '(?<name>x)', text_matching: 'regex' }] }, 'steps.1.text');
  await refused({ name: 'x6', steps: [{ selector: 'a:hover' }] }, 'steps.0.selector');
  await refused({ name: 'x7', steps: [{ selector: 'a + b' }] }, 'steps.0.selector');
  await refused({ name: 'x8', steps: [{ event: 5 }] }, 'steps.0.event');
  await refused({ name: 'x9', steps: [{ properties: [{ key: 'a', operator: 'nearly', value: 1 }] }] }, 'steps.0.properties');
  await refused({ name: 'x10', steps: [{ properties: [{ key: 'a', operator: 'regex', value: '(' }] }] }, 'steps.0.properties');
  await refused({ name: 'x11', steps: [{ properties: { key: 'a' } }] }, 'steps.0.properties');
  await refused({ steps: [] }, 'name', 'required');
  await refused({ name: '   ' }, 'name', 'blank');
  const nothing = await expectOk(await server.api(`${ACTIONS}?search=x`));
  assert.equal(nothing.results.filter((a: any) => /^x\d+$/.test(a.name)).length, 0, 'nothing half-saved');
});

test('names are unique among live actions; a deleted one frees its name and is restored only if still free', async () => {
  const first = await create({ name: 'Unique name', steps: [{ event: 'a' }] });
  await refused({ name: 'Unique name' }, 'name', 'unique');
  const deleted = await expectOk(await server.api(`${ACTIONS}${first.id}/`, { method: 'PATCH', body: { deleted: true } }));
  assert.equal(deleted.deleted, true);
  const listed = await expectOk(await server.api(`${ACTIONS}?search=unique`));
  assert.equal(listed.count, 0, 'deleted actions are not listed');
  assert.equal((await expectOk(await server.api(`${ACTIONS}${first.id}/`))).deleted, true, 'but can still be retrieved');
  const second = await create({ name: 'Unique name', steps: [{ event: 'b' }] });
  await expectError(await server.api(`${ACTIONS}${first.id}/`, { method: 'PATCH', body: { deleted: false } }), 400, 'unique', 'name');
  await expectError(await server.api(`${ACTIONS}${second.id}/`, { method: 'PATCH', body: { name: 'Clicked buy' } }), 400, 'unique', 'name');
  await expectOk(await server.api(`${ACTIONS}${second.id}/`, { method: 'PATCH', body: { deleted: true } }));
  const restored = await expectOk(await server.api(`${ACTIONS}${first.id}/`, { method: 'PATCH', body: { deleted: false } }));
  assert.equal(restored.deleted, false);
  await expectError(await server.api(`${ACTIONS}${first.id}/`, { method: 'DELETE' }), 405, 'method_not_allowed');
});

test('update replaces the steps and checks them like create', async () => {
  const action = await create({ name: 'Editable', steps: [{ event: 'a' }] });
  const updated = await expectOk(
    await server.api(`${ACTIONS}${action.id}/`, { method: 'PATCH', body: { steps: [{ event: 'b', href: '/x', href_matching: 'exact' }], description: 'new' } }),
  );
  assert.equal(updated.steps.length, 1);
  assert.equal(updated.steps[0].event, 'b');
  assert.equal(updated.steps[0].href, '/x');
  assert.equal(updated.description, 'new');
  assert.equal(updated.name, 'Editable');
  await expectError(await server.api(`${ACTIONS}${action.id}/`, { method: 'PATCH', body: { steps: [{ href: '[', href_matching: 'regex' }] } }), 400, 'invalid_input', 'steps.0.href');
  assert.equal((await expectOk(await server.api(`${ACTIONS}${action.id}/`))).steps[0].event, 'b', 'a refused update changes nothing');
});

test("another organization's action is 404, and unknown ids are 404", async () => {
  const mine = await create({ name: 'Private', steps: [{ event: 'a' }] });
  await expectError(await server.api(`${ACTIONS}${mine.id}/`, { key: other.ownerKey }), 404, 'not_found');
  await expectError(await server.api(`${ACTIONS}${mine.id}/`, { method: 'PATCH', body: { name: 'Mine now' }, key: other.ownerKey }), 404, 'not_found');
  await expectError(await server.api(`${ACTIONS}999999/`), 404, 'not_found');
  await expectError(await server.api(`${ACTIONS}abc/`), 404, 'not_found');
  const theirs = await expectOk(await server.api(ACTIONS, { key: other.ownerKey }));
  assert.equal(theirs.count, 0);
});
