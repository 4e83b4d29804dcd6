/**
 * /api/projects/:project_id/feature_flags/ (semantics §4.7): list, create, retrieve, update,
 * soft delete (`PATCH {"deleted": true}`) and hard delete. Filters are validated by the flag
 * engine's own rules, flag dependencies must resolve without cycles, and every write drops
 * the project's cached flags so /decide and /flags see it at once.
 */
import type { FastifyInstance } from 'fastify';
import { numericId } from '../../util/numeric-id.js';
import { dependencyChain, resolveDependency } from '../engine/dependencies.js';
import { FlagValidationError, indexFlags, validateFlagFilters, validateFlagKey } from '../engine/index.js';
import type { FeatureFlag } from '../engine/types.js';
import type { FlagWrite, StoredFlag, User } from '../../store/types.js';
import { projectFor } from '../../http/auth.js';
import type { AppContext } from '../../app-context.js';
import { notFound, validationError } from '../../kernel/errors.js';
import { envelope, pageQuery, paginated, readPage } from '../../http/pagination.js';
import { searchWords } from '../../http/query-params.js';
import { apiRoute } from '../../http/route.js';
import { dateTime, noContent, nullable, object, params, patchBody, userBasic } from '../../http/schemas.js';

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

type FlagBody = { key?: string; name?: string; filters?: unknown; active?: boolean; deleted?: boolean; ensure_experience_continuity?: boolean };
type ProjectParams = { project_id: string };
type FlagParams = ProjectParams & { id: string };

/** The engine's validation failures as the API's 400s, `attr` included. */
function checked<T>(validate: () => T): T {
  try {
    return validate();
  } catch (error) {
    if (error instanceof FlagValidationError) throw validationError(error.detail, error.attr, error.code);
    throw error;
  }
}

const keyTaken = () => validationError('There is already a feature flag with this key.', 'key', 'unique');

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

/** Every flag dependency of `candidate` must resolve, without a cycle, among the project's flags. */
function checkDependencies(candidate: FeatureFlag, others: FeatureFlag[]): void {
  const index = indexFlags([...others.filter((flag) => flag.id !== candidate.id), candidate]);
  (candidate.filters.groups ?? []).forEach((condition, c) =>
    (condition.properties ?? []).forEach((filter, p) => {
      if (filter.type === 'flag' && dependencyChain(index, String(filter.key)).length === 0) {
        throw validationError(`Flag dependency "${filter.key}" does not exist or loops back to this flag.`, `filters__groups__${c}__properties__${p}__key`);
      }
    }),
  );
}

/** A flag other flags depend on cannot be deleted (PostHog refuses too). */
function checkNoDependents(target: FeatureFlag, flags: FeatureFlag[]): void {
  const index = indexFlags(flags);
  const dependents = flags.filter(
    (flag) =>
      flag.id !== target.id &&
      (flag.filters.groups ?? []).some((condition) =>
        (condition.properties ?? []).some((filter) => filter.type === 'flag' && resolveDependency(index, String(filter.key))?.id === target.id),
      ),
  );
  if (dependents.length > 0) {
    throw validationError(`Cannot delete a feature flag that other flags depend on: ${dependents.map((flag) => flag.key).join(', ')}.`, null);
  }
}

