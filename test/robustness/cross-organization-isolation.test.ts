/**
 * Isolation. Two organizations on one server (the second made by `sightline init`
 * while it runs). Every operation of /api/schema/ is tried with each organization's keys
 * against the other's objects (404, and nothing changes), and every GET of one's own objects
 * is checked for the other's data; project keys are never accepted on /api/; a read-only key
 * gets 403 on every write and a plain member 403 on every admin-only one; and no key ever
 * reaches the logs, whatever happened to the request that carried it.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';

import { SCOPE_OBJECTS } from '../../src/http/scopes.js';
import { addUser, createTenant } from '../helpers/api-fixtures.js';
import { apiOperations, assertSpecReply, collectionOf, fillPath, minimalBody, request, withQuery, type ApiOperation, type Reply } from '../helpers/robustness.js';
import { startServer, type TestServer } from '../helpers/server.js';

interface Org {
  name: string;
  organizationId: string;
  projectId: number;
  projectKey: string;
  ownerKey: string;
  ownerUuid: string;
  member: { uuid: string; key: string };
  /** Collection name (as in the URL) → one object of this organization. */
  ids: Record<string, string>;
  /** Text only this organization's data contains. */
  markers: string[];
}

let server: TestServer;
let operations: ApiOperation[];
let a: Org;
let b: Org;
/** Where the server's output starts being logs: the first-start banner before it prints the bootstrap keys on purpose. */
let logsFrom = 0;
/** Every key that exists on this server: none may ever appear in its output. */
const secrets: string[] = [];

async function call(method: string, path: string, key: string | null, body?: unknown): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return request(server, method, path, { headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

async function ok(method: string, path: string, key: string, body?: unknown): Promise<any> {
  const reply = await call(method, path, key, body);
  assert.ok(reply.status < 300, `${method} ${path} → ${reply.status} ${reply.text}`);
  return reply.json;
}

/** Fills an organization with one object of every kind, each named so that it can be recognised. */
async function populate(org: Omit<Org, 'ids' | 'markers' | 'member' | 'ownerUuid'>): Promise<Org> {
  const tag = `${org.name}${randomBytes(3).toString('hex')}`;
  const event = `${tag}_secret_event`;
  const property = `${tag}_secret_prop`;
  const batch = Array.from({ length: 3 }, (_, i) => ({ event, distinct_id: `${tag}_person_${i}`, properties: { [property]: i, $set: { email: `${tag}@${org.name}.test` } } }));
  const ingested = await request(server, 'POST', '/batch/', { body: JSON.stringify({ api_key: org.projectKey, batch }), headers: { 'content-type': 'application/json' } });
  assert.equal(ingested.status, 200, ingested.text);
  const P = `/api/projects/${org.projectId}`;
  const flag = await ok('POST', `${P}/feature_flags/`, org.ownerKey, { key: `${tag}-secret-flag`, filters: { groups: [{ rollout_percentage: 100 }] } });
  const dashboard = await ok('POST', `${P}/dashboards/`, org.ownerKey, { name: `${tag}-secret-dashboard` });
  const insight = await ok('POST', `${P}/insights/`, org.ownerKey, {
    name: `${tag}-secret-insight`,
    query: { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event }] } },
    dashboards: [dashboard.id],
  });
  const invite = await ok('POST', `/api/organizations/${org.organizationId}/invites/`, org.ownerKey, { target_email: `${tag}-invite@${org.name}.test` });
  const spareKey = await ok('POST', '/api/personal_api_keys/', org.ownerKey, { label: `${tag}-spare` });
  secrets.push(spareKey.value);
  const member = await addUser(server, org.organizationId, `${tag}-member@${org.name}.test`, 1);
  secrets.push(member.key);
  const members = await ok('GET', `/api/organizations/${org.organizationId}/members/`, org.ownerKey);
  const owner = members.results.find((m: any) => m.level === 15);
  const definition = (await ok('GET', `${P}/property_definitions/?search=${property}`, org.ownerKey)).results[0];
  const eventDefinition = (await ok('GET', `${P}/event_definitions/?search=${event}`, org.ownerKey)).results[0];
  const stored = (await ok('GET', `${P}/events/?event=${event}`, org.ownerKey)).results[0];
  const person = (await ok('GET', `${P}/persons/?distinct_id=${tag}_person_0`, org.ownerKey)).results[0];
  const cohort = await ok('POST', `${P}/cohorts/`, org.ownerKey, { name: `${tag}-secret-cohort`, is_static: true, csv: `${tag}_person_0\n` });
  assert.ok(definition && eventDefinition && stored && person, `${org.name}: fixtures were not all created`);
  return {
    ...org,
    ownerUuid: owner.user.uuid,
    member,
    ids: {
      projects: String(org.projectId),
      // PostHog serves some project routes under /api/environments/:id/ too (the same project).
      environments: String(org.projectId),
      organizations: org.organizationId,
      members: owner.user.uuid,
      invites: invite.id,
      personal_api_keys: spareKey.id,
      property_definitions: definition.id,
      event_definitions: eventDefinition.id,
      events: stored.id,
      feature_flags: String(flag.id),
      persons: String(person.id),
      insights: String(insight.id),
      dashboards: String(dashboard.id),
      cohorts: String(cohort.id),
    },
    markers: [org.organizationId, org.projectKey, event, property, `${tag}-secret-flag`, `${tag}-invite`, `${tag}-member`, `${tag}_person_`, spareKey.id, flag.key, `${tag}-secret-insight`, `${tag}-secret-dashboard`, `${tag}-secret-cohort`],
  };
}

