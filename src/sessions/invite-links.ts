/**
 * An invite's link: `<this server>/signup#<secret>`. The secret sits in the fragment, which
 * browsers never send, so it does not reach request logs; the sign-up page posts it. Only its
 * sha256 is stored, so the link is shown once, to the admin who made the invite.
 */
import { newInviteToken, tokenHash } from './tokens.js';

/** Invites older than three days are expired, as PostHog's are. */
export const INVITE_VALID_FOR_MS = 3 * 24 * 3_600_000;

export function newInviteLink(origin: string): { link: string; tokenHash: string } {
  const token = newInviteToken();
  return { link: `${origin}/signup#${token}`, tokenHash: tokenHash(token) };
}
