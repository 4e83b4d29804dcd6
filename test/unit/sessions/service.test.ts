/**
 * The sign-in rules (SessionService) on in-memory stores: sign-in opens a session only with the
 * right password and is held after too many failures, a password change ends the other
 * sessions, and an invite link is taken up once: a new e-mail sets its password, an existing
 * account must give its own.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ApiError } from '../../../src/kernel/errors.js';
import { MAX_FAILURES_PER_EMAIL } from '../../../src/sessions/login-limiter.js';
import { hashPassword } from '../../../src/sessions/passwords.js';
import { SessionService } from '../../../src/sessions/service.js';
import { Memberships } from '../../../src/tenancy/members/service.js';
import { FakeAccountStore } from '../../fakes/account-store.js';
import { FakeTenancyStore } from '../../fakes/tenancy-store.js';

const PASSWORD = 'correct horse battery';
const ADDRESS = '192.0.2.1';

async function setup() {
  const tenancy = new FakeTenancyStore();
  const accounts = new FakeAccountStore(tenancy);
  const organization = await tenancy.createOrganization('Acme');
  const owner = await tenancy.createUser({ email: 'owner@acme.test' });
  const ownerMembership = await tenancy.addMembership(organization.id, owner.id, 15);
  await accounts.setPasswordHash(owner.id, await hashPassword(PASSWORD));
  return { tenancy, accounts, organization, owner, ownerMembership, sessions: new SessionService({ accounts, tenancy }) };
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(() => null, (e: unknown) => (e instanceof ApiError ? `${e.status} ${e.code}${e.attr ? ` ${e.attr}` : ''}` : String(e)));

test('sign-in: the right password opens a session its token leads back to; sign-out ends it', async () => {
  const { sessions, owner } = await setup();
  assert.equal(await refusal(sessions.signIn('owner@acme.test', 'wrong password', ADDRESS)), '400 invalid_credentials');
  assert.equal(await refusal(sessions.signIn('nobody@acme.test', PASSWORD, ADDRESS)), '400 invalid_credentials', 'an unknown e-mail reads the same');
  const signedIn = await sessions.signIn('OWNER@acme.test', PASSWORD, ADDRESS);
  assert.equal((await sessions.userOf(signedIn.sessionToken))?.id, owner.id);
  assert.notEqual(signedIn.csrfToken, signedIn.sessionToken);
  await sessions.signOut(signedIn.sessionToken);
  assert.equal(await sessions.userOf(signedIn.sessionToken), null);
});

test('sign-in: after too many failures for an e-mail even the right password is held (429)', async () => {
  const { sessions } = await setup();
  for (let i = 0; i < MAX_FAILURES_PER_EMAIL; i++) await refusal(sessions.signIn('owner@acme.test', `guess ${i}`, ADDRESS));
  assert.equal(await refusal(sessions.signIn('owner@acme.test', PASSWORD, ADDRESS)), '429 throttled');
});

test('a password change needs the current one and ends every other session of the user', async () => {
  const { sessions, owner } = await setup();
  const here = await sessions.signIn('owner@acme.test', PASSWORD, ADDRESS);
  const elsewhere = await sessions.signIn('owner@acme.test', PASSWORD, '192.0.2.2');
  assert.equal(await refusal(sessions.changePassword(owner, { current: undefined, next: 'a new passphrase' }, here.sessionToken)), '400 password_invalid current_password');
  assert.equal(await refusal(sessions.changePassword(owner, { current: 'wrong one', next: 'a new passphrase' }, here.sessionToken)), '400 password_invalid current_password');
  assert.equal(await refusal(sessions.changePassword(owner, { current: PASSWORD, next: 'short' }, here.sessionToken)), '400 password_invalid password');
  await sessions.changePassword(owner, { current: PASSWORD, next: 'a new passphrase' }, here.sessionToken);
  assert.equal((await sessions.userOf(here.sessionToken))?.id, owner.id, 'the session that made the change stays');
  assert.equal(await sessions.userOf(elsewhere.sessionToken), null);
  await sessions.signIn('owner@acme.test', 'a new passphrase', ADDRESS);
});

test('an invite link: a new e-mail joins with its name and password, once', async () => {
  const { tenancy, sessions, organization, owner, ownerMembership } = await setup();
  const { link } = await new Memberships(tenancy).invite(ownerMembership, owner.id, 'new@acme.test', 8, 'http://localhost:8000');
  const token = new URL(link).hash.slice(1);
  assert.deepEqual(await sessions.invitePreview(token), { target_email: 'new@acme.test', organization_name: 'Acme', level: 8, existing_user: false });
  assert.equal(await refusal(sessions.acceptInvite(token, { firstName: ' ', password: 'a new passphrase' }, ADDRESS)), '400 required first_name');
  assert.equal(await refusal(sessions.acceptInvite(token, { firstName: 'Nina', password: 'short' }, ADDRESS)), '400 password_invalid password');
  const joined = await sessions.acceptInvite(token, { firstName: 'Nina', password: 'a new passphrase' }, ADDRESS);
  assert.equal(joined.user.email, 'new@acme.test');
  assert.equal(joined.membership.level, 8);
  assert.equal(joined.organization.id, organization.id);
  assert.equal((await sessions.userOf(joined.sessionToken))?.id, joined.user.id, 'joining signs in');
  assert.equal(await refusal(sessions.acceptInvite(token, { firstName: 'Nina', password: 'a new passphrase' }, ADDRESS)), '404 not_found', 'a link works once');
});

test('an invite link never sets an existing account\u2019s password: it must be given, and there must be one', async () => {
  const { tenancy, accounts, sessions, owner, ownerMembership } = await setup();
  const existing = await tenancy.createUser({ email: 'known@else.test' });
  const memberships = new Memberships(tenancy);
  const tokenOf = async () => new URL((await memberships.invite(ownerMembership, owner.id, 'known@else.test', 1, 'http://localhost:8000')).link).hash.slice(1);
  assert.equal(await refusal(sessions.acceptInvite(await tokenOf(), { firstName: undefined, password: 'any passphrase' }, ADDRESS)), '400 password_not_set password');
  await accounts.setPasswordHash(existing.id, await hashPassword('their own passphrase'));
  const token = await tokenOf();
  assert.equal(await refusal(sessions.acceptInvite(token, { firstName: undefined, password: 'a takeover attempt' }, ADDRESS)), '400 password_invalid password');
  const joined = await sessions.acceptInvite(token, { firstName: undefined, password: 'their own passphrase' }, ADDRESS);
  assert.equal(joined.user.id, existing.id);
  assert.equal(await refusal(sessions.signIn('known@else.test', 'a takeover attempt', ADDRESS)), '400 invalid_credentials');
});

test('an invite older than three days is refused as expired', async () => {
  const { tenancy, sessions, owner, ownerMembership } = await setup();
  const { invite, link } = await new Memberships(tenancy).invite(ownerMembership, owner.id, 'late@acme.test', 1, 'http://localhost:8000');
  invite.created_at = new Date(Date.now() - 3 * 24 * 3_600_000 - 60_000).toISOString();
  assert.equal(await refusal(sessions.invitePreview(new URL(link).hash.slice(1))), '400 invite_expired invite_token');
});
