/**
 * Who may change whose membership, as PostHog's `validate_update` decides it
 * (`posthog/api/organization_member.py` in github.com/PostHog/posthog). Pure: each returns why
 * an action is refused, or null when it is allowed. Every owner is protected, so an organization
 * is never left without one: owners can only be demoted by another owner, never removed.
 */
import type { Membership, MembershipLevel } from '../../store/types.js';

export const MEMBER = 1;
export const ADMIN = 8;
export const OWNER = 15;

export interface Refusal {
  status: 400 | 403;
  detail: string;
}

const forbidden = (detail: string): Refusal => ({ status: 403, detail });

/** Granting `level` to someone else (level change, direct add, invite). */
export function grantRefusal(actor: Membership, level: MembershipLevel): Refusal | null {
  if (actor.level < ADMIN) return forbidden('You can only edit others if you are an admin.');
  if (level === OWNER && actor.level !== OWNER) return forbidden("You can only make another member owner if you're this organization's owner.");
  if (level > actor.level) return forbidden('You can only change access level of others to lower or equal to your current one.');
  return null;
}

/** Acting on another member at all. */
function editRefusal(actor: Membership, target: Membership): Refusal | null {
  if (actor.level < ADMIN) return forbidden('You can only edit others if you are an admin.');
  if (target.level > actor.level) return forbidden('You can only edit others with level lower or equal to you.');
  return null;
}

export function levelChangeRefusal(actor: Membership, target: Membership, level: MembershipLevel): Refusal | null {
  if (actor.user_id === target.user_id) return forbidden("You can't change your own access level.");
  return editRefusal(actor, target) ?? grantRefusal(actor, level);
}

/** Removing `target` (or leaving, when it is the actor). */
export function removalRefusal(actor: Membership, target: Membership): Refusal | null {
  const refusal = actor.user_id === target.user_id ? null : editRefusal(actor, target);
  if (refusal) return refusal;
  if (target.level === OWNER) {
    return { status: 400, detail: actor.user_id === target.user_id ? 'Cannot leave the organization as its owner!' : 'Cannot remove an owner of the organization.' };
  }
  return null;
}
