/**
 * /api/projects/:project_id/persons/ (also under /api/environments/): PostHog's persons API
 * (https://posthog.com/docs/api/persons; docs/persons.md). Scope `person:read` / `person:write`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiKit, Principal } from '../http/auth.js';
import { apiRoute } from '../http/route.js';
import { integer, link } from '../http/pagination.js';
import { publicBase } from '../http/public-url.js';
import { params, type JsonSchema } from '../http/schemas.js';
import { notFound, validationError } from '../kernel/errors.js';
import { Readable } from 'node:stream';
import type { DefinitionStore, EventStore, IngestStore, PersonDeletion, PersonStore } from '../store/types.js';
import { personLookup } from '../events/persons.js';
import { personCsv, personJson } from './export.js';
import { canonicalUuid } from '../util/uuid.js';
import type { PersonDeletions } from './deletion.js';
import type { PersonSplits } from './split.js';
import { personPropertyMatcher } from './filters.js';
import { personRef, personView, type Persons } from './service.js';

export interface PersonRouteDeps {
  api: ApiKit;
  persons: Persons;
  store: PersonStore;
  deletions: PersonDeletions;
  splits: PersonSplits;
  /** The event store once it holds every event acknowledged so far (as the events API reads it). */
  queryableEvents(): Promise<EventStore>;
  personsOf: Pick<IngestStore, 'personsOf'>;
  definitions: Pick<DefinitionStore, 'propertyTypes'>;
}

/** PostHog's page size; more than MAX_LIMIT is taken as MAX_LIMIT. */
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;
/** bulk_delete takes at most this many ids, as PostHog. */
export const BULK_DELETE_LIMIT = 1000;

const PREFIXES = ['/api/projects/:project_id', '/api/environments/:project_id'];

const anyObject: JsonSchema = { type: 'object', additionalProperties: true };
const personSchema: JsonSchema = {
  type: 'object',
  properties: {
    type: { type: 'string' },
    id: { type: 'integer' },
    uuid: { type: 'string' },
    name: { type: 'string' },
    distinct_ids: { type: 'array', items: { type: 'string' } },
    properties: anyObject,
    created_at: { type: 'string' },
    is_identified: { type: 'boolean' },
    matched_recordings: { type: 'array' },
    value_at_data_point: { type: 'null' },
  },
};
const deletionSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    person_uuid: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'finished', 'purged'], description: 'finished: gone from every query; purged: also from the event file' },
    delete_events: { type: 'boolean' },
    requested_at: { type: 'string' },
    finished_at: { type: ['string', 'null'] },
    purged_at: { type: ['string', 'null'] },
    status_url: { type: 'string' },
  },
};
const accepted: JsonSchema = { type: 'object', properties: { deletions: { type: 'array', items: deletionSchema } } };
const listQuery: JsonSchema = {
  type: 'object',
  properties: {
    distinct_id: { type: 'string' },
    email: { type: 'string' },
    search: { type: 'string' },
    properties: { type: 'string', description: 'JSON list of person property filters' },
    limit: { type: 'string' },
    offset: { type: 'string' },
  },
};

type Q = Record<string, unknown>;
type ProjectParams = { project_id: string };
type PersonParams = ProjectParams & { id: string };

const text = (query: Q, name: string): string | null => {
  const value = query[name];
  if (value === undefined || value === '') return null;
  if (typeof value !== 'string') throw validationError(`${name} must be given once.`, name);
  return value;
};

function deleteEventsFlag(raw: unknown): boolean {
  if (raw === undefined || raw === '' || raw === false) return false;
  if (raw === true) return true;
  const value = String(raw).toLowerCase();
  if (['true', '1', 'yes'].includes(value)) return true;
  if (['false', '0', 'no'].includes(value)) return false;
  throw validationError('delete_events must be a boolean.', 'delete_events');
}