export async function registerFeatureFlagRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const store = ctx.stores.meta.flags;
  const service = ctx.flags;
  const base = { scope: 'feature_flag', tag: 'feature_flags' };
  const projectParams = params({ project_id: 'Project id, or @current' });
  const flagParams = params({ project_id: 'Project id, or @current', id: 'Feature flag id' });

  const usersOf = async (flags: StoredFlag[]) => {
    const users = new Map<number, User>();
    for (const id of new Set(flags.map((flag) => flag.created_by))) {
      const user = id === null ? null : await ctx.stores.meta.tenancy.getUser(id);
      if (user) users.set(user.id, user);
    }
    return users;
  };
  const respond = async (flag: StoredFlag) => serialize(flag, await usersOf([flag]));
  const flagOf = async (projectId: number, id: string) => {
    const numeric = numericId(id);
    const flag = numeric === null ? null : await store.get(projectId, numeric);
    if (!flag) throw notFound();
    return flag;
  };

  apiRoute<{ Params: ProjectParams; Querystring: { limit?: number; offset?: number; search?: string; active?: boolean } }>(app, ctx, {
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
      const { project } = await projectFor(ctx, principal, request.params.project_id);
      const page = readPage(request.query);
      const result = await store.page({ ...page, projectId: project.id, searchWords: searchWords(request.query.search), active: request.query.active ?? null });
      const users = await usersOf(result.results);
      return envelope(request, ctx, page, { count: result.count, results: result.results.map((flag) => serialize(flag, users)) });
    },
  });

  apiRoute<{ Params: ProjectParams; Body: FlagBody }>(app, ctx, {
    ...base,
    method: 'POST',
    url: '/api/projects/:project_id/feature_flags/',
    summary: 'Create a feature flag (version 1)',
    params: projectParams,
    body: patchBody(writable),
    response: { 201: flagSchema },
    handler: async (request, principal, reply) => {
      const { project } = await projectFor(ctx, principal, request.params.project_id);
      const body = request.body ?? {};
      if (body.key === undefined) throw validationError('This field is required.', 'key', 'required');
      const flag: FlagWrite = {
        key: checked(() => validateFlagKey(body.key)),
        name: body.name ?? '',
        filters: checked(() => validateFlagFilters(body.filters ?? {})),
        active: body.active ?? true,
        deleted: false,
        ensure_experience_continuity: body.ensure_experience_continuity ?? false,
      };
      checkDependencies({ ...flag, id: 0, version: 1 }, await store.list(project.id));
      const created = await store.create(project.id, principal.user.id, flag);
      if (created === 'key_taken') throw keyTaken();
      service.cache.invalidate(project.id);
      return reply.code(201).send(await respond(created));
    },
  });

  apiRoute<{ Params: FlagParams }>(app, ctx, {
    ...base,
    method: 'GET',
    url: '/api/projects/:project_id/feature_flags/:id/',
    summary: 'Retrieve a feature flag (soft-deleted ones too)',
    params: flagParams,
    response: { 200: flagSchema },
    handler: async (request, principal) => {
      const { project } = await projectFor(ctx, principal, request.params.project_id);
      return respond(await flagOf(project.id, request.params.id));
    },
  });

  apiRoute<{ Params: FlagParams; Body: FlagBody }>(app, ctx, {
    ...base,
    method: 'PATCH',
    url: '/api/projects/:project_id/feature_flags/:id/',
    summary: 'Update a feature flag (version + 1); {"deleted": true} soft-deletes it, {"deleted": false} restores it',
    params: flagParams,
    body: patchBody(writable),
    response: { 200: flagSchema },
    handler: async (request, principal) => {
      const { project } = await projectFor(ctx, principal, request.params.project_id);
      const current = await flagOf(project.id, request.params.id);
      const body = request.body ?? {};
      const patch: Partial<FlagWrite> = {
        key: body.key === undefined ? undefined : checked(() => validateFlagKey(body.key)),
        name: body.name,
        filters: body.filters === undefined ? undefined : checked(() => validateFlagFilters(body.filters)),
        active: body.active,
        deleted: body.deleted,
        ensure_experience_continuity: body.ensure_experience_continuity,
      };
      const others = await store.list(project.id);
      if (patch.key !== undefined || patch.filters !== undefined) {
        checkDependencies({ ...current, key: patch.key ?? current.key, filters: patch.filters ?? current.filters }, others);
      }
      if (patch.deleted === true && !current.deleted) checkNoDependents(current, others);
      const updated = await store.update(project.id, current.id, patch);
      if (updated === 'not_found') throw notFound();
      if (updated === 'key_taken') throw keyTaken();
      service.cache.invalidate(project.id);
      return respond(updated);
    },
  });

  apiRoute<{ Params: FlagParams }>(app, ctx, {
    ...base,
    method: 'DELETE',
    url: '/api/projects/:project_id/feature_flags/:id/',
    summary: 'Delete a feature flag for good (PATCH {"deleted": true} soft-deletes instead)',
    params: flagParams,
    response: { 204: noContent },
    handler: async (request, principal, reply) => {
      const { project } = await projectFor(ctx, principal, request.params.project_id);
      const flag = await flagOf(project.id, request.params.id);
      if (!flag.deleted) checkNoDependents(flag, await store.list(project.id));
      if (!(await store.remove(project.id, flag.id))) throw notFound();
      service.cache.invalidate(project.id);
      return reply.code(204).send();
    },
  });
}
