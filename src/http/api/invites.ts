/**
 * /api/organizations/:id/invites/: pending invitations by e-mail. Creating one answers, once,
 * with a link to pass on (no e-mail is sent): it sets a new account's password, or asks an
 * existing account's (src/sessions/). An admin can also redeem an invite by adding an existing
 * user through POST …/members/, where it supplies the default level. Invites older than three
 * days are reported as expired, as PostHog's are.
 */
import type { FastifyInstance } from 'fastify';
import { INVITE_VALID_FOR_MS, newInviteLink } from '../../sessions/invite-links.js';
import { ownOrigin } from '../../sessions/origin.js';
import type { MembershipLevel, OrganizationInvite } from '../../store/types.js';
import { organizationFor } from '../auth.js';
import type { AppContext } from '../context.js';
import { notFound, validationError } from '../errors.js';
import { grantRefusal, MEMBER } from './member-rules.js';
import { organizationParam, refuseIf } from './members.js';
import { envelope, pageQuery, paginated, readPage } from './pagination.js';
import { apiRoute } from './route.js';
import { dateTime, level, noContent, nullable, object, params, uuid } from './schemas.js';

const inviteSchema = object({
  id: uuid,
  target_email: { type: 'string', format: 'email' },
  level,
  created_by: nullable({ type: 'integer', description: 'User id of the inviter' }),
  created_at: dateTime,
  is_expired: { type: 'boolean' },
});

const serialize = (invite: OrganizationInvite) => ({
  ...invite,
  is_expired: Date.now() - Date.parse(invite.created_at) > INVITE_VALID_FOR_MS,
});

export async function registerInviteRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const tenancy = ctx.stores.meta.tenancy;
  const base = { scope: 'organization_member', tag: 'organization_invites' };
  type OrgParams = { parent_lookup_organization_id: string };

  apiRoute<{ Params: OrgParams; Querystring: Record<string, unknown> }>(app, ctx, {
    ...base,
    method: 'GET',
    url: '/api/organizations/:parent_lookup_organization_id/invites/',
    summary: 'List pending invites',
    params: params(organizationParam),
    querystring: { type: 'object', properties: pageQuery },
    response: { 200: paginated(inviteSchema) },
    handler: async (request, principal) => {
      const { organization } = await organizationFor(ctx, principal, request.params.parent_lookup_organization_id);
      const page = readPage(request.query);
      const invites = await tenancy.listInvites(organization.id, page);
      return envelope(request, ctx, page, { count: invites.count, results: invites.results.map(serialize) });
    },
  });

  apiRoute<{ Params: OrgParams; Body: { target_email: string; level?: MembershipLevel } }>(app, ctx, {
    ...base,
    method: 'POST',
    url: '/api/organizations/:parent_lookup_organization_id/invites/',
    summary: 'Invite an e-mail address at a level (admins and owners; replaces a pending invite for it)',
    params: params(organizationParam),
    body: object({ target_email: { type: 'string', format: 'email', maxLength: 254 }, level }, ['level']),
    response: {
      201: object({
        ...(inviteSchema.properties as object),
        invite_link: { type: 'string', description: 'Sets up the account; shown only in this response (its secret is stored hashed)' },
      }),
    },
    handler: async (request, principal, reply) => {
      const { membership: actor } = await organizationFor(ctx, principal, request.params.parent_lookup_organization_id);
      const newLevel = request.body.level ?? MEMBER;
      refuseIf(grantRefusal(actor, newLevel));
      const existing = await tenancy.getUserByEmail(request.body.target_email);
      if (existing && (await tenancy.getMembership(actor.organization_id, existing.id))) {
        throw validationError('A user with this e-mail address already belongs to the organization.', 'target_email', 'unique');
      }
      const { link, tokenHash } = newInviteLink(ownOrigin(request, ctx.config.publicUrl));
      const invite = await tenancy.createInvite({
        organizationId: actor.organization_id,
        email: request.body.target_email,
        level: newLevel,
        createdBy: principal.user.id,
        tokenHash,
      });
      return reply.code(201).send({ ...serialize(invite), invite_link: link });
    },
  });

  apiRoute<{ Params: OrgParams & { id: string } }>(app, ctx, {
    ...base,
    method: 'DELETE',
    url: '/api/organizations/:parent_lookup_organization_id/invites/:id/',
    summary: 'Cancel a pending invite (admins and owners)',
    params: params({ ...organizationParam, id: 'Invite id' }),
    response: { 204: noContent },
    handler: async (request, principal, reply) => {
      const { membership: actor } = await organizationFor(ctx, principal, request.params.parent_lookup_organization_id);
      refuseIf(grantRefusal(actor, MEMBER));
      if (!(await tenancy.deleteInvite(actor.organization_id, request.params.id))) throw notFound();
      return reply.code(204).send();
    },
  });
}
