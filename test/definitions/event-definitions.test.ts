/** Event definitions: list with search, retrieve, PATCH description/tags, DELETE. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { expectError, expectOk, ingest, walk } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
const BASE = '/api/projects/@current/event_definitions/';

before(async () => {
  server = await startServer();
  await ingest(server, ['signup', 'Sign Up Completed', 'purchase', '$pageview', 'checkout_started'].map((event) => ({ event })));
});
after(async () => {
  await server.stop();
});

const names = async (query = '') => (await expectOk(await server.api(`${BASE}?${query}`))).results.map((d: any) => d.name);

test('list by name, with search (every word, case-insensitive)', async () => {
  assert.deepEqual(await names(), ['$pageview', 'Sign Up Completed', 'checkout_started', 'purchase', 'signup']);
  assert.deepEqual(await names('search=SIGN'), ['Sign Up Completed', 'signup']);
  assert.deepEqual(await names(`search=${encodeURIComponent('up sign')}`), ['Sign Up Completed', 'signup']);
  assert.deepEqual(await names(`search=${encodeURIComponent('_')}`), ['checkout_started']);
  const { results } = await walk(server, `${BASE}?limit=2`);
  assert.equal(results.length, 5);
  const first = results[0];
  assert.deepEqual(Object.keys(first).sort(), ['created_at', 'description', 'id', 'last_seen_at', 'name', 'tags']);
  await expectError(await server.api(`${BASE}?limit=0`), 400, 'invalid_input', 'limit');
});

test('retrieve, PATCH, DELETE then 404, and re-creation on ingest', async () => {
  const [signup] = (await expectOk(await server.api(`${BASE}?search=signup`))).results;
  const path = `${BASE}${signup.id}/`;
  assert.deepEqual(await expectOk(await server.api(path)), signup);

  await expectError(await server.api(path, { method: 'PATCH', body: { tags: 'x' } }), 400, 'invalid_input', 'tags');
  await expectError(await server.api(path, { method: 'PATCH', body: { description: 5 } }), 400, 'invalid_input', 'description');
  const updated = await expectOk(await server.api(path, { method: 'PATCH', body: { description: 'A new account', tags: ['growth'] } }));
  assert.equal(updated.description, 'A new account');
  assert.deepEqual(updated.tags, ['growth']);
  const cleared = await expectOk(await server.api(path, { method: 'PATCH', body: { description: null } }));
  assert.equal(cleared.description, null);
  assert.deepEqual(cleared.tags, ['growth']);

  const response = await server.api(path, { method: 'DELETE' });
  assert.equal(response.status, 204);
  assert.equal(await response.text(), '');
  await expectError(await server.api(path), 404, 'not_found');
  await expectError(await server.api(path, { method: 'PATCH', body: { tags: [] } }), 404, 'not_found');
  await ingest(server, [{ event: 'signup' }]);
  assert.deepEqual(await names('search=signup'), ['signup']);
});
