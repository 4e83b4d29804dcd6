/**
 * /api/projects/:project_id/feature_flags/ (https://posthog.com/docs/api/feature-flags): list,
 * create, retrieve, update, soft delete (`PATCH {"deleted": true}`) and hard delete. The write
 * rules are the service's (service.ts); this module declares the routes and shapes the answers.
 */
import type { FastifyInstance } from 'fastify';
import type { ApiKit } from '../../http/auth.js';
import { envelope, pageQuery, paginated, readPage } from '../../http/pagination.js';
import { searchWords } from '../../http/query-params.js';
import { apiRoute } from '../../http/route.js';
import { dateTime, noContent, nullable, object, params, patchBody, userBasic } from '../../http/schemas.js';
import type { StoredFlag, User } from '../../store/types.js';
import type { FeatureFlag } from '../engine/types.js';
import type { BlastRadiusInput, FlagInput, FlagManagement } from './service.js';

const flagSchema = object({
  id: { type: 'integer' },
  key: { type: 'string' },
  name: { type: 'string' },
  filters: { type: 'object', additionalProperties: true },
  active: { type: 'boolean' },
  deleted: { type: 'boolean' },
  ensure_experience_continuity: { type: 'boolean' },
  version: { type: 'integer', description: '1 on create, +1 per update' },
  created_at: dateTime,
  created_by: nullable(userBasic),
  updated_at: dateTime,
  is_simple_flag: { type: 'boolean', description: 'One condition without properties, not group-based' },
  rollout_percentage: { type: ['number', 'null'], description: "The simple flag's rollout; null otherwise" },
});

const writable = {
  key: { type: 'string', maxLength: 400, description: 'Letters, numbers, - and _; unique among non-deleted flags' },
  name: { type: 'string', maxLength: 400, description: 'Description' },
  filters: { type: 'object', description: 'groups, multivariate, payloads, aggregation_group_type_index, …' },
  active: { type: 'boolean' },
  deleted: { type: 'boolean', description: 'true: soft delete' },
  ensure_experience_continuity: { type: 'boolean' },
};

type ProjectParams = { project_id: string };
type FlagParams = ProjectParams & { id: string };

function isSimple(flag: FeatureFlag): boolean {
  const groups = flag.filters.groups ?? [];
  return groups.length === 1 && (groups[0].properties ?? []).length === 0 && (flag.filters.aggregation_group_type_index ?? null) === null;
}

function serialize(flag: StoredFlag, users: Map<number, User>) {
  const simple = isSimple(flag);
  return {
    ...flag,
    created_by: flag.created_by === null ? null : (users.get(flag.created_by) ?? null),
    is_simple_flag: simple,
    rollout_percentage: simple ? (flag.filters.groups[0].rollout_percentage ?? null) : null,
  };
}

export interface FeatureFlagRouteDeps {
  api: ApiKit;
  flags: FlagManagement;
}

export async function registerFeatureFlagRoutes(app: FastifyInstance, { api, flags }: FeatureFlagRouteDeps): Promise<void> {
  const base = { scope: 'feature_flag', tag: 'feature_flags' };
  const projectParams = params({ project_id: 'Project id, or @current' });
  const flagParams = params({ project_id: 'Project id, or @current', id: 'Feature flag id' });

  const respond = async (flag: StoredFlag) => serialize(flag, await flags.creators([flag]));

  apiRoute<{ Params: ProjectParams; Querystring: { limit?: number; offset?: number; search?: string; active?: boolean } }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/projects/:project_id/feature_flags/',
    summary: 'List feature flags (not deleted), newest first',
    params: projectParams,
    querystring: {
      type: 'object',
      properties: {
        ...pageQuery,
        search: { type: 'string', maxLength: 1000, description: 'Every word must occur in the key or the name' },
        active: { type: 'boolean' },
      },
    },
    response: { 200: paginated(flagSchema) },
    handler: async (request, principal) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const page = readPage(request.query);
      const result = await flags.page({ ...page, projectId: project.id, searchWords: searchWords(request.query.search), active: request.query.active ?? null });
      const users = await flags.creators(result.results);
      return envelope(request, api, page, { count: result.count, results: result.results.map((flag) => serialize(flag, users)) });
    },
  });

  apiRoute<{ Params: ProjectParams; Body: FlagInput }>(app, api, {
    ...base,
    method: 'POST',
    url: '/api/projects/:project_id/feature_flags/',
    summary: 'Create a feature flag (version 1)',
    params: projectParams,
    body: patchBody(writable),
    response: { 201: flagSchema },
    handler: async (request, principal, reply) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const created = await flags.create(project.id, principal.user.id, request.body ?? {});
      return reply.code(201).send(await respond(created));
    },
  });

  apiRoute<{ Params: FlagParams }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/projects/:project_id/feature_flags/:id/',
    summary: 'Retrieve a feature flag (soft-deleted ones too)',
    params: flagParams,
    response: { 200: flagSchema },
    handler: async (request, principal) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      return respond(await flags.get(project.id, request.params.id));
    },
  });

  apiRoute<{ Params: FlagParams; Body: FlagInput }>(app, api, {
    ...base,
    method: 'PATCH',
    url: '/api/projects/:project_id/feature_flags/:id/',
    summary: 'Update a feature flag (version + 1); {"deleted": true} soft-deletes it, {"deleted": false} restores it',
    params: flagParams,
    body: patchBody(writable),
    response: { 200: flagSchema },
    handler: async (request, principal) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const updated = await flags.update(project.id, request.params.id, request.body ?? {});
      return respond(updated);
    },
  });

  apiRoute<{ Params: FlagParams }>(app, api, {
    ...base,
    method: 'DELETE',
    url: '/api/projects/:project_id/feature_flags/:id/',
    summary: 'Delete a feature flag for good (PATCH {"deleted": true} soft-deletes instead)',
    params: flagParams,
    response: { 204: noContent },
    handler: async (request, principal, reply) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      await flags.remove(project.id, request.params.id);
      return reply.code(204).send();
    },
  });

  apiRoute<{ Params: ProjectParams; Body: BlastRadiusInput }>(app, api, {
    ...base,
    action: 'read',
    method: 'POST',
    url: '/api/projects/:project_id/feature_flags/user_blast_radius/',
    summary: 'How many persons (or, with group_type_index, groups of that type) a release condition matches, of all of them (its rollout percentage not applied)',
    params: projectParams,
    body: {
      type: 'object',
      properties: {
        condition: { type: 'object', description: 'A release condition: {"properties": [...], "rollout_percentage"?}' },
        group_type_index: { type: ['integer', 'null'], description: "A group flag's type index: count groups of that type by their properties" },
      },
    },
    response: { 200: object({ users_affected: { type: 'integer' }, total_users: { type: 'integer' } }) },
    handler: async (request, principal) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      return flags.blastRadius(project.id, request.body ?? {});
    },
  });
}
