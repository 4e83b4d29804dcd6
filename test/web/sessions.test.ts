/**
 * The web app's sign-in over HTTP, without a browser: passwords, session cookies, CSRF, the
 * session as a second way to the same user as a personal key, invite links, the sign-in rate
 * limit and `sightline users set-password`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { expectError, expectOk } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { login, OWNER_EMAIL, OWNER_PASSWORD, sessionOf, signIn, withSession, type Session } from '../helpers/sessions.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Runs the real CLI against a server's stores, with `input` on standard input. */
function cli(storeEnv: Record<string, string>, args: string[], input: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...storeEnv, SIGHTLINE_LOG_LEVEL: 'silent' } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(input);
  });
}

let server: TestServer;
let projectId: number;
let organizationId: string;

before(async () => {
  server = await startServer({ env: { SIGHTLINE_OWNER_EMAIL: OWNER_EMAIL, SIGHTLINE_OWNER_PASSWORD: OWNER_PASSWORD } });
  const project = await expectOk(await server.api('/api/projects/@current/'));
  projectId = project.id;
  organizationId = project.organization;
});
after(async () => {
  await server.stop();
});

const flagBody = (key: string) => ({ key, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } });

describe('signing in', () => {
  test('the owner signs in with the configured e-mail and password; the cookies are HttpOnly (session) and SameSite=Lax', async () => {
    const response = await login(server, OWNER_EMAIL, OWNER_PASSWORD);
    assert.deepEqual(await expectOk(response), { success: true });
    const { setCookies } = sessionOf(response);
    const sessionCookie = setCookies.find((c) => c.startsWith('sightline_session='))!;
    const csrfCookie = setCookies.find((c) => c.startsWith('sightline_csrftoken='))!;
    assert.match(sessionCookie, /; HttpOnly/);
    assert.match(sessionCookie, /; SameSite=Lax/);
    assert.match(sessionCookie, /; Path=\//);
    assert.doesNotMatch(sessionCookie, /Secure/, 'plain HTTP: no Secure flag');
    assert.doesNotMatch(csrfCookie, /HttpOnly/, 'the app reads the CSRF token');
  });

  test('a wrong password and an unknown e-mail get the same refusal, and no cookie', async () => {
    for (const [email, password] of [
      [OWNER_EMAIL, 'wrong password'],
      ['nobody@sightline.test', OWNER_PASSWORD],
    ]) {
      const response = await login(server, email, password, { 'x-forwarded-for': email });
      assert.equal(response.headers.getSetCookie().length, 0);
      const body = await expectError(response, 400, 'invalid_credentials', null);
      assert.equal(body.detail, 'Invalid email or password.');
    }
  });

  test('a malformed sign-in body is a 400 in the API shape', async () => {
    const response = await fetch(`${server.url}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: OWNER_EMAIL, password: 5 }) });
    await expectError(response, 400, 'invalid_input', 'password');
    const missing = await fetch(`${server.url}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await expectError(missing, 400, 'required', 'email');
  });

  test('a sign-in posted from another origin is refused', async () => {
    const response = await login(server, OWNER_EMAIL, OWNER_PASSWORD, { origin: 'https://evil.example' });
    await expectError(response, 403, 'csrf_failed');
  });
});

describe('the session on the API', () => {
  let session: Session;
  before(async () => {
    session = await signIn(server);
  });

  test('reads what the personal key reads, for the same user', async () => {
    const me = await expectOk(await withSession(server, session, '/api/users/@me/'));
    assert.equal(me.email, OWNER_EMAIL);
    assert.equal(me.has_password, true);
    assert.deepEqual(
      me.organizations.map((o: any) => [o.id, o.membership_level]),
      [[organizationId, 15]],
    );
    const byKey = await expectOk(await server.api('/api/users/@me/'));
    assert.equal(byKey.uuid, me.uuid);
    const projects = await expectOk(await withSession(server, session, '/api/projects/'));
    assert.deepEqual(projects, await expectOk(await server.api('/api/projects/')));
  });

  test('a state-changing request without the CSRF token, or with a wrong one, is refused and changes nothing', async () => {
    const url = `/api/projects/${projectId}/feature_flags/`;
    await expectError(await withSession(server, session, url, { method: 'POST', body: flagBody('no-csrf'), csrf: false }), 403, 'csrf_failed');
    await expectError(
      await withSession(server, session, url, { method: 'POST', body: flagBody('wrong-csrf'), headers: { 'x-csrftoken': 'x'.repeat(43) }, csrf: false }),
      403,
      'csrf_failed',
    );
    const list = await expectOk(await server.api(`${url}?search=csrf`));
    assert.equal(list.count, 0);
    const created = await expectOk(await withSession(server, session, url, { method: 'POST', body: flagBody('with-csrf') }), 201);
    assert.equal(created.key, 'with-csrf');
    assert.equal(created.created_by.email, OWNER_EMAIL);
  });

  test('requests with a personal API key need no CSRF token, cookie or not', async () => {
    const url = `/api/projects/${projectId}/feature_flags/`;
    await expectOk(await server.api(url, { method: 'POST', body: flagBody('by-key') }), 201);
    await expectOk(await server.api(url, { method: 'POST', body: flagBody('by-key-with-cookie'), headers: { cookie: session.cookie } }), 201);
  });

  test('the session is not accepted from another origin’s page', async () => {
    await expectError(await withSession(server, session, '/api/users/@me/', { headers: { origin: 'https://evil.example' } }), 401, 'invalid_personal_api_key');
    await expectError(await withSession(server, session, '/api/users/@me/', { headers: { 'sec-fetch-site': 'same-site' } }), 401, 'invalid_personal_api_key');
    await expectOk(await withSession(server, session, '/api/users/@me/', { headers: { origin: server.url, 'sec-fetch-site': 'same-origin' } }));
  });

  test('a made-up session cookie is no session', async () => {
    const fake: Session = { ...session, cookie: `sightline_session=${'a'.repeat(43)}` };
    await expectError(await withSession(server, fake, '/api/users/@me/'), 401, 'invalid_personal_api_key');
  });

  test('@current personal key does not exist for a session', async () => {
    await expectError(await withSession(server, session, '/api/personal_api_keys/@current/'), 404, 'not_found');
  });

  test('personal API keys made with a session are shown once and work', async () => {
    const created = await expectOk(await withSession(server, session, '/api/personal_api_keys/', { method: 'POST', body: { label: 'from the app' } }), 201);
    assert.match(created.value, /^phx_/);
    assert.deepEqual(created.scopes, ['*']);
    await expectOk(await server.api('/api/users/@me/', { key: created.value }));
    const listed = await expectOk(await withSession(server, session, '/api/personal_api_keys/'));
    assert.ok(listed.results.every((k: any) => k.value === undefined));
    await expectOk(await withSession(server, session, `/api/personal_api_keys/${created.id}/`, { method: 'DELETE' }), 204);
    await expectError(await server.api('/api/users/@me/', { key: created.value }), 401, 'invalid_personal_api_key');
  });

  test('logging out needs the CSRF token, then ends the session', async () => {
    const own = await signIn(server);
    await expectError(await withSession(server, own, '/api/logout', { method: 'POST', csrf: false }), 403, 'csrf_failed');
    await expectOk(await withSession(server, own, '/api/users/@me/'));
    const out = await withSession(server, own, '/api/logout', { method: 'POST' });
    assert.deepEqual(await expectOk(out), { success: true });
    assert.ok(out.headers.getSetCookie().some((c) => c.startsWith('sightline_session=;') && c.includes('Max-Age=0')));
    await expectError(await withSession(server, own, '/api/users/@me/'), 401, 'invalid_personal_api_key');
  });
});

describe('passwords', () => {
  test('a user changes their own password: the current one is required, other sessions end, this one stays', async () => {
    const email = 'changer@sightline.test';
    const { link } = await invite(email, 8);
    const joined = await acceptInvite(link, { first_name: 'Changer', password: 'first password' });
    const other = await signIn(server, email, 'first password');

    await expectError(
      await withSession(server, joined, '/api/users/@me/', { method: 'PATCH', body: { password: 'second password' } }),
      400,
      'password_invalid',
      'current_password',
    );
    await expectError(
      await withSession(server, joined, '/api/users/@me/', { method: 'PATCH', body: { password: 'second password', current_password: 'nope nope' } }),
      400,
      'password_invalid',
      'current_password',
    );
    await expectError(
      await withSession(server, joined, '/api/users/@me/', { method: 'PATCH', body: { password: 'short', current_password: 'first password' } }),
      400,
      'password_invalid',
      'password',
    );
    const changed = await expectOk(
      await withSession(server, joined, '/api/users/@me/', { method: 'PATCH', body: { password: 'second password', current_password: 'first password', first_name: 'Renamed' } }),
    );
    assert.equal(changed.first_name, 'Renamed');
    await expectOk(await withSession(server, joined, '/api/users/@me/'));
    await expectError(await withSession(server, other, '/api/users/@me/'), 401, 'invalid_personal_api_key');
    await expectError(await login(server, email, 'first password'), 400, 'invalid_credentials');
    await signIn(server, email, 'second password');
  });

  test('`sightline users set-password` reads standard input, and ends the user’s sessions', async () => {
    const email = 'cli@sightline.test';
    const { link } = await invite(email, 1);
    const joined = await acceptInvite(link, { first_name: 'Cli', password: 'old password' });

    const tooShort = await cli(server.storeEnv, ['users', 'set-password', '--email', email], 'short\n');
    assert.equal(tooShort.code, 1);
    assert.match(tooShort.stderr, /too short/);
    const unknown = await cli(server.storeEnv, ['users', 'set-password', '--email', 'ghost@sightline.test'], 'long enough password\n');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /No user/);

    const done = await cli(server.storeEnv, ['users', 'set-password', '--email', email], 'a new password with spaces \n');
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /Password set for cli@sightline\.test/);
    assert.doesNotMatch(done.stdout + done.stderr, /a new password/, 'the password is never echoed');
    await expectError(await withSession(server, joined, '/api/users/@me/'), 401, 'invalid_personal_api_key');
    await expectError(await login(server, email, 'old password'), 400, 'invalid_credentials');
    await signIn(server, email, 'a new password with spaces ');
  });
});

