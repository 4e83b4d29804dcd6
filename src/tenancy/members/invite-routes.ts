/**
 * /api/organizations/:id/invites/: pending invitations by e-mail. Creating one answers, once,
 * with a link to pass on (no e-mail is sent; invite-links.ts): it sets a new account's password,
 * or asks an existing account's, in the web app (src/sessions/). An admin can also redeem an
 * invite by adding an existing user through POST …/members/, where it supplies the default
 * level. Invites older than three days are reported as expired, as PostHog's are.
 */
import type { FastifyInstance } from 'fastify';
import type { MembershipLevel, OrganizationInvite } from '../../store/types.js';
import { organizationParam, type MemberRouteDeps } from './routes.js';
import { inviteExpired } from './invite-links.js';
import { envelope, pageQuery, paginated, readPage } from '../../http/pagination.js';
import { publicBase } from '../../http/public-url.js';
import { apiRoute } from '../../http/route.js';
import { dateTime, level, levelOf, noContent, nullable, object, params, uuid } from '../../http/schemas.js';

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
  is_expired: inviteExpired(invite),
});

export async function registerInviteRoutes(app: FastifyInstance, { api, memberships }: MemberRouteDeps): Promise<void> {
  const base = { scope: 'organization_member', tag: 'organization_invites' };
  type OrgParams = { parent_lookup_organization_id: string };

  apiRoute<{ Params: OrgParams; Querystring: Record<string, unknown> }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/organizations/:parent_lookup_organization_id/invites/',
    summary: 'List pending invites',
    params: params(organizationParam),
    querystring: { type: 'object', properties: pageQuery },
    response: { 200: paginated(inviteSchema) },
    handler: async (request, principal) => {
      const { organization } = await api.access.organizationFor(principal, request.params.parent_lookup_organization_id);
      const page = readPage(request.query);
      const invites = await memberships.listInvites(organization.id, page);
      return envelope(request, api, page, { count: invites.count, results: invites.results.map(serialize) });
    },
  });

  apiRoute<{ Params: OrgParams; Body: { target_email: string; level?: MembershipLevel } }>(app, api, {
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
      const { membership: actor } = await api.access.organizationFor(principal, request.params.parent_lookup_organization_id);
      const level = request.body.level === undefined ? undefined : levelOf(request.body.level);
      const { invite, link } = await memberships.invite(actor, principal.user.id, request.body.target_email, level, publicBase(request, api.publicUrl));
      return reply.code(201).send({ ...serialize(invite), invite_link: link });
    },
  });

  apiRoute<{ Params: OrgParams & { id: string } }>(app, api, {
    ...base,
    method: 'DELETE',
    url: '/api/organizations/:parent_lookup_organization_id/invites/:id/',
    summary: 'Cancel a pending invite (admins and owners)',
    params: params({ ...organizationParam, id: 'Invite id' }),
    response: { 204: noContent },
    handler: async (request, principal, reply) => {
      const { membership: actor } = await api.access.organizationFor(principal, request.params.parent_lookup_organization_id);
      await memberships.cancelInvite(actor, request.params.id);
      return reply.code(204).send();
    },
  });
}
