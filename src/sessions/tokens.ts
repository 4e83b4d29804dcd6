/**
 * Session tokens live only in the browser's cookie; the store keeps their sha256. The CSRF
 * token is derived from the session token, so it needs no storage of its own and is worth
 * nothing without the session it belongs to.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { randomBase62, sha256Hex } from '../util/keys.js';

export const newSessionToken = () => randomBase62(43);
export const tokenHash = (token: string) => sha256Hex(token);

export const csrfTokenFor = (sessionToken: string) => createHash('sha256').update('sightline-csrf\0').update(sessionToken).digest('base64url');

export function csrfTokenMatches(sessionToken: string, presented: string | undefined): boolean {
  if (!presented) return false;
  const expected = Buffer.from(csrfTokenFor(sessionToken));
  const actual = Buffer.from(presented);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
