/**
 * /api/projects/: the projects of every organization the key's user belongs to (semantics
 * §6.3). Creating one needs an admin of its organization; any member may edit settings (as
 * PostHog's project permissions allow). Every change drops the token cache of the capture path.
 */
import type { FastifyInstance } from 'fastify';
import type { Membership, Project } from '../store/types.js';
import { newProjectApiKey } from '../util/keys.js';
import { organizationFor, projectFor } from '../http/auth.js';
import type { AppContext } from '../app-context.js';
import { notFound, permissionDenied, validationError } from '../kernel/errors.js';
import { ADMIN } from './member-rules.js';
import { envelope, pageQuery, paginated, readPage, slicePage } from '../http/pagination.js';
import { apiRoute } from '../http/route.js';
import { dateTime, object, params, patchBody, uuid } from '../http/schemas.js';

export const projectSchema = object({
  id: { type: 'integer' },
  uuid,
  organization: uuid,
  api_token: { type: 'string', description: 'Project API key for SDKs and capture' },
  name: { type: 'string' },
  timezone: { type: 'string' },
  anonymize_ips: { type: 'boolean' },
  created_at: dateTime,
  effective_membership_level: { type: 'integer', enum: [1, 8, 15] },
});

export const serializeProject = (project: Project, membership: Membership) => ({
  ...project,
  organization: project.organization_id,
  effective_membership_level: membership.level,
});

const settings = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  timezone: { type: 'string', maxLength: 100, description: 'IANA time zone, e.g. Europe/Paris' },
  anonymize_ips: { type: 'boolean' },
};

type Settings = { name?: string; timezone?: string; anonymize_ips?: boolean };

function checkTimezone(timezone: string | undefined): void {
  if (timezone === undefined) return;
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw validationError(`"${timezone}" is not a valid time zone.`, 'timezone', 'invalid_choice');
  }
}

export async function registerProjectRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const tenancy = ctx.stores.meta.tenancy;
  const base = { scope: 'project', tag: 'projects' };
  const projectParams = params({ id: 'Project id, or @current' });

  apiRoute<{ Querystring: Record<string, unknown> }>(app, ctx, {
    ...base,
    method: 'GET',
    url: '/api/projects/',
    summary: "List the projects of the user's organizations",
    querystring: { type: 'object', properties: pageQuery },
    response: { 200: paginated(projectSchema) },
    handler: async (request, principal) => {
      const page = readPage(request.query);
      const all = [];
      for (const membership of await tenancy.listMembershipsOfUser(principal.user.id)) {
        for (const project of await tenancy.listProjectsOfOrganization(membership.organization_id)) all.push(serializeProject(project, membership));
      }
      all.sort((a, b) => a.id - b.id);
      return envelope(request, ctx, page, slicePage(all, page));
    },
  });

  apiRoute<{ Body: Settings & { name: string; organization?: string } }>(app, ctx, {
    ...base,
    method: 'POST',
    url: '/api/projects/',
    summary: 'Create a project with its own api_token (organization admins and owners)',
    body: object({ ...settings, organization: { type: 'string', description: 'Organization id (default: your current one)' } }, [
      'timezone',
      'anonymize_ips',
      'organization',
    ]),
    response: { 201: projectSchema },
    handler: async (request, principal, reply) => {
      const { name, timezone, anonymize_ips, organization } = request.body;
      const { membership } = await organizationFor(ctx, principal, organization ?? '@current');
      if (membership.level < ADMIN) throw permissionDenied('Your organization access level is insufficient.');
      checkTimezone(timezone);
      const created = await tenancy.createProject({ organizationId: membership.organization_id, name, apiToken: newProjectApiKey() });
      const project = timezone !== undefined || anonymize_ips !== undefined ? await tenancy.updateProject(created.id, { timezone, anonymize_ips }) : created;
      ctx.projects.invalidate();
      return reply.code(201).send(serializeProject(project!, membership));
    },
  });

  apiRoute<{ Params: { id: string } }>(app, ctx, {
    ...base,
    method: 'GET',
    url: '/api/projects/:id/',
    summary: 'Retrieve a project',
    params: projectParams,
    response: { 200: projectSchema },
    handler: async (request, principal) => {
      const { project, membership } = await projectFor(ctx, principal, request.params.id);
      return serializeProject(project, membership);
    },
  });

  apiRoute<{ Params: { id: string }; Body: Settings }>(app, ctx, {
    ...base,
    method: 'PATCH',
    url: '/api/projects/:id/',
    summary: "Update a project's name, time zone or IP anonymisation",
    params: projectParams,
    body: patchBody(settings),
    response: { 200: projectSchema },
    handler: async (request, principal) => {
      const { project, membership } = await projectFor(ctx, principal, request.params.id);
      const { name, timezone, anonymize_ips } = request.body ?? {};
      checkTimezone(timezone);
      const updated = await tenancy.updateProject(project.id, { name, timezone, anonymize_ips });
      if (!updated) throw notFound('Project not found.');
      ctx.projects.invalidate();
      return serializeProject(updated, membership);
    },
  });
}
