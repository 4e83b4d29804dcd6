/**
 * /api/projects/: the projects of every organization the key's user belongs to (docs/api.md,
 * "Projects and organizations"). Who may create and edit them is the service's rule (service.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { Membership, Project } from '../../store/types.js';
import type { ApiKit } from '../../http/auth.js';
import { envelope, pageQuery, paginated, readPage, slicePage } from '../../http/pagination.js';
import { apiRoute } from '../../http/route.js';
import { dateTime, object, params, patchBody, uuid } from '../../http/schemas.js';
import type { Projects, ProjectSettings } from './service.js';

export const projectSchema = object({
  id: { type: 'integer' },
  uuid,
  organization: uuid,
  api_token: { type: 'string', description: 'Project API key for SDKs and capture' },
  name: { type: 'string' },
  timezone: { type: 'string' },
  anonymize_ips: { type: 'boolean' },
  week_start_day: { type: ['integer', 'null'], enum: [0, 1, null], description: 'First day of week buckets: 0 Sunday, 1 Monday, null Sunday' },
  test_account_filters: { type: 'array', items: { type: 'object', additionalProperties: true } },
  created_at: dateTime,
  effective_membership_level: { type: 'integer', enum: [1, 8, 15] },
});

export const serializeProject = (project: Project, membership: Membership) => ({
  ...project,
  organization: project.organization_id,
  effective_membership_level: membership.level,
});

const settingsSchema = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  timezone: { type: 'string', maxLength: 100, description: 'IANA time zone, e.g. Europe/Paris' },
  anonymize_ips: { type: 'boolean' },
  week_start_day: { description: 'First day of week buckets: 0 Sunday, 1 Monday, null Sunday' },
  test_account_filters: { description: 'Property filters that leave out internal and test users when a query sets filterTestAccounts' },
};

export interface ProjectRouteDeps {
  api: ApiKit;
  projects: Projects;
}

export async function registerProjectRoutes(app: FastifyInstance, { api, projects }: ProjectRouteDeps): Promise<void> {
  const base = { scope: 'project', tag: 'projects' };
  const projectParams = params({ id: 'Project id, or @current' });

  apiRoute<{ Querystring: Record<string, unknown> }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/projects/',
    summary: "List the projects of the user's organizations",
    querystring: { type: 'object', properties: pageQuery },
    response: { 200: paginated(projectSchema) },
    handler: async (request, principal) => {
      const page = readPage(request.query);
      const all = (await projects.visibleTo(principal.user.id)).map(({ project, membership }) => serializeProject(project, membership));
      return envelope(request, api, page, slicePage(all, page));
    },
  });

  apiRoute<{ Body: ProjectSettings & { name: string; organization?: string } }>(app, api, {
    ...base,
    method: 'POST',
    url: '/api/projects/',
    summary: 'Create a project with its own api_token (organization admins and owners)',
    body: object({ ...settingsSchema, organization: { type: 'string', description: 'Organization id (default: your current one)' } }, [
      'timezone',
      'anonymize_ips',
      'organization',
    ]),
    response: { 201: projectSchema },
    handler: async (request, principal, reply) => {
      const { organization, ...settings } = request.body;
      const { membership } = await api.access.organizationFor(principal, organization ?? '@current');
      const project = await projects.create(membership, settings);
      return reply.code(201).send(serializeProject(project, membership));
    },
  });

  apiRoute<{ Params: { id: string } }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/projects/:id/',
    summary: 'Retrieve a project',
    params: projectParams,
    response: { 200: projectSchema },
    handler: async (request, principal) => {
      const { project, membership } = await api.access.projectFor(principal, request.params.id);
      return serializeProject(project, membership);
    },
  });

  apiRoute<{ Params: { id: string }; Body: ProjectSettings }>(app, api, {
    ...base,
    method: 'PATCH',
    url: '/api/projects/:id/',
    summary: "Update a project's name, time zone, IP anonymisation, week start or test account filters",
    params: projectParams,
    body: patchBody(settingsSchema),
    response: { 200: projectSchema },
    handler: async (request, principal) => {
      const { project, membership } = await api.access.projectFor(principal, request.params.id);
      const { name, timezone, anonymize_ips, week_start_day, test_account_filters } = request.body ?? {};
      return serializeProject(await projects.update(project.id, { name, timezone, anonymize_ips, week_start_day, test_account_filters }), membership);
    },
  });
}