/** An invite made by the owner's key; its one-time link. */
async function invite(email: string, level: 1 | 8 | 15): Promise<{ link: string; body: any }> {
  const body = await expectOk(await server.api(`/api/organizations/${organizationId}/invites/`, { method: 'POST', body: { target_email: email, level } }), 201);
  return { link: body.invite_link, body };
}

const tokenOf = (link: string) => new URL(link).hash.slice(1);

async function acceptInvite(link: string, input: { first_name?: string; password: string }): Promise<Session> {
  const response = await fetch(`${server.url}/api/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ invite_token: tokenOf(link), ...input }),
  });
  assert.equal(response.status, 201, await response.clone().text());
  return sessionOf(response);
}

describe('invites', () => {
  test('an invite answers once with a link to this server; the list never shows it', async () => {
    const { link, body } = await invite('new@sightline.test', 1);
    assert.match(link, new RegExp(`^${server.url}/signup#[0-9A-Za-z]{32}$`));
    assert.equal(body.target_email, 'new@sightline.test');
    const listed = await expectOk(await server.api(`/api/organizations/${organizationId}/invites/`));
    const found = listed.results.find((i: any) => i.id === body.id);
    assert.ok(found);
    assert.equal(found.invite_link, undefined);
    assert.equal(found.token_hash, undefined);
  });

  test('the link sets a new account’s password, signs in, joins at the invite’s level, and works once', async () => {
    const { link } = await invite('joiner@sightline.test', 1);
    const token = tokenOf(link);
    const preview = await expectOk(await fetch(`${server.url}/api/signup/invite`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ invite_token: token }) }));
    assert.deepEqual(preview, { target_email: 'joiner@sightline.test', organization_name: 'Default Organization', level: 1, existing_user: false });

    await expectError(
      await fetch(`${server.url}/api/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ invite_token: token, first_name: 'J', password: 'short' }) }),
      400,
      'password_invalid',
      'password',
    );
    const session = await acceptInvite(link, { first_name: 'Joiner', password: 'joiner password' });
    const me = await expectOk(await withSession(server, session, '/api/users/@me/'));
    assert.equal(me.first_name, 'Joiner');
    assert.deepEqual(me.organizations.map((o: any) => o.membership_level), [1]);
    await signIn(server, 'joiner@sightline.test', 'joiner password');

    const again = await fetch(`${server.url}/api/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ invite_token: token, first_name: 'X', password: 'another password' }) });
    await expectError(again, 404, 'not_found');
    await expectError(await login(server, 'joiner@sightline.test', 'another password'), 400, 'invalid_credentials');
  });

  test('a link for an e-mail that has an account asks for that account’s password and never replaces it', async () => {
    // The owner's e-mail, invited to a second organization (made by the CLI) by its owner.
    const second = await cli(server.storeEnv, ['init', '--org', 'Second', '--email', 'owner2@sightline.test', '--json'], '');
    assert.equal(second.code, 0, second.stderr);
    const { personal_api_key: key2, organization_id: org2 } = JSON.parse(second.stdout.trim());
    const created = await expectOk(await server.api(`/api/organizations/${org2}/invites/`, { method: 'POST', body: { target_email: OWNER_EMAIL, level: 8 }, key: key2 }), 201);
    const token = tokenOf(created.invite_link);
    const preview = await expectOk(await fetch(`${server.url}/api/signup/invite`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ invite_token: token }) }));
    assert.equal(preview.existing_user, true);
    const wrong = await fetch(`${server.url}/api/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ invite_token: token, password: 'taken over!' }) });
    await expectError(wrong, 400, 'password_invalid', 'password');
    await expectError(await login(server, OWNER_EMAIL, 'taken over!'), 400, 'invalid_credentials');
    const right = await fetch(`${server.url}/api/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ invite_token: token, password: OWNER_PASSWORD }) });
    const me = await expectOk(right, 201);
    assert.deepEqual(me.organizations.map((o: any) => o.name).sort(), ['Default Organization', 'Second']);
  });

  test('a member (level 1) cannot invite or change levels with a session, as with a key', async () => {
    const { link } = await invite('plain-member@sightline.test', 1);
    const member = await acceptInvite(link, { first_name: 'Plain', password: 'member password' });
    await expectError(
      await withSession(server, member, `/api/organizations/${organizationId}/invites/`, { method: 'POST', body: { target_email: 'x@sightline.test', level: 1 } }),
      403,
      'permission_denied',
    );
    const members = await expectOk(await withSession(server, member, `/api/organizations/${organizationId}/members/`));
    const ownerUuid = members.results.find((m: any) => m.user.email === OWNER_EMAIL).user.uuid;
    await expectError(await withSession(server, member, `/api/organizations/${organizationId}/members/${ownerUuid}/`, { method: 'PATCH', body: { level: 1 } }), 403, 'permission_denied');
    await expectError(await withSession(server, member, '/api/projects/', { method: 'POST', body: { name: 'Nope' } }), 403, 'permission_denied');
  });

  test('an unknown or malformed invite token is refused in words', async () => {
    const post = (body: unknown) => fetch(`${server.url}/api/signup/invite`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await expectError(await post({ invite_token: 'nope' }), 404, 'not_found');
    await expectError(await post({}), 400, 'required', 'invite_token');
  });
});

