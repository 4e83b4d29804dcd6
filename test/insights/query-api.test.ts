import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { createTenant, expectError } from '../helpers/api-fixtures.js';

describe('the query API', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server?.stop();
  });

  const query = (body: unknown, path = `/api/projects/@current/query/`, key?: string) => server.api(path, { method: 'POST', body, ...(key && { key }) });

  test('an unknown or missing kind is a 400 naming query.kind', async () => {
    await expectError(await query({ query: { kind: 'NoSuchQuery' } }), 400, 'invalid_choice', 'query.kind');
    await expectError(await query({ query: {} }), 400, 'required', 'query.kind');
  });

  test('a body without query, or with a bad refresh, is a 400', async () => {
    await expectError(await query({}), 400, 'required', 'query');
    await expectError(await query({ query: { kind: 'HogQLQuery' }, refresh: 'sometimes' }), 400, 'invalid_choice', 'refresh');
  });

  test('a kind in the path that is no query kind is a 404', async () => {
    await expectError(await query({ query: { kind: 'NoSuchQuery' } }, `/api/environments/@current/query/NoSuchQuery/`), 404, 'not_found', null);
  });

  test('another organization’s project is a 404, and no key is a 401', async () => {
    const other = await createTenant(server, 'otherorg');
    await expectError(await query({ query: { kind: 'HogQLQuery' } }, `/api/projects/${other.projectId}/query/`), 404, 'not_found', null);
    await expectError(await query({ query: { kind: 'HogQLQuery' } }, `/api/projects/@current/query/`, 'phx_not_a_key'), 401, 'invalid_personal_api_key', undefined);
  });
});
