/**
 * /api/organizations/:id/members/ (spec 4.4): list, add an existing user by e-mail, change a
 * level, remove. Who may do what is decided by member-rules.ts. A removed user's keys stop
 * working for the organization at once: every request re-reads memberships.
 */
import type { FastifyInstance } from 'fastify';
import type { Membership, MembershipLevel, User } from '../store/types.js';
import { organizationFor, type Principal } from '../http/auth.js';
import type { AppContext } from '../app-context.js';
import { notFound, permissionDenied, validationError } from '../kernel/errors.js';
import { grantRefusal, levelChangeRefusal, MEMBER, removalRefusal, type Refusal } from './member-rules.js';
import { envelope, pageQuery, paginated, readPage } from '../http/pagination.js';
import { apiRoute } from '../http/route.js';
import { dateTime, level, noContent, object, params, userBasic } from '../http/schemas.js';

const memberSchema = object({
  id: { type: 'string', format: 'uuid', description: 'Membership id' },
  user: userBasic,
  level,
  joined_at: dateTime,
  updated_at: dateTime,
  is_2fa_enabled: { type: 'boolean' },
  has_social_auth: { type: 'boolean' },
});

export const serializeMember = (membership: Membership, user: User) => ({
  id: membership.id,
  user,
  level: membership.level,
  joined_at: membership.joined_at,
  updated_at: membership.updated_at,
  // No second factor or social login exists here.
  is_2fa_enabled: false,
  has_social_auth: false,
});

export function refuseIf(refusal: Refusal | null): void {
  if (!refusal) return;
  throw refusal.status === 403 ? permissionDenied(refusal.detail) : validationError(refusal.detail);
}

export const organizationParam = { parent_lookup_organization_id: 'Organization id, or @current' };

export async function registerMemberRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const tenancy = ctx.stores.meta.tenancy;
  const base = { scope: 'organization_member', tag: 'organization_members' };
  const memberParams = params({ ...organizationParam, user__uuid: "The member's user uuid, or @me" });
  type MemberParams = { parent_lookup_organization_id: string; user__uuid: string };

  /** The acting membership and the target's, or 404 when either is outside the organization. */
  async function target(principal: Principal, p: MemberParams) {
    const { membership: actor } = await organizationFor(ctx, principal, p.parent_lookup_organization_id);
    const user = p.user__uuid === '@me' ? principal.user : await tenancy.getUserByUuid(p.user__uuid);
    const membership = user && (await tenancy.getMembership(actor.organization_id, user.id));
    if (!user || !membership) throw notFound();
    return { actor, user, membership };
  }

  apiRoute<{ Params: { parent_lookup_organization_id: string }; Querystring: Record<string, unknown> }>(app, ctx, {
    ...base,
    method: 'GET',
    url: '/api/organizations/:parent_lookup_organization_id/members/',
    summary: 'List the members of an organization (newest first)',
    params: params(organizationParam),
    querystring: { type: 'object', properties: pageQuery },
    response: { 200: paginated(memberSchema) },
    handler: async (request, principal) => {
      const { organization } = await organizationFor(ctx, principal, request.params.parent_lookup_organization_id);
      const page = readPage(request.query);
      const members = await tenancy.listMembers(organization.id, page);
      return envelope(request, ctx, page, { count: members.count, results: members.results.map((m) => serializeMember(m.membership, m.user)) });
    },
  });

  apiRoute<{ Params: { parent_lookup_organization_id: string }; Body: { email: string; level?: MembershipLevel } }>(app, ctx, {
    ...base,
    method: 'POST',
    url: '/api/organizations/:parent_lookup_organization_id/members/',
    summary: 'Add an existing user by e-mail (admins and owners; a pending invite supplies the default level)',
    params: params(organizationParam),
    body: object({ email: { type: 'string', format: 'email', maxLength: 254 }, level }, ['level']),
    response: { 201: memberSchema },
    handler: async (request, principal, reply) => {
      const { membership: actor } = await organizationFor(ctx, principal, request.params.parent_lookup_organization_id);
      // Refuse non-admins before the lookup: its answer would tell them which e-mails have accounts.
      refuseIf(grantRefusal(actor, request.body.level ?? MEMBER));
      const user = await tenancy.getUserByEmail(request.body.email);
      if (!user) throw validationError('No user with this e-mail address exists; create one with `sightline users add`.', 'email');
      const invite = await tenancy.findInvite(actor.organization_id, user.email);
      const newLevel = request.body.level ?? invite?.level ?? MEMBER;
      refuseIf(grantRefusal(actor, newLevel));
      if (await tenancy.getMembership(actor.organization_id, user.id)) {
        throw validationError('This user is already a member of the organization.', 'email', 'unique');
      }
      const membership = await tenancy.addMembership(actor.organization_id, user.id, newLevel);
      if (invite) await tenancy.deleteInvite(actor.organization_id, invite.id);
      return reply.code(201).send(serializeMember(membership, user));
    },
  });

  apiRoute<{ Params: MemberParams; Body: { level: MembershipLevel } }>(app, ctx, {
    ...base,
    method: 'PATCH',
    url: '/api/organizations/:parent_lookup_organization_id/members/:user__uuid/',
    summary: "Change a member's level",
    params: memberParams,
    body: object({ level }),
    response: { 200: memberSchema },
    handler: async (request, principal) => {
      const { actor, user, membership } = await target(principal, request.params);
      refuseIf(levelChangeRefusal(actor, membership, request.body.level));
      const updated = await tenancy.setMembershipLevel(actor.organization_id, user.id, request.body.level);
      return serializeMember(updated!, user);
    },
  });

  apiRoute<{ Params: MemberParams }>(app, ctx, {
    ...base,
    method: 'DELETE',
    url: '/api/organizations/:parent_lookup_organization_id/members/:user__uuid/',
    summary: 'Remove a member (or leave, with @me); owners cannot be removed',
    params: memberParams,
    response: { 204: noContent },
    handler: async (request, principal, reply) => {
      const { actor, user, membership } = await target(principal, request.params);
      refuseIf(removalRefusal(actor, membership));
      await tenancy.removeMembership(actor.organization_id, user.id);
      return reply.code(204).send();
    },
  });
}