describe('sign-in rate limit', () => {
  test('after 10 failures for one e-mail every attempt is refused with Retry-After, even the right password', async () => {
    const email = 'limited@sightline.test';
    const { link } = await invite(email, 1);
    await acceptInvite(link, { first_name: 'Limited', password: 'limited password' });
    for (let i = 0; i < 10; i++) await expectError(await login(server, email, `wrong ${i}`), 400, 'invalid_credentials');
    const refused = await login(server, email, 'limited password');
    await expectError(refused, 429, 'throttled');
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= 900, String(retryAfter));
    // Other accounts are not held up by it.
    await signIn(server);
  });
});

describe('first start', () => {
  test('without SIGHTLINE_OWNER_PASSWORD a password is generated and printed once beside the keys; behind a trusted proxy over HTTPS the cookies are Secure', async () => {
    const fresh = await startServer({ env: { SIGHTLINE_TRUST_PROXY: 'true' } });
    try {
      const printed = /password:\s+(\S+)/.exec(fresh.output());
      assert.ok(printed, fresh.output());
      assert.match(fresh.output(), /sign in as:\s+admin@sightline\.local/);
      const password = printed[1];
      assert.equal(password.length, 20);
      const plain = await login(fresh, 'admin@sightline.local', password);
      assert.ok(sessionOf(plain).setCookies.every((c) => !c.includes('Secure')));
      const https = await login(fresh, 'admin@sightline.local', password, { 'x-forwarded-proto': 'https' });
      assert.ok(sessionOf(https).setCookies.every((c) => c.includes('; Secure')));
      const logs = fresh.output().split('\n').filter((line) => line.startsWith('{'));
      assert.ok(logs.every((line) => !line.includes(password)), 'the password is not in the log stream');
    } finally {
      await fresh.stop();
    }
    // Without a trusted proxy the header is not believed.
    const https = await login(server, OWNER_EMAIL, OWNER_PASSWORD, { 'x-forwarded-proto': 'https' });
    assert.ok(sessionOf(https).setCookies.every((c) => !c.includes('Secure')));
  });

  test('behind a proxy, SIGHTLINE_PUBLIC_URL is the origin pages come from: sign-in from it works, with Secure cookies and invite links to it', async () => {
    const proxied = await startServer({ env: { SIGHTLINE_PUBLIC_URL: 'https://analytics.example.com', SIGHTLINE_OWNER_PASSWORD: OWNER_PASSWORD } });
    try {
      const response = await login(proxied, 'admin@sightline.local', OWNER_PASSWORD, { origin: 'https://analytics.example.com' });
      const session = sessionOf(response);
      assert.ok(session.setCookies.every((c) => c.includes('; Secure')));
      await expectOk(await withSession(proxied, session, '/api/users/@me/', { headers: { origin: 'https://analytics.example.com' } }));
      const refused = await expectError(await login(proxied, 'admin@sightline.local', OWNER_PASSWORD, { origin: 'https://elsewhere.example.com' }), 403, 'csrf_failed');
      assert.match(refused.detail, /SIGHTLINE_PUBLIC_URL/);
      const invite = await expectOk(await proxied.api('/api/organizations/@current/invites/', { method: 'POST', body: { target_email: 'p@sightline.test' } }), 201);
      assert.match(invite.invite_link, /^https:\/\/analytics\.example\.com\/signup#/);
    } finally {
      await proxied.stop();
    }
  });

  test('a SIGHTLINE_OWNER_PASSWORD that is too short stops the first start with a configuration error', async () => {
    await assert.rejects(startServer({ env: { SIGHTLINE_OWNER_PASSWORD: 'short' } }), /SIGHTLINE_OWNER_PASSWORD: This password is too short/);
  });
});
