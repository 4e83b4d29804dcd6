/**
 * /api/organizations/: the organizations the key's user belongs to; any other id is 404.
 * `@current` is the user's first (oldest) membership.
 */
import type { FastifyInstance } from 'fastify';
import type { Membership, Organization } from '../store/types.js';
import { organizationFor } from '../http/auth.js';
import type { AppContext } from '../app-context.js';
import { envelope, pageQuery, paginated, readPage, slicePage } from '../http/pagination.js';
import { apiRoute } from '../http/route.js';
import { dateTime, object, params, uuid } from '../http/schemas.js';

const organizationSchema = object({
  id: uuid,
  name: { type: 'string' },
  created_at: dateTime,
  membership_level: { type: 'integer', enum: [1, 8, 15] },
  projects: { type: 'array', items: object({ id: { type: 'integer' }, uuid, name: { type: 'string' } }) },
});

export async function registerOrganizationRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const tenancy = ctx.stores.meta.tenancy;
  const base = { scope: 'organization', tag: 'organizations' };

  const serialize = async (organization: Organization, membership: Membership) => ({
    ...organization,
    membership_level: membership.level,
    projects: await tenancy.listProjectsOfOrganization(organization.id),
  });

  apiRoute<{ Querystring: Record<string, unknown> }>(app, ctx, {
    ...base,
    method: 'GET',
    url: '/api/organizations/',
    summary: 'List the organizations you belong to',
    querystring: { type: 'object', properties: pageQuery },
    response: { 200: paginated(organizationSchema) },
    handler: async (request, principal) => {
      const page = readPage(request.query);
      const memberships = await tenancy.listMembershipsOfUser(principal.user.id);
      const visible = slicePage(memberships, page);
      const results = [];
      for (const membership of visible.results) {
        const organization = await tenancy.getOrganization(membership.organization_id);
        if (organization) results.push(await serialize(organization, membership));
      }
      return envelope(request, ctx, page, { count: visible.count, results });
    },
  });

  apiRoute<{ Params: { id: string } }>(app, ctx, {
    ...base,
    method: 'GET',
    url: '/api/organizations/:id/',
    summary: 'Retrieve an organization',
    params: params({ id: 'Organization id, or @current' }),
    response: { 200: organizationSchema },
    handler: async (request, principal) => {
      const { organization, membership } = await organizationFor(ctx, principal, request.params.id);
      return serialize(organization, membership);
    },
  });
}
