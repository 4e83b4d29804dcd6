/**
 * Memberships and invites of an organization. Who may do what is decided by rules.ts; this
 * applies those rules to the store. A removed user's keys stop working for the organization at
 * once: every request re-reads memberships.
 */
import { notFound, permissionDenied, validationError } from '../../kernel/errors.js';
import type { Membership, MembershipLevel, OrganizationInvite, Page, PageOf, TenancyStore, User } from '../../store/types.js';
import { newInviteLink } from './invite-links.js';
import { grantRefusal, levelChangeRefusal, MEMBER, removalRefusal, type Refusal } from './rules.js';

/** A member as the actor names them: the user's uuid, or `@me`. */
export interface MemberRef {
  actor: Membership;
  actingUser: User;
  userUuid: string;
}

export class Memberships {
  constructor(private readonly tenancy: TenancyStore) {}

  list(organizationId: string, page: Page): Promise<PageOf<{ membership: Membership; user: User }>> {
    return this.tenancy.listMembers(organizationId, page);
  }

  /** Adds an existing user by e-mail; a pending invite for them supplies the default level and is used up. */
  async add(actor: Membership, email: string, level: MembershipLevel | undefined): Promise<{ membership: Membership; user: User }> {
    // Refuse non-admins before the lookup: its answer would tell them which e-mails have accounts.
    refuseIf(grantRefusal(actor, level ?? MEMBER));
    const user = await this.tenancy.getUserByEmail(email);
    if (!user) throw validationError('No user with this e-mail address exists; create one with `sightline users add`.', 'email');
    const invite = await this.tenancy.findInvite(actor.organization_id, user.email);
    const newLevel = level ?? invite?.level ?? MEMBER;
    refuseIf(grantRefusal(actor, newLevel));
    if (await this.tenancy.getMembership(actor.organization_id, user.id)) {
      throw validationError('This user is already a member of the organization.', 'email', 'unique');
    }
    const membership = await this.tenancy.addMembership(actor.organization_id, user.id, newLevel);
    if (invite) await this.tenancy.deleteInvite(actor.organization_id, invite.id);
    return { membership, user };
  }

  async changeLevel(ref: MemberRef, level: MembershipLevel): Promise<{ membership: Membership; user: User }> {
    const { user, membership } = await this.target(ref);
    refuseIf(levelChangeRefusal(ref.actor, membership, level));
    const updated = await this.tenancy.setMembershipLevel(ref.actor.organization_id, user.id, level);
    return { membership: updated!, user };
  }

  /** Removes a member, or lets the actor leave (`@me`); owners cannot be removed. */
  async remove(ref: MemberRef): Promise<void> {
    const { user, membership } = await this.target(ref);
    refuseIf(removalRefusal(ref.actor, membership));
    await this.tenancy.removeMembership(ref.actor.organization_id, user.id);
  }

  listInvites(organizationId: string, page: Page): Promise<PageOf<OrganizationInvite>> {
    return this.tenancy.listInvites(organizationId, page);
  }

  /**
   * Invites an e-mail at a level (replacing a pending invite for it), with a link to this server
   * (`base`: its public address) that only this answer shows.
   */
  async invite(
    actor: Membership,
    invitedBy: number,
    email: string,
    level: MembershipLevel | undefined,
    base: string,
  ): Promise<{ invite: OrganizationInvite; link: string }> {
    const newLevel = level ?? MEMBER;
    refuseIf(grantRefusal(actor, newLevel));
    const existing = await this.tenancy.getUserByEmail(email);
    if (existing && (await this.tenancy.getMembership(actor.organization_id, existing.id))) {
      throw validationError('A user with this e-mail address already belongs to the organization.', 'target_email', 'unique');
    }
    const { link, tokenHash } = newInviteLink(base);
    const invite = await this.tenancy.createInvite({ organizationId: actor.organization_id, email, level: newLevel, createdBy: invitedBy, tokenHash });
    return { invite, link };
  }

  async cancelInvite(actor: Membership, id: string): Promise<void> {
    refuseIf(grantRefusal(actor, MEMBER));
    if (!(await this.tenancy.deleteInvite(actor.organization_id, id))) throw notFound();
  }

  /** The target's user and membership, or 404 when they are outside the actor's organization. */
  private async target(ref: MemberRef): Promise<{ user: User; membership: Membership }> {
    const user = ref.userUuid === '@me' ? ref.actingUser : await this.tenancy.getUserByUuid(ref.userUuid);
    const membership = user && (await this.tenancy.getMembership(ref.actor.organization_id, user.id));
    if (!user || !membership) throw notFound();
    return { user, membership };
  }
}

function refuseIf(refusal: Refusal | null): void {
  if (!refusal) return;
  throw refusal.status === 403 ? permissionDenied(refusal.detail) : validationError(refusal.detail);
}
