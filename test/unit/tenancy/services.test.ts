/**
 * The tenancy services' rules on an in-memory store: who may add, promote, remove and invite
 * members (rules.ts applied), projects created only by admins and invalidating the token
 * cache, and personal keys limited per user, scoped by their creator, revoked only by their owner.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Principal } from '../../../src/http/auth.js';
import { ApiError } from '../../../src/kernel/errors.js';
import type { MembershipLevel } from '../../../src/store/types.js';
import { Memberships } from '../../../src/tenancy/members/service.js';
import { PersonalKeys } from '../../../src/tenancy/personal-keys/service.js';
import { Projects } from '../../../src/tenancy/projects/service.js';
import { FakeTenancyStore } from '../../fakes/tenancy-store.js';

async function organizationWith(levels: MembershipLevel[]) {
  const tenancy = new FakeTenancyStore();
  const organization = await tenancy.createOrganization('Acme');
  const members = [];
  for (const [i, level] of levels.entries()) {
    const user = await tenancy.createUser({ email: `m${i}@acme.test` });
    members.push({ user, membership: await tenancy.addMembership(organization.id, user.id, level) });
  }
  return { tenancy, organization, members };
}

const refusal = (promise: Promise<unknown>) => promise.then(() => null, (e: unknown) => (e instanceof ApiError ? `${e.status} ${e.code}` : String(e)));

test('members: an admin adds an existing user at a pending invite\u2019s level, and the invite is used up', async () => {
  const { tenancy, organization, members } = await organizationWith([15, 8]);
  const memberships = new Memberships(tenancy);
  const admin = members[1].membership;
  await tenancy.createUser({ email: 'new@acme.test' });
  await memberships.invite(admin, members[1].user.id, 'new@acme.test', 8);
  const added = await memberships.add(admin, 'new@acme.test', undefined);
  assert.equal(added.membership.level, 8);
  assert.equal((await tenancy.listInvites(organization.id, { limit: 10, offset: 0 })).count, 0);
  assert.equal(await refusal(memberships.add(admin, 'new@acme.test', 1)), '400 unique');
  assert.equal(await refusal(memberships.add(admin, 'nobody@acme.test', 1)), '400 invalid_input');
});

test('members: a plain member may not add, invite or edit others, and learns nothing about which e-mails exist', async () => {
  const { tenancy, members } = await organizationWith([15, 1, 1]);
  const memberships = new Memberships(tenancy);
  const member = members[1].membership;
  assert.equal(await refusal(memberships.add(member, 'nobody@acme.test', undefined)), '403 permission_denied');
  assert.equal(await refusal(memberships.invite(member, members[1].user.id, 'x@acme.test', undefined)), '403 permission_denied');
  const ref = { actor: member, actingUser: members[1].user, userUuid: members[2].user.uuid };
  assert.equal(await refusal(memberships.changeLevel(ref, 8)), '403 permission_denied');
  assert.equal(await refusal(memberships.remove(ref)), '403 permission_denied');
});

test('members: owners are never removed and cannot leave; others may leave with @me', async () => {
  const { tenancy, members } = await organizationWith([15, 15, 1]);
  const memberships = new Memberships(tenancy);
  const [owner, otherOwner, member] = members;
  assert.equal(await refusal(memberships.remove({ actor: owner.membership, actingUser: owner.user, userUuid: otherOwner.user.uuid })), '400 invalid_input');
  assert.equal(await refusal(memberships.remove({ actor: owner.membership, actingUser: owner.user, userUuid: '@me' })), '400 invalid_input');
  await memberships.remove({ actor: member.membership, actingUser: member.user, userUuid: '@me' });
  assert.equal(await tenancy.getMembership(member.membership.organization_id, member.user.id), null);
});

test('members: someone outside the organization is 404, not a refusal', async () => {
  const { tenancy, members } = await organizationWith([15]);
  const stranger = await tenancy.createUser({ email: 'stranger@else.test' });
  const memberships = new Memberships(tenancy);
  assert.equal(await refusal(memberships.changeLevel({ actor: members[0].membership, actingUser: members[0].user, userUuid: stranger.uuid }, 1)), '404 not_found');
});

test('projects: only admins create; creating and editing drop the token cache; bad time zones are refused', async () => {
  const { tenancy, members } = await organizationWith([8, 1]);
  let dropped = 0;
  const projects = new Projects(tenancy, () => dropped++);
  assert.equal(await refusal(projects.create(members[1].membership, { name: 'Web' })), '403 permission_denied');
  const project = await projects.create(members[0].membership, { name: 'Web', timezone: 'Europe/Paris' });
  assert.equal(project.timezone, 'Europe/Paris');
  assert.equal(await refusal(projects.update(project.id, { timezone: 'Mars/Olympus' })), '400 invalid_choice');
  await projects.update(project.id, { name: 'Site' });
  assert.equal(dropped, 2);
  assert.deepEqual((await projects.visibleTo(members[1].user.id)).map((v) => v.project.name), ['Site']);
});

test('personal keys: at most ten per user, scopes no wider than the creating key, revoked only by their owner', async () => {
  const { tenancy, members } = await organizationWith([1, 1]);
  const keys = new PersonalKeys(tenancy);
  const first = await keys.create({ user: members[0].user, key: { scopes: null } } as Principal, { label: ' mine ' });
  assert.equal(first.key.label, 'mine');
  assert.ok(first.value.startsWith('phx_'));
  const principal = { user: members[0].user, key: first.key } as Principal;
  const narrow = await keys.create({ ...principal, key: { ...first.key, scopes: ['feature_flag:read'] } }, {});
  assert.deepEqual(narrow.key.scopes, ['feature_flag:read'], 'a new key inherits the creating key\u2019s scopes');
  assert.equal(await refusal(keys.create({ ...principal, key: narrow.key }, { scopes: ['*'] })), '403 permission_denied');
  for (let i = 0; i < 8; i++) await keys.create(principal, {});
  assert.match(String(await refusal(keys.create(principal, {}))), /^400/);
  const stranger = { user: members[1].user, key: first.key } as Principal;
  assert.equal(await refusal(keys.revoke(stranger, narrow.key.id)), '404 not_found');
  await keys.revoke(principal, narrow.key.id);
  assert.equal((await keys.list(members[0].user.id)).length, 9);
});
