/** What every /api/ route shares: the OpenAPI document, 405, error shapes, the rate limit. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { addUser, expectError, expectOk, ingest } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server.stop();
});

const ROUTES: Record<string, string[]> = {
  '/api/schema/': ['get'],
  '/api/personal_api_keys/': ['get', 'post'],
  '/api/personal_api_keys/{id}/': ['delete', 'get'],
  '/api/projects/': ['get', 'post'],
  '/api/projects/{id}/': ['get', 'patch'],
  '/api/organizations/': ['get'],
  '/api/organizations/{id}/': ['get'],
  '/api/organizations/{parent_lookup_organization_id}/members/': ['get', 'post'],
  '/api/organizations/{parent_lookup_organization_id}/members/{user__uuid}/': ['delete', 'patch'],
  '/api/organizations/{parent_lookup_organization_id}/invites/': ['get', 'post'],
  '/api/organizations/{parent_lookup_organization_id}/invites/{id}/': ['delete'],
  '/api/projects/{project_id}/property_definitions/': ['get'],
  '/api/projects/{project_id}/property_definitions/seen_together/': ['get'],
  '/api/projects/{project_id}/property_definitions/{id}/': ['delete', 'get', 'patch'],
  '/api/projects/{project_id}/event_definitions/': ['get'],
  '/api/projects/{project_id}/event_definitions/{id}/': ['delete', 'get', 'patch'],
};

test('GET /api/schema/ is an OpenAPI document of every /api/ route, from the route schemas', async () => {
  const doc = await expectOk(await server.api('/api/schema/', { key: null }));
  assert.match(doc.openapi, /^3\.1/);
  const documented = Object.fromEntries(Object.entries(doc.paths).map(([path, item]: [string, any]) => [path, Object.keys(item).filter((k) => k !== 'parameters').sort()]));
  for (const [path, methods] of Object.entries(ROUTES)) assert.deepEqual(documented[path], methods, path);
  assert.ok(Object.keys(documented).every((path) => path.startsWith('/api/')), 'capture routes are not part of it');
  assert.ok(doc.components.securitySchemes.PersonalApiKey);

  const list = doc.paths['/api/projects/{project_id}/property_definitions/'].get;
  const params = list.parameters.map((p: any) => `${p.in}:${p.name}`).sort();
  for (const name of ['event_names', 'excluded_properties', 'filter_by_event_names', 'group_type_index', 'is_feature_flag', 'is_numerical', 'limit', 'offset', 'properties', 'search', 'type']) {
    assert.ok(params.includes(`query:${name}`), name);
  }
  assert.ok(params.includes('path:project_id'));
  const ok = list.responses['200'].content['application/json'].schema;
  assert.deepEqual(Object.keys(ok.properties).sort(), ['count', 'next', 'previous', 'results']);
  assert.ok(list.responses['404'] && list.responses['403'] && list.responses['401']);
  assert.ok(doc.paths['/api/projects/{project_id}/property_definitions/{id}/'].patch.requestBody);
  assert.ok(doc.paths['/api/projects/{project_id}/property_definitions/{id}/'].delete.responses['204']);
});

test('a known path with a wrong method is 405 with Allow; unknown /api/ paths are 404', async () => {
  for (const [method, path] of [
    ['PUT', '/api/projects/1/property_definitions/'],
    ['DELETE', '/api/organizations/'],
    ['POST', '/api/projects/1/property_definitions/00000000-0000-0000-0000-000000000000/'],
    ['POST', '/api/projects/1/property_definitions/seen_together'],
  ]) {
    const response = await server.api(path, { method, body: method === 'DELETE' ? undefined : {} });
    await expectError(response, 405, 'method_not_allowed', null);
    assert.ok(response.headers.get('allow'), `${method} ${path}`);
  }
  const body = await expectError(await server.api('/api/organizations/', { method: 'DELETE' }), 405, 'method_not_allowed');
  assert.equal(body.type, 'invalid_request');
  await expectError(await server.api('/api/no_such_thing/'), 404, 'not_found');
});

test('malformed JSON bodies are 400, never 500', async () => {
  const path = '/api/projects/@current/';
  for (const body of ['{', '{"name": }', 'null', '"text"', '[]']) {
    const response = await server.api(path, { method: 'PATCH', body });
    assert.equal(response.status, 400, body);
    assert.equal((await response.json()).type, 'validation_error');
  }
  const wrongType = await server.api(path, { method: 'PATCH', body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  assert.ok(wrongType.status >= 400 && wrongType.status < 500);
});

test('a DELETE sent with Content-Type: application/json and no body deletes (204); POST and PATCH need a body', async () => {
  // Many HTTP clients set the JSON content type on every request, body or not.
  const empty = (path: string, method: string) => server.api(path, { method, body: '', headers: { 'content-type': 'application/json' } });
  const org = (await expectOk(await server.api('/api/organizations/@current/'))).id;
  const member = await addUser(server, org, 'empty-body@a.test', 1);
  await ingest(server, [{ event: 'empty-body-event', properties: { empty_body_property: 1 } }]);
  const definitions = await expectOk(await server.api('/api/projects/@current/property_definitions/?search=empty_body_property'));
  const definition = definitions.results[0].id;
  const flag = (await expectOk(await server.api('/api/projects/@current/feature_flags/', { method: 'POST', body: { key: 'empty-body-flag' } }), 201)).id;

  await expectError(await empty(`/api/projects/@current/property_definitions/${definition}/`, 'PATCH'), 400, 'invalid_input');
  await expectError(await empty('/api/projects/@current/feature_flags/', 'POST'), 400, 'invalid_input');
  for (const path of [
    `/api/organizations/${org}/members/${member.uuid}/`,
    `/api/projects/@current/property_definitions/${definition}/`,
    `/api/projects/@current/feature_flags/${flag}/`,
  ]) {
    const response = await empty(path, 'DELETE');
    assert.equal(response.status, 204, `${path}: ${await response.text()}`);
  }
  await expectError(await server.api(`/api/projects/@current/property_definitions/${definition}/`), 404, 'not_found');
  await expectError(await server.api(`/api/projects/@current/feature_flags/${flag}/`), 404, 'not_found');
  const members = await expectOk(await server.api(`/api/organizations/${org}/members/`));
  assert.ok(!members.results.some((m: any) => m.user.uuid === member.uuid), 'the member is gone');
});

test('uuids in paths match in upper case too (stored ones are lower case)', async () => {
  const org = (await expectOk(await server.api('/api/organizations/@current/'))).id as string;
  assert.equal((await expectOk(await server.api(`/api/organizations/${org.toUpperCase()}/`))).id, org);
  const member = await addUser(server, org, 'upper-case@a.test', 1);
  const patched = await expectOk(await server.api(`/api/organizations/${org.toUpperCase()}/members/${member.uuid.toUpperCase()}/`, { method: 'PATCH', body: { level: 8 } }));
  assert.equal(patched.level, 8);
  await ingest(server, [{ event: 'upper-case-event', properties: { upper_case_property: 1 } }]);
  const definition = (await expectOk(await server.api('/api/projects/@current/property_definitions/?search=upper_case_property'))).results[0];
  assert.equal((await expectOk(await server.api(`/api/projects/@current/property_definitions/${definition.id.toUpperCase()}/`))).id, definition.id);
});

test('rate limit per key: 429 throttled with Retry-After, other keys unaffected', async () => {
  const limited = await startServer({ env: { SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '5' } });
  try {
    const org = (await expectOk(await limited.api('/api/organizations/@current/'))).id;
    const other = await addUser(limited, org, 'other@a.test', 1);
    for (let i = 1; i < 5; i++) await expectOk(await limited.api('/api/projects/'));
    const response = await limited.api('/api/projects/');
    const body = await expectError(response, 429, 'throttled', null);
    assert.equal(body.type, 'throttled_error');
    const retryAfter = Number(response.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, String(retryAfter));
    assert.equal(body.detail, `Request was throttled. Expected available in ${retryAfter} seconds.`);
    await expectOk(await limited.api('/api/projects/', { key: other.key }));
    // Unauthenticated requests are not counted against anyone; they fail authentication.
    await expectError(await limited.api('/api/projects/', { key: null }), 401, 'invalid_personal_api_key');
    // Capture is not rate limited by this.
    assert.equal((await limited.post('/batch/', { api_key: limited.projectKey, batch: [{ event: 'x', distinct_id: 'd' }] })).status, 200);
  } finally {
    await limited.stop();
  }
});
