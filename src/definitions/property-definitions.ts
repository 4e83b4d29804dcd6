/**
 * /api/projects/:project_id/property_definitions/ (docs/api.md, "Property definitions"): list
 * with PostHog's filters, retrieve, edit, delete, and seen_together. After an edit that removes a
 * name (delete, rename) the ingestion cache is dropped so that a name seen again is re-created.
 */
import type { FastifyInstance } from 'fastify';
import type { PropertyDefinitionPatch } from '../store/types.js';
import type { ApiKit } from '../http/auth.js';
import type { Definitions } from './service.js';
import { validationError } from '../kernel/errors.js';
import { envelope, pageQuery, paginated, readPage } from '../http/pagination.js';
import { commaList, jsonStringList, searchWords } from '../http/query-params.js';
import { apiRoute } from '../http/route.js';
import { cleanTags, noContent, object, params, patchBody, tags, uuid } from '../http/schemas.js';

const VALUE_TYPES = ['DateTime', 'String', 'Numeric', 'Boolean'];
const TYPES = { event: 1, person: 2, group: 3 } as const;

const definitionSchema = object({
  id: uuid,
  name: { type: 'string' },
  is_numerical: { type: 'boolean' },
  property_type: { type: ['string', 'null'], enum: [...VALUE_TYPES, null] },
  tags: { type: 'array', items: { type: 'string' } },
  is_seen_on_filtered_events: { type: ['boolean', 'null'], description: 'Set only when the list was asked with event_names' },
});

const bool = (description: string) => ({ type: 'boolean', description });

const listQuery = {
  type: 'object',
  properties: {
    ...pageQuery,
    type: { type: 'string', enum: Object.keys(TYPES), default: 'event' },
    group_type_index: { type: 'integer', minimum: 0, maximum: 4, description: 'Only with type=group (then required)' },
    search: { type: 'string', maxLength: 1000, description: 'Every word must occur in the name (case-insensitive)' },
    properties: { type: 'string', description: 'Comma-separated exact names to keep' },
    excluded_properties: { type: 'string', description: 'JSON-encoded list of names to leave out' },
    event_names: { type: 'string', description: 'JSON-encoded list of events; fills is_seen_on_filtered_events (type=event only)' },
    filter_by_event_names: bool('Keep only properties seen with event_names'),
    is_feature_flag: bool('true: only $feature/ properties; false: none of them'),
    is_numerical: bool('true: only numerical properties; false: only the others'),
  },
};

interface ListQuery {
  limit?: number;
  offset?: number;
  type?: keyof typeof TYPES;
  group_type_index?: number;
  search?: string;
  properties?: string;
  excluded_properties?: string;
  event_names?: string;
  filter_by_event_names?: boolean;
  is_feature_flag?: boolean;
  is_numerical?: boolean;
}

type ProjectParams = { project_id: string };
type DefinitionParams = ProjectParams & { id: string };

export interface DefinitionRouteDeps {
  api: ApiKit;
  definitions: Definitions;
}

export async function registerPropertyDefinitionRoutes(app: FastifyInstance, { api, definitions }: DefinitionRouteDeps): Promise<void> {
  const base = { scope: 'property_definition', tag: 'property_definitions' };
  const projectParams = params({ project_id: 'Project id, or @current' });
  const definitionParams = params({ project_id: 'Project id, or @current', id: 'Property definition id' });

  apiRoute<{ Params: ProjectParams; Querystring: ListQuery }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/projects/:project_id/property_definitions/',
    summary: 'List property definitions (seen-on-events first when event_names is given, then by name)',
    params: projectParams,
    querystring: listQuery,
    response: { 200: paginated(definitionSchema) },
    handler: async (request, principal) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const q = request.query;
      const type = TYPES[q.type ?? 'event'];
      if (type === TYPES.group && q.group_type_index === undefined) {
        throw validationError('group_type_index is required when type is group.', 'group_type_index', 'required');
      }
      if (type !== TYPES.group && q.group_type_index !== undefined) {
        throw validationError('group_type_index can only be set when type is group.', 'group_type_index');
      }
      const eventNames = jsonStringList(q.event_names, 'event_names');
      if (eventNames !== null && type !== TYPES.event) throw validationError('event_names can only be used with type=event.', 'event_names');
      const page = readPage(q);
      const result = await definitions.listProperties({
        ...page,
        projectId: project.id,
        type,
        groupTypeIndex: q.group_type_index ?? null,
        searchWords: searchWords(q.search),
        names: commaList(q.properties),
        excludedNames: jsonStringList(q.excluded_properties, 'excluded_properties') ?? [],
        eventNames,
        onlySeenWithEvents: q.filter_by_event_names === true,
        isFeatureFlag: q.is_feature_flag ?? null,
        isNumerical: q.is_numerical ?? null,
      });
      return envelope(request, api, page, result);
    },
  });

  // Static segment: registered alongside `:id`, the router prefers it.
  apiRoute<{ Params: ProjectParams; Querystring: { event_names: string; property_name: string } }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/projects/:project_id/property_definitions/seen_together/',
    summary: 'For each event name: was the property ever seen with it',
    params: projectParams,
    querystring: object({
      event_names: { type: 'string', description: 'JSON-encoded list of event names' },
      property_name: { type: 'string', minLength: 1 },
    }),
    response: { 200: { type: 'object', additionalProperties: { type: 'boolean' }, description: '{"<event>": true|false}' } },
    handler: async (request, principal) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const eventNames = jsonStringList(request.query.event_names, 'event_names') ?? [];
      return definitions.seenTogether(project.id, eventNames, request.query.property_name);
    },
  });

  apiRoute<{ Params: DefinitionParams }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/projects/:project_id/property_definitions/:id/',
    summary: 'Retrieve a property definition',
    params: definitionParams,
    response: { 200: definitionSchema },
    handler: async (request, principal) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      return definitions.getProperty(project.id, request.params.id);
    },
  });

  apiRoute<{ Params: DefinitionParams; Body: PropertyDefinitionPatch }>(app, api, {
    ...base,
    method: 'PATCH',
    url: '/api/projects/:project_id/property_definitions/:id/',
    summary: 'Update name, is_numerical, property_type or tags (a new property_type also sets is_numerical unless given)',
    params: definitionParams,
    body: patchBody({
      name: { type: 'string', minLength: 1, maxLength: 400 },
      is_numerical: { type: 'boolean' },
      property_type: { type: 'string', enum: VALUE_TYPES },
      tags,
    }),
    response: { 200: definitionSchema },
    handler: async (request, principal) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const patch = { ...request.body, tags: cleanTags(request.body.tags) };
      return definitions.updateProperty(project.id, request.params.id, patch);
    },
  });

  apiRoute<{ Params: DefinitionParams }>(app, api, {
    ...base,
    method: 'DELETE',
    url: '/api/projects/:project_id/property_definitions/:id/',
    summary: 'Delete a property definition (ingestion re-creates it if the property is seen again)',
    params: definitionParams,
    response: { 204: noContent },
    handler: async (request, principal, reply) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      await definitions.deleteProperty(project.id, request.params.id);
      return reply.code(204).send();
    },
  });
}
