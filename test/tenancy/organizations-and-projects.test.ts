/**
 * Two organizations with two users each: every endpoint asked across the boundary is 404.
 * Projects and organizations routes, @current aliases, and the token cache on changes.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { addUser, createTenant, expectError, expectOk, ingest, q, type Tenant } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let a: { organizationId: string; projectId: number; ownerKey: string; member: { uuid: string; key: string } };
let b: Tenant & { ownerUuid: string; member: { uuid: string; key: string } };
let bProperty: string;
let bEvent: string;

before(async () => {
  server = await startServer();
  const projects = await expectOk(await server.api('/api/projects/'));
  const first = projects.results[0];
  a = { organizationId: first.organization, projectId: first.id, ownerKey: server.personalKey, member: await addUser(server, first.organization, 'member@a.test', 1) };
  const tenant = await createTenant(server, 'beta');
  const bMembers = await expectOk(await server.api(`/api/organizations/${tenant.organizationId}/members/`, { key: tenant.ownerKey }));
  b = { ...tenant, ownerUuid: bMembers.results[0].user.uuid, member: await addUser(server, tenant.organizationId, 'member@b.test', 1) };

  await ingest(server, [{ event: 'a_event', properties: { a_prop: 1 } }]);
  await ingest(server, [{ event: 'b_event', properties: { b_prop: 'x' } }], b.projectKey);
  const defs = await expectOk(await server.api(`/api/projects/${b.projectId}/property_definitions/`, { key: b.ownerKey }));
  bProperty = defs.results.find((d: any) => d.name === 'b_prop').id;
  const events = await expectOk(await server.api(`/api/projects/${b.projectId}/event_definitions/`, { key: b.ownerKey }));
  bEvent = events.results.find((d: any) => d.name === 'b_event').id;
});
after(async () => {
  await server.stop();
});

test('lists show only what the key’s user belongs to', async () => {
  for (const [key, org, project] of [
    [a.ownerKey, a.organizationId, a.projectId],
    [a.member.key, a.organizationId, a.projectId],
    [b.ownerKey, b.organizationId, b.projectId],
    [b.member.key, b.organizationId, b.projectId],
  ] as const) {
    const orgs = await expectOk(await server.api('/api/organizations/', { key }));
    assert.deepEqual(orgs.results.map((o: any) => o.id), [org]);
    const projects = await expectOk(await server.api('/api/projects/', { key }));
    assert.deepEqual(projects.results.map((p: any) => p.id), [project]);
  }
  const current = await expectOk(await server.api('/api/organizations/@current/', { key: b.member.key }));
  assert.equal(current.id, b.organizationId);
  assert.equal(current.membership_level, 1);
  assert.deepEqual(current.projects.map((p: any) => p.id), [b.projectId]);
  const project = await expectOk(await server.api('/api/projects/@current/', { key: b.member.key }));
  assert.equal(project.id, b.projectId);
  assert.equal(project.api_token, b.projectKey);
});

test('every endpoint across the organization boundary is 404', async () => {
  const P = `/api/projects/${b.projectId}`;
  const O = `/api/organizations/${b.organizationId}`;
  const requests: [string, string, unknown?][] = [
    ['GET', `${P}/`],
    ['PATCH', `${P}/`, { name: 'hijacked' }],
    ['GET', `${P}/property_definitions/`],
    ['GET', `${P}/property_definitions/${bProperty}/`],
    ['PATCH', `${P}/property_definitions/${bProperty}/`, { tags: ['x'] }],
    ['DELETE', `${P}/property_definitions/${bProperty}/`],
    ['GET', `${P}/property_definitions/seen_together/?event_names=${q(['b_event'])}&property_name=b_prop`],
    ['GET', `${P}/event_definitions/`],
    ['GET', `${P}/event_definitions/${bEvent}/`],
    ['PATCH', `${P}/event_definitions/${bEvent}/`, { description: 'x' }],
    ['DELETE', `${P}/event_definitions/${bEvent}/`],
    ['GET', `${O}/`],
    ['GET', `${O}/members/`],
    ['POST', `${O}/members/`, { email: 'member@a.test', level: 1 }],
    ['PATCH', `${O}/members/${b.member.uuid}/`, { level: 8 }],
    ['DELETE', `${O}/members/${b.member.uuid}/`],
    ['GET', `${O}/invites/`],
    ['POST', `${O}/invites/`, { target_email: 'x@y.test' }],
    ['DELETE', `${O}/invites/00000000-0000-0000-0000-000000000000/`],
    // B's objects through A's own project and organization paths.
    ['GET', `/api/projects/${a.projectId}/property_definitions/${bProperty}/`],
    ['DELETE', `/api/projects/${a.projectId}/property_definitions/${bProperty}/`],
    ['GET', `/api/projects/${a.projectId}/event_definitions/${bEvent}/`],
    ['PATCH', `/api/organizations/${a.organizationId}/members/${b.ownerUuid}/`, { level: 1 }],
    ['DELETE', `/api/organizations/${a.organizationId}/members/${b.ownerUuid}/`],
    ['POST', '/api/projects/', { name: 'sneaky', organization: b.organizationId }],
  ];
  for (const key of [a.ownerKey, a.member.key]) {
    for (const [method, path, body] of requests) {
      const response = await server.api(path, { method, body, key });
      await expectError(response, 404, 'not_found');
    }
  }
  // Nothing changed on B's side.
  const project = await expectOk(await server.api(`${P}/`, { key: b.ownerKey }));
  assert.equal(project.name, 'beta project');
  await expectOk(await server.api(`${P}/property_definitions/${bProperty}/`, { key: b.ownerKey }));
  await expectOk(await server.api(`${P}/event_definitions/${bEvent}/`, { key: b.ownerKey }));
});

test('unknown and malformed ids are 404', async () => {
  for (const path of ['/api/projects/999999/', '/api/projects/abc/', '/api/organizations/nope/', '/api/projects/999999/property_definitions/']) {
    await expectError(await server.api(path), 404, 'not_found');
  }
});

test('POST /api/projects/: admins and owners only; the new token ingests at once', async () => {
  await expectError(await server.api('/api/projects/', { method: 'POST', body: { name: 'nope' }, key: a.member.key }), 403, 'permission_denied');
  await expectError(await server.api('/api/projects/', { method: 'POST', body: {} }), 400, 'invalid_input', 'name');
  await expectError(await server.api('/api/projects/', { method: 'POST', body: { name: 'tz', timezone: 'Mars/Olympus' } }), 400, 'invalid_choice', 'timezone');

  const created = await expectOk(await server.api('/api/projects/', { method: 'POST', body: { name: 'Second', timezone: 'Europe/Paris' } }), 201);
  assert.equal(created.organization, a.organizationId);
  assert.equal(created.timezone, 'Europe/Paris');
  assert.match(created.api_token, /^phc_/);
  assert.notEqual(created.api_token, server.projectKey);

  await ingest(server, [{ event: 'from_second', properties: { second_prop: true } }], created.api_token);
  const defs = await expectOk(await server.api(`/api/projects/${created.id}/property_definitions/?search=prop`));
  assert.deepEqual(defs.results.map((d: any) => d.name), ['second_prop']);
  const list = await expectOk(await server.api('/api/projects/'));
  assert.deepEqual(list.results.map((p: any) => p.id), [a.projectId, created.id]);
  // Members see it too, in their organization.
  await expectOk(await server.api(`/api/projects/${created.id}/`, { key: a.member.key }));
});

test('PATCH /api/projects/:id/ validates and applies settings', async () => {
  await expectError(await server.api(`/api/projects/${a.projectId}/`, { method: 'PATCH', body: { anonymize_ips: 'yes' } }), 400, 'invalid_input', 'anonymize_ips');
  await expectError(await server.api(`/api/projects/${a.projectId}/`, { method: 'PATCH', body: { name: '' } }), 400, 'invalid_input', 'name');
  const updated = await expectOk(await server.api('/api/projects/@current/', { method: 'PATCH', body: { name: 'Renamed', anonymize_ips: true } }));
  assert.equal(updated.name, 'Renamed');
  assert.equal(updated.anonymize_ips, true);
  assert.equal(updated.timezone, 'UTC');
  const again = await expectOk(await server.api(`/api/projects/${a.projectId}/`));
  assert.equal(again.name, 'Renamed');
  await expectOk(await server.api(`/api/projects/${a.projectId}/`, { method: 'PATCH', body: { anonymize_ips: false } }));
});
