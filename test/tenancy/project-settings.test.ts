/**
 * The project settings the insights read: week_start_day and test_account_filters, through the
 * projects API (GET, PATCH, POST), with their validation.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { expectError, expectOk } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server.stop();
});

const patch = (body: unknown) => server.api('/api/projects/@current/', { method: 'PATCH', body });

test('a new project has week_start_day null and no test account filters', async () => {
  const project = await expectOk(await server.api('/api/projects/@current/'));
  assert.equal(project.week_start_day, null);
  assert.deepEqual(project.test_account_filters, []);
});

test('PATCH sets, keeps and clears the settings', async () => {
  const filters = [{ type: 'person', key: 'email', value: '@example.com', operator: 'not_icontains' }];
  let project = await expectOk(await patch({ week_start_day: 1, test_account_filters: filters }));
  assert.equal(project.week_start_day, 1);
  assert.deepEqual(project.test_account_filters, filters);
  // A PATCH of something else keeps both.
  project = await expectOk(await patch({ name: 'Renamed' }));
  assert.equal(project.week_start_day, 1);
  assert.deepEqual(project.test_account_filters, filters);
  project = await expectOk(await server.api('/api/projects/@current/'));
  assert.equal(project.week_start_day, 1);
  // null goes back to Sunday's default; [] removes the filters.
  project = await expectOk(await patch({ week_start_day: null, test_account_filters: [] }));
  assert.equal(project.week_start_day, null);
  assert.deepEqual(project.test_account_filters, []);
  project = await expectOk(await patch({ week_start_day: 0 }));
  assert.equal(project.week_start_day, 0);
});

test('bad values are 400s naming the field', async () => {
  await expectError(await patch({ week_start_day: 2 }), 400, 'invalid_choice', 'week_start_day');
  await expectError(await patch({ week_start_day: 'monday' }), 400, 'invalid_choice', 'week_start_day');
  await expectError(await patch({ test_account_filters: {} }), 400, 'not_a_list', 'test_account_filters');
  await expectError(await patch({ test_account_filters: ['x'] }), 400, 'invalid', 'test_account_filters');
  await expectError(await patch({ test_account_filters: [{ value: 1 }] }), 400, 'invalid', 'test_account_filters');
  await expectError(await patch({ test_account_filters: [{ key: 'a', type: 'nope' }] }), 400, 'invalid', 'test_account_filters');
  const project = await expectOk(await server.api('/api/projects/@current/'));
  assert.equal(project.week_start_day, 0);
});

test('a project created with settings keeps them', async () => {
  const project = await expectOk(
    await server.api('/api/projects/', { method: 'POST', body: { name: 'Weekly', week_start_day: 1, test_account_filters: [{ type: 'event', key: '$host', value: 'localhost', operator: 'is_not' }] } }),
    201,
  );
  assert.equal(project.week_start_day, 1);
  assert.equal(project.test_account_filters[0].key, '$host');
});
