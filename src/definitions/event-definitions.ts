/**
 * /api/projects/:project_id/event_definitions/: list (with search, by name), retrieve, edit
 * description and tags, delete. A deleted event comes back when it is ingested again.
 */
import type { FastifyInstance } from 'fastify';
import type { DefinitionRouteDeps } from './property-definitions.js';
import { envelope, pageQuery, paginated, readPage } from '../http/pagination.js';
import { searchWords } from '../http/query-params.js';
import { apiRoute } from '../http/route.js';
import { cleanTags, dateTime, noContent, nullable, object, params, patchBody, tags, uuid } from '../http/schemas.js';

const eventSchema = object({
  id: uuid,
  name: { type: 'string' },
  description: { type: ['string', 'null'] },
  tags: { type: 'array', items: { type: 'string' } },
  created_at: dateTime,
  last_seen_at: dateTime,
});

type ProjectParams = { project_id: string };
type DefinitionParams = ProjectParams & { id: string };

export async function registerEventDefinitionRoutes(app: FastifyInstance, { api, definitions }: DefinitionRouteDeps): Promise<void> {
  const base = { scope: 'event_definition', tag: 'event_definitions' };
  const definitionParams = params({ project_id: 'Project id, or @current', id: 'Event definition id' });

  apiRoute<{ Params: ProjectParams; Querystring: { limit?: number; offset?: number; search?: string } }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/projects/:project_id/event_definitions/',
    summary: 'List event definitions by name',
    params: params({ project_id: 'Project id, or @current' }),
    querystring: {
      type: 'object',
      properties: { ...pageQuery, search: { type: 'string', maxLength: 1000, description: 'Every word must occur in the name (case-insensitive)' } },
    },
    response: { 200: paginated(eventSchema) },
    handler: async (request, principal) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const page = readPage(request.query);
      return envelope(request, api, page, await definitions.listEvents({ ...page, projectId: project.id, searchWords: searchWords(request.query.search) }));
    },
  });

  apiRoute<{ Params: DefinitionParams }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/projects/:project_id/event_definitions/:id/',
    summary: 'Retrieve an event definition',
    params: definitionParams,
    response: { 200: eventSchema },
    handler: async (request, principal) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      return definitions.getEvent(project.id, request.params.id);
    },
  });

  apiRoute<{ Params: DefinitionParams; Body: { description?: string | null; tags?: string[] } }>(app, api, {
    ...base,
    method: 'PATCH',
    url: '/api/projects/:project_id/event_definitions/:id/',
    summary: "Update an event definition's description or tags",
    params: definitionParams,
    body: patchBody({ description: nullable({ type: 'string', maxLength: 4000 }), tags }),
    response: { 200: eventSchema },
    handler: async (request, principal) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      return definitions.updateEvent(project.id, request.params.id, { ...request.body, tags: cleanTags(request.body.tags) });
    },
  });

  apiRoute<{ Params: DefinitionParams }>(app, api, {
    ...base,
    method: 'DELETE',
    url: '/api/projects/:project_id/event_definitions/:id/',
    summary: 'Delete an event definition',
    params: definitionParams,
    response: { 204: noContent },
    handler: async (request, principal, reply) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      await definitions.deleteEvent(project.id, request.params.id);
      return reply.code(204).send();
    },
  });
}
