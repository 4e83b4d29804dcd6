/** Rules of the web app's sign-in without a server: password hashes, CSRF tokens, the sign-in limiter (invite links: test/unit/tenancy). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generatePassword, hashPassword, passwordProblem, verifyPassword } from '../../../src/sessions/passwords.js';
import { csrfTokenFor, csrfTokenMatches, newSessionToken, tokenHash } from '../../../src/sessions/tokens.js';
import { MemoryRateWindows } from '../../../src/util/rate-windows.js';
import { addressLimitRule, emailLimitRule, mixedWindowsRule } from '../../helpers/rate-window-rules.js';

test('a password hash names its parameters, is salted, and verifies only its password', async () => {
  const first = await hashPassword('correct horse');
  const second = await hashPassword('correct horse');
  assert.match(first, /^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
  assert.notEqual(first, second, 'a new salt each time');
  assert.equal(await verifyPassword('correct horse', first), true);
  assert.equal(await verifyPassword('correct horsE', first), false);
  assert.equal(await verifyPassword('correct horse', 'sha256$abc'), false, 'an unknown scheme never matches');
  // Unicode forms of the same text are the same password.
  assert.equal(await verifyPassword('cafe\u0301 au lait', await hashPassword('café au lait')), true);
});

test('password rules: 8 to 1,024 characters; generated ones pass', () => {
  assert.match(passwordProblem('1234567')!, /at least 8/);
  assert.equal(passwordProblem('12345678'), null);
  assert.match(passwordProblem('x'.repeat(1025))!, /too long/);
  const generated = generatePassword();
  assert.equal(generated.length, 20);
  assert.equal(passwordProblem(generated), null);
});

test('a CSRF token belongs to one session token and cannot be guessed from another', () => {
  const session = newSessionToken();
  const token = csrfTokenFor(session);
  assert.equal(csrfTokenMatches(session, token), true);
  assert.equal(csrfTokenMatches(newSessionToken(), token), false);
  assert.equal(csrfTokenMatches(session, undefined), false);
  assert.equal(csrfTokenMatches(session, token.slice(1)), false);
  assert.notEqual(token, tokenHash(session), 'the CSRF token does not reveal the stored hash');
});

test('the limiter refuses after the e-mail limit until the window ends; a success clears the e-mail', () => emailLimitRule(new MemoryRateWindows()));

test('the limiter refuses one address that tries many e-mails', () => addressLimitRule(new MemoryRateWindows()));

test('rate windows of different lengths share the counter without ending each other', () => mixedWindowsRule(new MemoryRateWindows()));
