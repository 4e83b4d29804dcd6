/**
 * /api/projects/:project_id/groups/ and /groups_types/ (https://posthog.com/docs/api/groups;
 * docs/persons.md, "Groups"): groups of a type with search and a cursor, one group by key, group
 * types with editable display names, and the property names groups carry. Scope `group`.
 */
import type { FastifyInstance } from 'fastify';
import type { ApiKit, Principal } from '../http/auth.js';
import { apiRoute } from '../http/route.js';
import { link } from '../http/pagination.js';
import { params, type JsonSchema } from '../http/schemas.js';
import { notFound, validationError } from '../kernel/errors.js';
import type { GroupCursor, GroupStore, GroupType, StoredGroup } from '../store/types.js';

export interface GroupRouteDeps {
  api: ApiKit;
  groups: GroupStore;
}

/** PostHog's groups page size. */
const PAGE = 100;
/** Group type indexes PostHog allows: five types per project. */
const MAX_INDEX = 4;
const PREFIXES = ['/api/projects/:project_id', '/api/environments/:project_id'];

type Q = Record<string, unknown>;

const anyObject: JsonSchema = { type: 'object', additionalProperties: true };
const groupSchema: JsonSchema = {
  type: 'object',
  properties: { group_type_index: { type: 'integer' }, group_key: { type: 'string' }, group_properties: anyObject, created_at: { type: 'string' } },
};
const typeSchema: JsonSchema = {
  type: 'object',
  properties: {
    group_type: { type: 'string' },
    group_type_index: { type: 'integer' },
    name_singular: { type: ['string', 'null'] },
    name_plural: { type: ['string', 'null'] },
    detail_dashboard: { type: 'null' },
    default_columns: { type: 'null' },
  },
};

const groupView = (group: StoredGroup) => ({
  group_type_index: group.group_type_index,
  group_key: group.group_key,
  group_properties: group.properties,
  created_at: group.created_at,
});
const typeView = (type: GroupType) => ({ ...type, detail_dashboard: null, default_columns: null });

function typeIndex(raw: unknown): number {
  if (raw === undefined || raw === '') throw validationError('This field is required.', 'group_type_index', 'required');
  const value = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(value) || value < 0 || value > MAX_INDEX) throw validationError(`group_type_index must be an integer from 0 to ${MAX_INDEX}.`, 'group_type_index');
  return value;
}

function text(query: Q, name: string): string | null {
  const value = query[name];
  if (value === undefined || value === '') return null;
  if (typeof value !== 'string') throw validationError(`${name} must be given once.`, name);
  return value;
}

const encodeCursor = (after: GroupCursor) => Buffer.from(JSON.stringify([after.created_at, after.group_key])).toString('base64url');

function decodeCursor(raw: string | null): GroupCursor | null {
  if (raw === null) return null;
  try {
    const [created_at, group_key] = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as unknown[];
    if (typeof created_at === 'string' && typeof group_key === 'string') return { created_at, group_key };
  } catch {
    // falls through to the 400
  }
  throw validationError('Invalid cursor.', 'cursor');
}

export async function registerGroupRoutes(app: FastifyInstance, deps: GroupRouteDeps): Promise<void> {
  const { api, groups } = deps;
  const base = { scope: 'group', tag: 'groups' };
  const projectOf = async (principal: Principal, id: string) => (await api.access.projectFor(principal, id)).project;
  const projectParams = params({ project_id: 'Project id, or @current' });

  for (const prefix of PREFIXES) {
    apiRoute<{ Params: { project_id: string }; Querystring: Q }>(app, api, {
      ...base,
      method: 'GET',
      url: `${prefix}/groups/`,
      summary: 'Groups of one type, newest first; `search` matches the key or the name property; `next` carries a cursor',
      params: projectParams,
      querystring: { type: 'object', properties: { group_type_index: { type: 'string' }, search: { type: 'string' }, cursor: { type: 'string' } } },
      response: { 200: { type: 'object', properties: { next: { type: ['string', 'null'] }, previous: { type: ['string', 'null'] }, results: { type: 'array', items: groupSchema } } } },
      handler: async (request, principal) => {
        const project = await projectOf(principal, request.params.project_id);
        const groupTypeIndex = typeIndex(request.query.group_type_index);
        const page = await groups.list({
          projectId: project.id,
          groupTypeIndex,
          search: text(request.query, 'search'),
          after: decodeCursor(text(request.query, 'cursor')),
          limit: PAGE,
        });
        const last = page.results.at(-1);
        return {
          next: page.more && last ? link(request, api, { cursor: encodeCursor(last) }) : null,
          previous: null,
          results: page.results.map(groupView),
        };
      },
    });

    apiRoute<{ Params: { project_id: string }; Querystring: Q }>(app, api, {
      ...base,
      method: 'GET',
      url: `${prefix}/groups/find/`,
      summary: 'One group by type index and key',
      params: projectParams,
      querystring: { type: 'object', properties: { group_type_index: { type: 'string' }, group_key: { type: 'string' } } },
      response: { 200: groupSchema },
      handler: async (request, principal) => {
        const project = await projectOf(principal, request.params.project_id);
        const groupTypeIndex = typeIndex(request.query.group_type_index);
        const key = text(request.query, 'group_key');
        if (key === null) throw validationError('This field is required.', 'group_key', 'required');
        const group = await groups.find(project.id, groupTypeIndex, key);
        if (!group) throw notFound();
        return groupView(group);
      },
    });

    apiRoute<{ Params: { project_id: string } }>(app, api, {
      ...base,
      method: 'GET',
      url: `${prefix}/groups/property_definitions/`,
      summary: 'Property names of each group type, with how many groups have each, most common first',
      params: projectParams,
      response: { 200: anyObject },
      handler: async (request, principal) => {
        const project = await projectOf(principal, request.params.project_id);
        return Object.fromEntries([...(await groups.propertyNames(project.id))].map(([index, names]) => [String(index), names]));
      },
    });

    apiRoute<{ Params: { project_id: string } }>(app, api, {
      ...base,
      method: 'GET',
      url: `${prefix}/groups_types/`,
      summary: 'Group types of the project, by index',
      params: projectParams,
      response: { 200: { type: 'array', items: typeSchema } },
      handler: async (request, principal) => {
        const project = await projectOf(principal, request.params.project_id);
        return (await groups.types(project.id)).map(typeView);
      },
    });

    apiRoute<{ Params: { project_id: string; index: string }; Body: { name_singular?: string | null; name_plural?: string | null } }>(app, api, {
      ...base,
      method: 'PATCH',
      url: `${prefix}/groups_types/:index/`,
      summary: "Set a group type's display names (`name_singular`, `name_plural`); its key and index never change",
      params: params({ project_id: 'Project id, or @current', index: 'Group type index' }),
      body: {
        type: 'object',
        properties: { name_singular: { type: ['string', 'null'], maxLength: 400 }, name_plural: { type: ['string', 'null'], maxLength: 400 } },
      },
      response: { 200: typeSchema },
      handler: async (request, principal) => {
        const project = await projectOf(principal, request.params.project_id);
        const index = typeIndex(request.params.index);
        const blankToNull = (value: string | null | undefined) => (value === undefined ? undefined : value === null || value.trim() === '' ? null : value.trim());
        const updated = await groups.renameType(project.id, index, {
          name_singular: blankToNull(request.body?.name_singular),
          name_plural: blankToNull(request.body?.name_plural),
        });
        if (!updated) throw notFound();
        return typeView(updated);
      },
    });
  }
}
