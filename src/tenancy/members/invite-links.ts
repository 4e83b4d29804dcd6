/**
 * An invite's link: `<this server>/signup#<secret>`. The secret sits in the fragment, which
 * browsers never send, so it does not reach request logs; the web app's sign-up page posts it
 * (src/sessions/ takes it up). Only its sha256 is stored, so the link is shown once, to the
 * admin who made the invite.
 */
import type { OrganizationInvite } from '../../store/types.js';
import { randomBase62, sha256Hex } from '../../util/keys.js';

/** Invites older than three days are expired, as PostHog's are. */
const INVITE_VALID_FOR_MS = 3 * 24 * 3_600_000;

export const inviteExpired = (invite: OrganizationInvite, now = Date.now()) => now - Date.parse(invite.created_at) > INVITE_VALID_FOR_MS;

/** What the store keeps of a link's secret (its token), and how a presented token is looked up. */
export const inviteTokenHash = (token: string) => sha256Hex(token);

/** A new link to this server (`base`: its public address) and the hash to store with the invite. */
export function newInviteLink(base: string): { link: string; tokenHash: string } {
  const token = randomBase62(32);
  return { link: `${base}/signup#${token}`, tokenHash: inviteTokenHash(token) };
}