export async function registerPersonRoutes(app: FastifyInstance, deps: PersonRouteDeps): Promise<void> {
  const { api, persons, store, deletions } = deps;
  const lookup = personLookup(deps.personsOf);
  const base = { scope: 'person', tag: 'persons' };
  const projectOf = async (principal: Principal, id: string) => (await api.access.projectFor(principal, id)).project;
  const deletionView = (request: FastifyRequest, prefix: string, d: PersonDeletion) => ({
    id: d.id,
    person_uuid: d.person_uuid,
    status: d.purged_at ? 'purged' : d.finished_at ? 'finished' : 'pending',
    delete_events: d.delete_events,
    requested_at: d.requested_at,
    finished_at: d.finished_at,
    purged_at: d.purged_at,
    status_url: `${publicBase(request, api.publicUrl)}${prefix.replace(':project_id', String(d.project_id))}/persons/deletions/${d.id}/`,
  });

  for (const prefix of PREFIXES) {
    const projectParams = params({ project_id: 'Project id, or @current' });
    const personParams = params({ project_id: 'Project id, or @current', id: 'Integer id or uuid of the person' });

    apiRoute<{ Params: ProjectParams; Querystring: Q }>(app, api, {
      ...base,
      method: 'GET',
      url: `${prefix}/persons/`,
      summary: 'List persons, newest first; search email, name and distinct ids; filter by distinct_id, email and person properties',
      params: projectParams,
      querystring: listQuery,
      response: { 200: { type: 'object', properties: { next: { type: ['string', 'null'] }, previous: { type: ['string', 'null'] }, results: { type: 'array', items: personSchema } } } },
      handler: async (request, principal) => {
        const project = await projectOf(principal, request.params.project_id);
        const q = request.query;
        const limit = Math.min(MAX_LIMIT, integer(q.limit, 'limit', 1, Number.MAX_SAFE_INTEGER, DEFAULT_LIMIT));
        const offset = integer(q.offset, 'offset', 0, Number.MAX_SAFE_INTEGER, 0);
        const page = await store.list({
          projectId: project.id,
          distinctId: text(q, 'distinct_id'),
          email: text(q, 'email'),
          search: text(q, 'search'),
          matches: personPropertyMatcher(text(q, 'properties'), new Date()),
          limit,
          offset,
        });
        return {
          next: page.more ? link(request, api, { limit, offset: offset + limit }) : null,
          previous: offset > 0 ? link(request, api, { limit, offset: offset - limit > 0 ? offset - limit : null }) : null,
          results: page.results.map(personView),
        };
      },
    });

    apiRoute<{ Params: ProjectParams; Body: { ids?: unknown; distinct_ids?: unknown; delete_events?: unknown } }>(app, api, {
      ...base,
      method: 'POST',
      url: `${prefix}/persons/bulk_delete/`,
      summary: `Delete up to ${BULK_DELETE_LIMIT} persons by id/uuid (\`ids\`) or \`distinct_ids\`; \`delete_events\` deletes their events too. 202 with pollable deletions.`,
      params: projectParams,
      body: { type: 'object', properties: { ids: { type: 'array' }, distinct_ids: { type: 'array', items: { type: 'string' } }, delete_events: { type: 'boolean' } } },
      response: { 202: accepted },
      handler: async (request, principal, reply) => {
        const project = await projectOf(principal, request.params.project_id);
        const { ids, distinct_ids: distinctIds } = request.body ?? {};
        if (ids === undefined && distinctIds === undefined) throw validationError('Either ids or distinct_ids is required.', 'ids', 'required');
        const attr = ids !== undefined ? 'ids' : 'distinct_ids';
        const list = (ids ?? distinctIds) as unknown[];
        if (list.length > BULK_DELETE_LIMIT) throw validationError(`You can only pass ${BULK_DELETE_LIMIT} ${attr} at a time.`, attr, 'max_length');
        let uuids: string[];
        if (ids !== undefined) {
          const refs = list.map((id, index) => {
            const ref = typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? id : typeof id === 'string' ? (canonicalUuid(id) ?? (/^\d{1,15}$/.test(id) ? Number(id) : null)) : null;
            if (ref === null) throw validationError(`ids[${index}] is neither a person id nor a uuid.`, 'ids');
            return ref;
          });
          uuids = await store.resolve(project.id, refs);
        } else {
          uuids = await store.uuidsOfDistinctIds(project.id, list as string[]);
        }
        const done = uuids.length === 0 ? [] : await deletions.delete(project.id, uuids, deleteEventsFlag(request.body?.delete_events), principal.user.id);
        reply.code(202);
        return { deletions: done.map((d) => deletionView(request, prefix, d)) };
      },
    });

    apiRoute<{ Params: ProjectParams & { deletion_id: string } }>(app, api, {
      ...base,
      method: 'GET',
      url: `${prefix}/persons/deletions/:deletion_id/`,
      summary: 'Status of a person deletion: `finished` once the person and (if asked) their events are gone from every store',
      params: params({ project_id: 'Project id, or @current', deletion_id: 'Deletion id from the 202 answer' }),
      response: { 200: deletionSchema },
      handler: async (request, principal) => {
        const project = await projectOf(principal, request.params.project_id);
        const id = /^\d{1,15}$/.test(request.params.deletion_id) ? Number(request.params.deletion_id) : null;
        const found = id === null ? null : await store.deletion(project.id, id);
        if (!found) throw notFound();
        return deletionView(request, prefix, found);
      },
    });

    apiRoute<{ Params: ProjectParams; Querystring: Q }>(app, api, {
      ...base,
      method: 'GET',
      url: `${prefix}/persons/activity/`,
      summary: 'Activity log of persons (deletions): who, when, what; ids only',
      params: projectParams,
      querystring: { type: 'object', properties: { limit: { type: 'string' }, offset: { type: 'string' } } },
      response: { 200: anyObject },
      handler: async (request, principal) => {
        const project = await projectOf(principal, request.params.project_id);
        return activityPage(store, project.id, null, request.query);
      },
    });

    apiRoute<{ Params: PersonParams }>(app, api, {
      ...base,
      method: 'GET',
      url: `${prefix}/persons/:id/`,
      summary: 'Retrieve a person by integer id or uuid',
      params: personParams,
      response: { 200: personSchema },
      handler: async (request, principal) => {
        const project = await projectOf(principal, request.params.project_id);
        return personView(await persons.get(project.id, personRef(request.params.id)));
      },
    });

    apiRoute<{ Params: PersonParams; Body: { properties?: Record<string, unknown> } }>(app, api, {
      ...base,
      method: 'PATCH',
      url: `${prefix}/persons/:id/`,
      summary: 'Set person properties (a `$set` event for the person); 202',
      params: personParams,
      body: { type: 'object', properties: { properties: anyObject } },
      response: { 202: { type: 'null' } },
      handler: async (request, principal, reply) => {
        const project = await projectOf(principal, request.params.project_id);
        await persons.setProperties(project, personRef(request.params.id), request.body?.properties);
        reply.code(202);
        return null;
      },
    });

    apiRoute<{ Params: PersonParams; Querystring: Q }>(app, api, {
      ...base,
      method: 'DELETE',
      url: `${prefix}/persons/:id/`,
      summary: 'Delete a person; `?delete_events=true` deletes their events too. 202 with a deletion to poll.',
      params: personParams,
      querystring: { type: 'object', properties: { delete_events: { type: 'string' } } },
      response: { 202: deletionSchema },
      handler: async (request, principal, reply) => {
        const project = await projectOf(principal, request.params.project_id);
        const person = await persons.get(project.id, personRef(request.params.id));
        const [deletion] = await deletions.delete(project.id, [person.uuid], deleteEventsFlag(request.query.delete_events), principal.user.id);
        if (!deletion) throw notFound();
        const view = deletionView(request, prefix, deletion);
        reply.code(202).header('location', view.status_url);
        return view;
      },
    });

    apiRoute<{ Params: PersonParams; Body: { key?: unknown; value?: unknown } }>(app, api, {
      ...base,
      method: 'POST',
      url: `${prefix}/persons/:id/update_property/`,
      summary: 'Set one person property (a `$set` event); 202',
      params: personParams,
      body: { type: 'object', properties: { key: { type: 'string' }, value: {} } },
      response: { 202: { type: 'null' } },
      handler: async (request, principal, reply) => {
        const project = await projectOf(principal, request.params.project_id);
        await persons.updateProperty(project, personRef(request.params.id), request.body?.key, request.body?.value);
        reply.code(202);
        return null;
      },
    });

    apiRoute<{ Params: PersonParams; Body: { $unset?: unknown } }>(app, api, {
      ...base,
      method: 'POST',
      url: `${prefix}/persons/:id/delete_property/`,
      summary: 'Remove one person property (a `$delete_person_property` event with `$unset`); 201',
      params: personParams,
      body: { type: 'object', properties: { $unset: { type: 'string' } } },
      response: { 201: { type: 'object', properties: { success: { type: 'boolean' } } } },
      handler: async (request, principal, reply) => {
        const project = await projectOf(principal, request.params.project_id);
        await persons.deleteProperty(project, personRef(request.params.id), request.body?.$unset);
        reply.code(201);
        return { success: true };
      },
    });

    apiRoute<{ Params: PersonParams; Body: { main_distinct_id?: string } }>(app, api, {
      ...base,
      method: 'POST',
      url: `${prefix}/persons/:id/split/`,
      summary: 'Give every distinct id of the person but `main_distinct_id` (default: the first) a new person of its own; 201',
      params: personParams,
      body: { type: 'object', properties: { main_distinct_id: { type: 'string', minLength: 1 } } },
      response: { 201: { type: 'object', properties: { success: { type: 'boolean' } } } },
      handler: async (request, principal, reply) => {
        const project = await projectOf(principal, request.params.project_id);
        const person = await persons.get(project.id, personRef(request.params.id));
        await deps.splits.split(project.id, person.uuid, request.body?.main_distinct_id ?? null, principal.user.id);
        reply.code(201);
        return { success: true };
      },
    });

    apiRoute<{ Params: PersonParams; Querystring: Q }>(app, api, {
      ...base,
      method: 'GET',
      url: `${prefix}/persons/:id/export/`,
      summary: 'Everything stored of one person: the person and all of their events, as JSON (default) or CSV (`format=csv`)',
      params: personParams,
      querystring: { type: 'object', properties: { format: { type: 'string', enum: ['json', 'csv'] } } },
      response: { 200: anyObject },
      handler: async (request, principal, reply) => {
        const project = await projectOf(principal, request.params.project_id);
        const person = await persons.get(project.id, personRef(request.params.id));
        const exportDeps = {
          events: await deps.queryableEvents(),
          persons: lookup,
          types: async (kind: 'event' | 'person' | 'group', names: string[]) =>
            kind === 'group' ? new Map() : deps.definitions.propertyTypes(project.id, kind === 'event' ? 1 : 2, names),
        };
        const csv = request.query.format === 'csv';
        const body = csv ? await personCsv(person, exportDeps) : await personJson(person, exportDeps);
        reply.header('content-type', csv ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8');
        reply.header('content-disposition', `attachment; filename="person-${person.id}.${csv ? 'csv' : 'json'}"`);
        return reply.send(Readable.from(body, { objectMode: false }));
      },
    });

    apiRoute<{ Params: PersonParams; Querystring: Q }>(app, api, {
      ...base,
      method: 'GET',
      url: `${prefix}/persons/:id/activity/`,
      summary: "Activity log of one person (by uuid; it outlives the person's deletion)",
      params: personParams,
      querystring: { type: 'object', properties: { limit: { type: 'string' }, offset: { type: 'string' } } },
      response: { 200: anyObject },
      handler: async (request, principal) => {
        const project = await projectOf(principal, request.params.project_id);
        const ref = personRef(request.params.id);
        const uuid = typeof ref === 'string' ? ref : (await persons.get(project.id, ref)).uuid;
        return activityPage(store, project.id, uuid, request.query);
      },
    });
  }
}

async function activityPage(store: PersonStore, projectId: number, itemId: string | null, query: Q) {
  const limit = Math.min(MAX_LIMIT, integer(query.limit, 'limit', 1, Number.MAX_SAFE_INTEGER, DEFAULT_LIMIT));
  const offset = integer(query.offset, 'offset', 0, Number.MAX_SAFE_INTEGER, 0);
  const page = await store.activity(projectId, 'Person', itemId, limit, offset);
  return {
    count: page.count,
    results: page.results.map((entry) => ({
      id: entry.id,
      scope: entry.scope,
      item_id: entry.item_id,
      activity: entry.activity,
      user: entry.user_id === null ? null : { id: entry.user_id },
      detail: entry.detail,
      created_at: entry.created_at,
    })),
  };
}
