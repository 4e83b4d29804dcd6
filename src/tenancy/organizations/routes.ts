/**
 * /api/organizations/: the organizations the key's user belongs to; any other id is 404.
 * `@current` is the user's first (oldest) membership.
 */
import type { FastifyInstance } from 'fastify';
import type { ApiKit } from '../../http/auth.js';
import { envelope, pageQuery, paginated, readPage } from '../../http/pagination.js';
import { apiRoute } from '../../http/route.js';
import { dateTime, object, params, uuid } from '../../http/schemas.js';
import type { Organizations, OrganizationView } from './service.js';

const organizationSchema = object({
  id: uuid,
  name: { type: 'string' },
  created_at: dateTime,
  membership_level: { type: 'integer', enum: [1, 8, 15] },
  projects: { type: 'array', items: object({ id: { type: 'integer' }, uuid, name: { type: 'string' } }) },
});

const serialize = ({ organization, membership, projects }: OrganizationView) => ({ ...organization, membership_level: membership.level, projects });

export interface OrganizationRouteDeps {
  api: ApiKit;
  organizations: Organizations;
}

export async function registerOrganizationRoutes(app: FastifyInstance, { api, organizations }: OrganizationRouteDeps): Promise<void> {
  const base = { scope: 'organization', tag: 'organizations' };

  apiRoute<{ Querystring: Record<string, unknown> }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/organizations/',
    summary: 'List the organizations you belong to',
    querystring: { type: 'object', properties: pageQuery },
    response: { 200: paginated(organizationSchema) },
    handler: async (request, principal) => {
      const page = readPage(request.query);
      const visible = await organizations.visibleTo(principal.user.id, page);
      return envelope(request, api, page, { count: visible.count, results: visible.results.map(serialize) });
    },
  });

  apiRoute<{ Params: { id: string } }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/organizations/:id/',
    summary: 'Retrieve an organization',
    params: params({ id: 'Organization id, or @current' }),
    response: { 200: organizationSchema },
    handler: async (request, principal) => {
      const { organization, membership } = await api.access.organizationFor(principal, request.params.id);
      return serialize(await organizations.view(organization, membership));
    },
  });
}
