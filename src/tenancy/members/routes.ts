/**
 * /api/organizations/:id/members/ (docs/api.md, "Organization members"): list, add an existing user
 * by e-mail, change a level, remove. The rules are the service's (service.ts, rules.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { Membership, MembershipLevel, User } from '../../store/types.js';
import type { ApiKit, Principal } from '../../http/auth.js';
import type { Memberships, MemberRef } from './service.js';
import { envelope, pageQuery, paginated, readPage } from '../../http/pagination.js';
import { apiRoute } from '../../http/route.js';
import { dateTime, level, noContent, object, params, userBasic } from '../../http/schemas.js';

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

export const organizationParam = { parent_lookup_organization_id: 'Organization id, or @current' };

export interface MemberRouteDeps {
  api: ApiKit;
  memberships: Memberships;
}

export async function registerMemberRoutes(app: FastifyInstance, { api, memberships }: MemberRouteDeps): Promise<void> {
  const base = { scope: 'organization_member', tag: 'organization_members' };
  const memberParams = params({ ...organizationParam, user__uuid: "The member's user uuid, or @me" });
  type MemberParams = { parent_lookup_organization_id: string; user__uuid: string };

  const memberRef = async (principal: Principal, p: MemberParams): Promise<MemberRef> => {
    const { membership: actor } = await api.access.organizationFor(principal, p.parent_lookup_organization_id);
    return { actor, actingUser: principal.user, userUuid: p.user__uuid };
  };

  apiRoute<{ Params: { parent_lookup_organization_id: string }; Querystring: Record<string, unknown> }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/organizations/:parent_lookup_organization_id/members/',
    summary: 'List the members of an organization (newest first)',
    params: params(organizationParam),
    querystring: { type: 'object', properties: pageQuery },
    response: { 200: paginated(memberSchema) },
    handler: async (request, principal) => {
      const { organization } = await api.access.organizationFor(principal, request.params.parent_lookup_organization_id);
      const page = readPage(request.query);
      const members = await memberships.list(organization.id, page);
      return envelope(request, api, page, { count: members.count, results: members.results.map((m) => serializeMember(m.membership, m.user)) });
    },
  });

  apiRoute<{ Params: { parent_lookup_organization_id: string }; Body: { email: string; level?: MembershipLevel } }>(app, api, {
    ...base,
    method: 'POST',
    url: '/api/organizations/:parent_lookup_organization_id/members/',
    summary: 'Add an existing user by e-mail (admins and owners; a pending invite supplies the default level)',
    params: params(organizationParam),
    body: object({ email: { type: 'string', format: 'email', maxLength: 254 }, level }, ['level']),
    response: { 201: memberSchema },
    handler: async (request, principal, reply) => {
      const { membership: actor } = await api.access.organizationFor(principal, request.params.parent_lookup_organization_id);
      const { membership, user } = await memberships.add(actor, request.body.email, request.body.level);
      return reply.code(201).send(serializeMember(membership, user));
    },
  });

  apiRoute<{ Params: MemberParams; Body: { level: MembershipLevel } }>(app, api, {
    ...base,
    method: 'PATCH',
    url: '/api/organizations/:parent_lookup_organization_id/members/:user__uuid/',
    summary: "Change a member's level",
    params: memberParams,
    body: object({ level }),
    response: { 200: memberSchema },
    handler: async (request, principal) => {
      const { membership, user } = await memberships.changeLevel(await memberRef(principal, request.params), request.body.level);
      return serializeMember(membership, user);
    },
  });

  apiRoute<{ Params: MemberParams }>(app, api, {
    ...base,
    method: 'DELETE',
    url: '/api/organizations/:parent_lookup_organization_id/members/:user__uuid/',
    summary: 'Remove a member (or leave, with @me); owners cannot be removed',
    params: memberParams,
    response: { 204: noContent },
    handler: async (request, principal, reply) => {
      await memberships.remove(await memberRef(principal, request.params));
      return reply.code(204).send();
    },
  });
}