before(async () => {
  // trace: every log line the service can write is written, so the key check below sees them all.
  server = await startServer({ env: { SIGHTLINE_LOG_LEVEL: 'trace', SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', SIGHTLINE_GEOIP: 'false' } });
  logsFrom = server.output().indexOf('accepting traffic');
  assert.ok(logsFrom > 0);
  const current = await request(server, 'GET', '/api/projects/@current/', { headers: { authorization: `Bearer ${server.personalKey}` } });
  const second = await createTenant(server, 'beta');
  a = await populate({ name: 'alpha', organizationId: current.json.organization, projectId: current.json.id, projectKey: server.projectKey, ownerKey: server.personalKey });
  b = await populate({ name: 'beta', ...second });
  secrets.push(a.projectKey, a.ownerKey, b.projectKey, b.ownerKey);
  operations = (await apiOperations(server)).filter((op) => !op.public);
  assert.ok(operations.length >= 20, `only ${operations.length} authenticated operations in /api/schema/`);
});

after(async () => {
  if (server) assert.equal(await server.stop(), 0);
});

const label = (op: ApiOperation) => `${op.method} ${op.path}`;
const writes = () => operations.filter((op) => op.method !== 'GET' && !op.scopes.every((scope) => scope.endsWith(':read')));

/** Path values: parents from `parents`, the last parameter from `leaf` (same org unless mixing). */
function pathFor(op: ApiOperation, parents: Org, leaf: Org): string {
  const values: Record<string, string> = {};
  op.pathParams.forEach((name, i) => {
    const org = i === op.pathParams.length - 1 ? leaf : parents;
    values[name] = org.ids[collectionOf(op.path, name)] ?? '1';
  });
  return fillPath(op.path, values);
}

/** The request an operation takes against `target`'s objects: path ids, token, organization field. */
function attempt(op: ApiOperation, parents: Org, leaf: Org): { path: string; body?: unknown } {
  const path = withQuery(pathFor(op, parents, leaf), op, op.queryParams.includes('token') ? { token: leaf.projectKey } : {});
  const body = op.method === 'GET' || op.method === 'DELETE' ? undefined : minimalBody(op.bodySchema, op.bodySchema?.properties?.organization ? { organization: leaf.organizationId } : {});
  return { path, body };
}

describe('across the organization boundary', () => {
  for (const [from, to] of [
    ['alpha', 'beta'],
    ['beta', 'alpha'],
  ] as const) {
    test(`${from}'s owner and member keys on every operation against ${to}'s objects → 404, nothing changes`, async () => {
      const [mine, theirs] = from === 'alpha' ? [a, b] : [b, a];
      const tried: string[] = [];
      for (const op of operations) {
        const crossesBoundary = op.pathParams.length > 0 || op.queryParams.includes('token') || Boolean(op.bodySchema?.properties?.organization);
        if (!crossesBoundary) continue;
        const variants = [attempt(op, theirs, theirs)];
        // Their object under my own parent: /api/projects/<mine>/feature_flags/<theirs>/.
        if (op.pathParams.length > 1) variants.push(attempt(op, mine, theirs));
        for (const key of [mine.ownerKey, mine.member.key]) {
          for (const [index, { path, body }] of variants.entries()) {
            const reply = await call(op.method, path, key, body);
            assertSpecReply(reply, `${label(op)} as ${from}`);
            // Another organization's project is a 404 whether a path names it by id or a query
            // by token — except that in its own organization a plain member is refused
            // admin-only writes before any id is looked at, which tells nothing about the other.
            const memberInOwnOrg = index === 1 && key === mine.member.key && reply.json?.code === 'permission_denied';
            const allowed = memberInOwnOrg ? [403, 404] : [404];
            assert.ok(allowed.includes(reply.status), `${op.method} ${path} as ${from} → ${reply.status} ${reply.text.slice(0, 200)}`);
            for (const marker of theirs.markers) assert.ok(!reply.text.includes(marker), `${op.method} ${path} leaked ${marker}`);
            tried.push(`${op.method} ${path}`);
          }
        }
      }
      assert.ok(tried.length >= 40, `only ${tried.length} cross-organization attempts`);
      await assertIntact(theirs);
    });
  }

  test('reads of one organization never show the other organization’s data', async () => {
    for (const [mine, theirs] of [
      [a, b],
      [b, a],
    ]) {
      for (const op of operations.filter((o) => o.method === 'GET')) {
        for (const key of [mine.ownerKey, mine.member.key]) {
          const reply = await call('GET', withQuery(pathFor(op, mine, mine), op), key);
          assertSpecReply(reply, `${label(op)} of ${mine.name}`);
          // 400 validation_error: a parameter this generic call does not know it must send.
          assert.ok([200, 304, 404].includes(reply.status) || reply.json?.type === 'validation_error', `${label(op)} of ${mine.name} → ${reply.status} ${reply.text}`);
          for (const marker of theirs.markers) assert.ok(!reply.text.includes(marker), `${label(op)} as ${mine.name} shows ${marker}`);
        }
      }
      // Events and flags of each project stay in it on the public surface too.
      const decide = await request(server, 'POST', '/decide?v=3', { body: JSON.stringify({ api_key: mine.projectKey, distinct_id: 'x' }), headers: { 'content-type': 'application/json' } });
      for (const marker of theirs.markers) assert.ok(!decide.text.includes(marker), `/decide of ${mine.name} shows ${marker}`);
    }
  });
});

/** Every object of `org` is still there and unchanged, and its keys still work. */
async function assertIntact(org: Org): Promise<void> {
  const P = `/api/projects/${org.projectId}`;
  const project = await ok('GET', `${P}/`, org.ownerKey);
  assert.equal(project.api_token, org.projectKey);
  const flag = await ok('GET', `${P}/feature_flags/${org.ids.feature_flags}/`, org.ownerKey);
  assert.equal(flag.deleted, false);
  const insight = await ok('GET', `${P}/insights/${org.ids.insights}/`, org.ownerKey);
  assert.equal(insight.deleted, false);
  const dashboard = await ok('GET', `${P}/dashboards/${org.ids.dashboards}/`, org.ownerKey);
  assert.equal(dashboard.deleted, false);
  assert.deepEqual(dashboard.tiles.map((tile: any) => tile.insight.id), [insight.id]);
  await ok('GET', `${P}/property_definitions/${org.ids.property_definitions}/`, org.ownerKey);
  await ok('GET', `${P}/event_definitions/${org.ids.event_definitions}/`, org.ownerKey);
  await ok('GET', `${P}/events/${org.ids.events}/`, org.ownerKey);
  await ok('GET', `/api/personal_api_keys/${org.ids.personal_api_keys}/`, org.ownerKey);
  const members = await ok('GET', `/api/organizations/${org.organizationId}/members/`, org.ownerKey);
  assert.deepEqual(members.results.map((m: any) => [m.user.uuid, m.level]).sort(), [[org.ownerUuid, 15], [org.member.uuid, 1]].sort());
  const invites = await ok('GET', `/api/organizations/${org.organizationId}/invites/`, org.ownerKey);
  assert.ok(invites.results.some((i: any) => i.id === org.ids.invites), 'invite still pending');
  await ok('GET', `${P}/`, org.member.key);
}

test('project API keys (phc_…) are never accepted on /api/: 401 on every operation, header or query', async () => {
  for (const op of operations) {
    const path = pathFor(op, a, a);
    const body = op.method === 'GET' || op.method === 'DELETE' ? undefined : minimalBody(op.bodySchema);
    for (const reply of [
      await call(op.method, path, a.projectKey, body),
      await call(op.method, `${path}${path.includes('?') ? '&' : '?'}personal_api_key=${a.projectKey}`, null, body),
    ]) {
      assertSpecReply(reply, label(op));
      assert.equal(reply.status, 401, `${label(op)} with a project key → ${reply.status} ${reply.text}`);
      assert.equal(reply.json.code, 'invalid_personal_api_key');
    }
  }
  const definitions = await request(server, 'GET', `/flags/definitions?token=${a.projectKey}`, { headers: { authorization: `Bearer ${a.projectKey}` } });
  assert.equal(definitions.status, 401);
  await assertIntact(a);
});

test('a read-only key gets 403 on every write (POST, PATCH and DELETE but the query API’s reads); its reads work', async () => {
  const created = await ok('POST', '/api/personal_api_keys/', a.ownerKey, { label: 'read-only', scopes: SCOPE_OBJECTS.map((object) => `${object}:read`) });
  const readOnly: string = created.value;
  secrets.push(readOnly);
  assert.ok(writes().length >= 10, `only ${writes().length} write operations`);
  for (const op of writes()) {
    const { path, body } = attempt(op, a, a);
    const reply = await call(op.method, path, readOnly, body);
    assertSpecReply(reply, label(op));
    assert.equal(reply.status, 403, `${label(op)} with a read-only key → ${reply.status} ${reply.text}`);
    assert.equal(reply.json.code, 'permission_denied');
  }
  for (const op of operations.filter((o) => o.method === 'GET')) {
    const reply = await call('GET', withQuery(pathFor(op, a, a), op), readOnly);
    assert.notEqual(reply.status, 403, `${label(op)} with a read-only key → 403 ${reply.text}`);
    assert.ok([200, 304, 404].includes(reply.status) || reply.json?.type === 'validation_error', `${label(op)} → ${reply.status} ${reply.text}`);
  }
  // A key scoped to unrelated objects is refused everything the operations touch.
  const unrelated = (await ok('POST', '/api/personal_api_keys/', a.ownerKey, { label: 'surveys', scopes: ['survey:write'] })).value as string;
  secrets.push(unrelated);
  for (const op of operations) {
    const { path, body } = attempt(op, a, a);
    const reply = await call(op.method, path, unrelated, body);
    assert.equal(reply.status, 403, `${label(op)} with a survey-only key → ${reply.status} ${reply.text}`);
  }
  await assertIntact(a);
});

test('a plain member (level 1) gets 403 on every admin-only write: members, invites, new projects', async () => {
  // Admin-only: every write under /api/organizations/ that acts on someone else, and creating projects.
  const adminOnly = writes().filter((op) => op.path.startsWith('/api/organizations/') || (op.method === 'POST' && op.path === '/api/projects/'));
  assert.ok(adminOnly.length >= 5, `only ${adminOnly.length} admin-only operations`);
  for (const op of adminOnly) {
    const { path, body } = attempt(op, a, a);
    const reply = await call(op.method, path, a.member.key, body);
    assertSpecReply(reply, label(op));
    assert.equal(reply.status, 403, `${label(op)} by a member → ${reply.status} ${reply.text}`);
    assert.equal(reply.json.code, 'permission_denied');
  }
  await assertIntact(a);
});

test('no personal or project key ever appears in the server output, whatever happened to its request', async () => {
  const fakeKey = `phx_${randomBytes(16).toString('hex')}`;
  const fakeProject = `phc_${randomBytes(16).toString('hex')}`;
  secrets.push(fakeKey, fakeProject);
  const json = { 'content-type': 'application/json' };
  // Failed requests carrying keys in every place a client may put one.
  for (const key of secrets) {
    await request(server, 'GET', `/api/projects/@current/?personal_api_key=${key}`);
    await request(server, 'GET', `/api/projects/${key}/`, { headers: { authorization: `Bearer ${key}` } });
    await request(server, 'DELETE', `/api/projects/@current/`, { headers: { authorization: `Bearer ${key}` } });
    await request(server, 'POST', '/api/projects/', { headers: { authorization: `Bearer ${key}`, ...json }, body: `{"name":${JSON.stringify(key)},` });
    await request(server, 'POST', '/capture/', { headers: json, body: JSON.stringify({ api_key: key, event: 'e', distinct_id: key, properties: { token: key } }) });
    await request(server, 'POST', '/capture/', { headers: json, body: `{"api_key":"${key}","event":` });
    await request(server, 'POST', '/batch/', { headers: { 'content-encoding': 'gzip' }, body: gzipSync(JSON.stringify({ api_key: key, batch: [{ event: key }] })).subarray(0, 20) });
    await request(server, 'POST', `/decide?v=3&token=${key}`, { headers: json, body: JSON.stringify({ api_key: key, distinct_id: key }) });
    await request(server, 'GET', `/flags/definitions?token=${key}`, { headers: { authorization: `Bearer ${key}` } });
    await request(server, 'GET', `/array/${key}/config`);
    await request(server, 'GET', `/api/feature_flag/local_evaluation?token=${key}&personal_api_key=${key}`);
  }
  // Let the group commit of the captures above finish and its log lines reach the pipe.
  await request(server, 'GET', '/_health');
  await new Promise((resolve) => setTimeout(resolve, 200));
  const output = server.output().slice(logsFrom);
  assert.ok(output.length > 0);
  for (const secret of secrets) {
    assert.ok(!output.includes(secret), `key ${secret.slice(0, 8)}… appears in the server output`);
    // Nor its distinctive tail (a truncated or re-encoded key is a leak too).
    assert.ok(!output.includes(secret.slice(-16)), `the tail of key ${secret.slice(0, 8)}… appears in the server output`);
  }
});
