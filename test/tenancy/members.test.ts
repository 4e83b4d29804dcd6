/** Organization members (docs/api.md, "Organization members"): list, level rules, removal, add, invites. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { addUser, createTenant, expectError, expectOk, walk } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

type Person = { uuid: string; key: string };
let server: TestServer;
let org: string;
let owner: Person;
let owner2: Person;
let admin: Person;
let admin2: Person;
let member: Person;
let member2: Person;

before(async () => {
  server = await startServer();
  const current = await expectOk(await server.api('/api/organizations/@current/'));
  org = current.id;
  const me = await expectOk(await server.api(`/api/organizations/${org}/members/`));
  owner = { uuid: me.results[0].user.uuid, key: server.personalKey };
  owner2 = await addUser(server, org, 'owner2@a.test', 15);
  admin = await addUser(server, org, 'admin@a.test', 8);
  admin2 = await addUser(server, org, 'admin2@a.test', 8);
  member = await addUser(server, org, 'member@a.test', 1);
  member2 = await addUser(server, org, 'member2@a.test', 1);
});
after(async () => {
  await server.stop();
});

const members = (path = '') => `/api/organizations/${org}/members/${path}`;
const setLevel = (actor: Person, target: Person | '@me', level: unknown) =>
  server.api(members(`${target === '@me' ? '@me' : target.uuid}/`), { method: 'PATCH', body: { level }, key: actor.key });
const remove = (actor: Person, target: Person | '@me') =>
  server.api(members(`${target === '@me' ? '@me' : target.uuid}/`), { method: 'DELETE', key: actor.key });

test('the list carries every member field, newest first, paginated', async () => {
  const page = await expectOk(await server.api(members()));
  assert.equal(page.count, 6);
  const first = page.results[0];
  assert.deepEqual(Object.keys(first).sort(), ['has_social_auth', 'id', 'is_2fa_enabled', 'joined_at', 'level', 'updated_at', 'user']);
  assert.deepEqual(Object.keys(first.user).sort(), ['distinct_id', 'email', 'first_name', 'id', 'is_email_verified', 'last_name', 'uuid']);
  assert.equal(first.user.email, 'member2@a.test');
  assert.equal(first.level, 1);
  assert.ok(!Number.isNaN(Date.parse(first.joined_at)));
  const { results, pages } = await walk(server, `/api/organizations/${org}/members/?limit=4`);
  assert.equal(pages.length, 2);
  assert.equal(new Set(results.map((m: any) => m.id)).size, 6);
  // Any member may read the list.
  await expectOk(await server.api(members(), { key: member.key }));
});

test('members cannot change levels; nobody changes their own', async () => {
  await expectError(await setLevel(member, member2, 8), 403, 'permission_denied');
  await expectError(await setLevel(member, member2, 1), 403, 'permission_denied');
  await expectError(await setLevel(member, '@me', 8), 403, 'permission_denied');
  await expectError(await setLevel(owner, '@me', 8), 403, 'permission_denied');
  await expectError(await setLevel(admin, admin, 1), 403, 'permission_denied');
});

test('only an owner grants owner; nothing above your own level; admins cannot touch owners', async () => {
  const adminGrantsOwner = await expectError(await setLevel(admin, member, 15), 403, 'permission_denied');
  assert.match(adminGrantsOwner.detail, /owner/);
  await expectError(await setLevel(admin, owner2, 8), 403, 'permission_denied');
  await expectError(await setLevel(admin, owner2, 1), 403, 'permission_denied');

  const promoted = await expectOk(await setLevel(admin, member, 8));
  assert.equal(promoted.level, 8);
  assert.equal(promoted.user.uuid, member.uuid);
  assert.ok(promoted.updated_at >= promoted.joined_at);
  const demoted = await expectOk(await setLevel(admin, member, 1));
  assert.equal(demoted.level, 1);

  const madeOwner = await expectOk(await setLevel(owner, member2, 15));
  assert.equal(madeOwner.level, 15);
  // The granting owner stays owner; owners may demote other owners.
  const list = await expectOk(await server.api(members()));
  assert.equal(list.results.filter((m: any) => m.level === 15).length, 3);
  assert.equal((await expectOk(await setLevel(owner, member2, 1))).level, 1);
});

test('invalid levels are 400 with attr "level"', async () => {
  for (const level of [0, 2, 9, 16, 'admin', null, 8.5]) {
    await expectError(await setLevel(owner, member, level), 400, 'invalid_input', 'level');
  }
  await expectError(await server.api(members(`${member.uuid}/`), { method: 'PATCH', body: {} }), 400, 'invalid_input', 'level');
  await expectError(await server.api(members(`${member.uuid}/`), { method: 'PATCH', body: '{"level": ' }), 400, 'parse_error');
  await expectError(await setLevel(owner, { uuid: '00000000-0000-0000-0000-000000000000', key: '' }, 8), 404, 'not_found');
});

test('owners cannot be removed and cannot leave; members cannot remove others', async () => {
  await expectError(await remove(owner, owner2), 400, 'invalid_input');
  await expectError(await remove(owner2, '@me'), 400, 'invalid_input');
  await expectError(await remove(admin, owner), 403, 'permission_denied');
  await expectError(await remove(member, member2), 403, 'permission_denied');
  const list = await expectOk(await server.api(members()));
  assert.equal(list.count, 6);
});

test('DELETE → 204, and the removed user’s keys stop working for the organization', async () => {
  const extra = await addUser(server, org, 'leaving@a.test', 1);
  const project = (await expectOk(await server.api('/api/projects/@current/', { key: extra.key }))).id;
  const response = await remove(admin, extra);
  assert.equal(response.status, 204);
  assert.equal(await response.text(), '');
  await expectError(await server.api(`/api/organizations/${org}/`, { key: extra.key }), 404, 'not_found');
  await expectError(await server.api(`/api/projects/${project}/`, { key: extra.key }), 404, 'not_found');
  await expectError(await server.api(members(), { key: extra.key }), 404, 'not_found');
  assert.equal((await expectOk(await server.api('/api/organizations/', { key: extra.key }))).count, 0);
  await expectError(await remove(admin, extra), 404, 'not_found');

  // Leaving on one's own.
  const leaver = await addUser(server, org, 'leaver@a.test', 8);
  assert.equal((await remove(leaver, '@me')).status, 204);
  await expectError(await server.api(members(), { key: leaver.key }), 404, 'not_found');
});

test('admins add existing users by e-mail with the same level rules', async () => {
  const other = await createTenant(server, 'gamma');
  const email = 'owner@gamma.test';
  const add = (actor: Person, body: unknown) => server.api(members(), { method: 'POST', body, key: actor.key });
  await expectError(await add(member, { email, level: 1 }), 403, 'permission_denied');
  await expectError(await add(admin, { email, level: 15 }), 403, 'permission_denied');
  await expectError(await add(admin, { email: 'nobody@nowhere.test', level: 1 }), 400, 'invalid_input', 'email');
  await expectError(await add(admin, { email: 'not-an-email', level: 1 }), 400, 'invalid_input', 'email');
  await expectError(await add(admin, { email, level: 3 }), 400, 'invalid_input', 'level');

  const added = await expectOk(await add(admin, { email, level: 8 }), 201);
  assert.equal(added.level, 8);
  assert.equal(added.user.email, email);
  await expectError(await add(admin, { email, level: 1 }), 400, 'unique', 'email');
  // Their key now sees both organizations.
  const orgs = await expectOk(await server.api('/api/organizations/', { key: other.ownerKey }));
  assert.deepEqual(orgs.results.map((o: any) => o.id).sort(), [org, other.organizationId].sort());
});

test('invites: admins create, list and cancel; an invite sets the default level when the user is added', async () => {
  const invites = `/api/organizations/${org}/invites/`;
  await expectError(await server.api(invites, { method: 'POST', body: { target_email: 'x@a.test' }, key: member.key }), 403, 'permission_denied');
  await expectError(await server.api(invites, { method: 'POST', body: { target_email: 'x@a.test', level: 15 }, key: admin.key }), 403, 'permission_denied');
  await expectError(await server.api(invites, { method: 'POST', body: { target_email: 'member@a.test' }, key: admin.key }), 400, 'unique', 'target_email');
  await expectError(await server.api(invites, { method: 'POST', body: { target_email: 'nope' }, key: admin.key }), 400, 'invalid_input', 'target_email');

  const invite = await expectOk(await server.api(invites, { method: 'POST', body: { target_email: 'x@a.test' }, key: admin.key }), 201);
  assert.equal(invite.level, 1);
  assert.equal(invite.is_expired, false);
  const listed = await expectOk(await server.api(invites, { key: member.key }));
  assert.deepEqual(listed.results.map((i: any) => i.id), [invite.id]);
  await expectError(await server.api(`${invites}${invite.id}/`, { method: 'DELETE', key: member.key }), 403, 'permission_denied');
  assert.equal((await server.api(`${invites}${invite.id}/`, { method: 'DELETE', key: admin.key })).status, 204);
  assert.equal((await expectOk(await server.api(invites))).count, 0);

  const other = await createTenant(server, 'delta');
  await expectOk(await server.api(invites, { method: 'POST', body: { target_email: 'OWNER@delta.test', level: 8 }, key: admin.key }), 201);
  const added = await expectOk(await server.api(members(), { method: 'POST', body: { email: 'owner@delta.test' }, key: admin.key }), 201);
  assert.equal(added.level, 8);
  assert.equal((await expectOk(await server.api(invites))).count, 0, 'the invite was redeemed');
  await expectOk(await server.api(`/api/organizations/${org}/`, { key: other.ownerKey }));
});
