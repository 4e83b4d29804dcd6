/**
 * /api/projects/:project_id/cohorts/ (also under /api/environments/): PostHog's cohorts API
 * (docs/cohorts.md). Scope `cohort:read` / `cohort:write`.
 */
import type { FastifyInstance } from 'fastify';
import type { ApiKit, Principal } from '../http/auth.js';
import { apiRoute } from '../http/route.js';
import { envelope, pageQuery, readPage } from '../http/pagination.js';
import { noContent, params, patchBody, type JsonSchema } from '../http/schemas.js';
import { notFound, validationError } from '../kernel/errors.js';
import { canonicalUuid } from '../util/uuid.js';
import type { CohortStore, PersonStore, StoredCohort } from '../store/types.js';
import { personView } from '../persons/service.js';
import type { CohortInput, Cohorts } from './service.js';

export interface CohortRouteDeps {
  api: ApiKit;
  cohorts: Cohorts;
  store: Pick<CohortStore, 'members' | 'cohortsOf'>;
  persons: Pick<PersonStore, 'get'>;
}

const PREFIXES = ['/api/projects/:project_id', '/api/environments/:project_id'];
const anyObject: JsonSchema = { type: 'object', additionalProperties: true };

const cohortSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    description: { type: 'string' },
    filters: anyObject,
    groups: { type: 'array' },
    query: { type: 'null' },
    is_static: { type: 'boolean' },
    deleted: { type: 'boolean' },
    count: { type: ['integer', 'null'] },
    is_calculating: { type: 'boolean' },
    last_calculation: { type: ['string', 'null'] },
    errors_calculating: { type: 'integer' },
    last_error: { type: ['string', 'null'] },
    created_by: { type: ['object', 'null'], properties: { id: { type: 'integer' } } },
    created_at: { type: 'string' },
    experiment_set: { type: 'array' },
  },
};

const writeBody = patchBody({
  name: { type: 'string' },
  description: { type: 'string' },
  filters: { type: ['object', 'null'], additionalProperties: true },
  is_static: { type: 'boolean' },
  deleted: { type: 'boolean' },
  csv: { type: 'string', description: 'Static cohorts: CSV text of distinct ids (or a header row naming distinct_id, email or person_id)' },
});

function cohortView(cohort: StoredCohort) {
  return {
    id: cohort.id,
    name: cohort.name,
    description: cohort.description,
    filters: cohort.filters,
    groups: [],
    query: null,
    is_static: cohort.is_static,
    deleted: cohort.deleted,
    count: cohort.count,
    is_calculating: cohort.is_calculating,
    last_calculation: cohort.last_calculation,
    errors_calculating: cohort.errors_calculating,
    last_error: cohort.last_error,
    created_by: cohort.created_by === null ? null : { id: cohort.created_by },
    created_at: cohort.created_at,
    experiment_set: [],
  };
}

type ProjectParams = { project_id: string };
type CohortParams = ProjectParams & { id: string };

function cohortId(raw: string): number {
  if (!/^\d{1,15}$/.test(raw)) throw notFound('Cohort not found.');
  return Number(raw);
}

export async function registerCohortRoutes(app: FastifyInstance, deps: CohortRouteDeps): Promise<void> {
  const { api, cohorts } = deps;
  const base = { scope: 'cohort', tag: 'cohorts' };
  const projectOf = async (principal: Principal, id: string) => (await api.access.projectFor(principal, id)).project;
  const projectParams = params({ project_id: 'Project id, or @current' });
  const cohortParams = params({ project_id: 'Project id, or @current', id: 'Cohort id' });

  for (const prefix of PREFIXES) {
    apiRoute<{ Params: ProjectParams; Querystring: Record<string, unknown> }>(app, api, {
      ...base,
      method: 'GET',
      url: `${prefix}/cohorts/`,
      summary: 'List cohorts, oldest first',
      params: projectParams,
      querystring: { type: 'object', properties: pageQuery },
      response: { 200: { type: 'object', properties: { count: { type: 'integer' }, next: { type: ['string', 'null'] }, previous: { type: ['string', 'null'] }, results: { type: 'array', items: cohortSchema } } } },
      handler: async (request, principal) => {
        const project = await projectOf(principal, request.params.project_id);
        const page = readPage(request.query);
        const all = await cohorts.list(project.id);
        return envelope(request, api, page, { count: all.length, results: all.slice(page.offset, page.offset + page.limit).map(cohortView) });
      },
    });

    apiRoute<{ Params: ProjectParams; Body: CohortInput }>(app, api, {
      ...base,
      method: 'POST',
      url: `${prefix}/cohorts/`,
      summary: 'Create a dynamic cohort (filters) or a static one (is_static, with an optional csv); dynamic cohorts start calculating at once',
      params: projectParams,
      body: writeBody,
      response: { 201: cohortSchema },
      handler: async (request, principal, reply) => {
        const project = await projectOf(principal, request.params.project_id);
        const created = await cohorts.create(project.id, principal.user.id, request.body ?? {});
        reply.code(201);
        return cohortView(created);
      },
    });

    apiRoute<{ Params: CohortParams }>(app, api, {
      ...base,
      method: 'GET',
      url: `${prefix}/cohorts/:id/`,
      summary: 'A cohort, with count, is_calculating and last_calculation',
      params: cohortParams,
      response: { 200: cohortSchema },
      handler: async (request, principal) => {
        const project = await projectOf(principal, request.params.project_id);
        return cohortView(await cohorts.get(project.id, cohortId(request.params.id)));
      },
    });

    apiRoute<{ Params: CohortParams; Body: CohortInput }>(app, api, {
      ...base,
      method: 'PATCH',
      url: `${prefix}/cohorts/:id/`,
      summary: 'Change a cohort (a new definition recalculates it); static cohorts take a csv to add members; {"deleted": true} deletes',
      params: cohortParams,
      body: writeBody,
      response: { 200: cohortSchema },
      handler: async (request, principal) => {
        const project = await projectOf(principal, request.params.project_id);
        return cohortView(await cohorts.update(project.id, cohortId(request.params.id), request.body ?? {}));
      },
    });

    apiRoute<{ Params: CohortParams }>(app, api, {
      ...base,
      method: 'DELETE',
      url: `${prefix}/cohorts/:id/`,
      summary: 'Delete a cohort (flags and filters naming it then match nobody)',
      params: cohortParams,
      response: { 204: noContent },
      handler: async (request, principal, reply) => {
        const project = await projectOf(principal, request.params.project_id);
        await cohorts.delete(project.id, cohortId(request.params.id));
        return reply.code(204).send();
      },
    });

    apiRoute<{ Params: CohortParams; Querystring: Record<string, unknown> }>(app, api, {
      ...base,
      method: 'GET',
      url: `${prefix}/cohorts/:id/persons/`,
      summary: 'The persons in the cohort as last calculated (or uploaded), in pages',
      params: cohortParams,
      querystring: { type: 'object', properties: pageQuery },
      response: { 200: { type: 'object', properties: { count: { type: 'integer' }, next: { type: ['string', 'null'] }, previous: { type: ['string', 'null'] }, results: { type: 'array', items: anyObject } } } },
      handler: async (request, principal) => {
        const project = await projectOf(principal, request.params.project_id);
        const cohort = await cohorts.get(project.id, cohortId(request.params.id));
        const page = readPage(request.query);
        const members = await deps.store.members(project.id, cohort.id, page);
        const persons = await Promise.all(members.results.map((uuid) => deps.persons.get(project.id, uuid)));
        // A person deleted since the page was read is left out.
        const results = persons.filter((p) => p !== null).map(personView);
        return envelope(request, api, page, { count: members.count, results });
      },
    });

    apiRoute<{ Params: ProjectParams; Querystring: { person_id?: string } }>(app, api, {
      scope: 'person',
      tag: 'persons',
      method: 'GET',
      url: `${prefix}/persons/cohorts/`,
      summary: 'The cohorts a person is in (as last calculated or uploaded)',
      params: projectParams,
      querystring: { type: 'object', properties: { person_id: { type: 'string', description: 'Integer id or uuid of the person' } }, required: ['person_id'] },
      response: { 200: { type: 'object', properties: { results: { type: 'array', items: cohortSchema } } } },
      handler: async (request, principal) => {
        const project = await projectOf(principal, request.params.project_id);
        const raw = request.query.person_id ?? '';
        if (!/^\d{1,15}$/.test(raw) && canonicalUuid(raw) === null) throw validationError('person_id must be a person\'s integer id or uuid.', 'person_id');
        const person = await deps.persons.get(project.id, /^\d{1,15}$/.test(raw) ? Number(raw) : canonicalUuid(raw)!);
        if (!person) throw notFound('Person not found.');
        return { results: (await deps.store.cohortsOf(project.id, person.uuid)).map(cohortView) };
      },
    });

    apiRoute<{ Params: CohortParams; Body: { person_ids?: unknown } }>(app, api, {
      ...base,
      method: 'PATCH',
      url: `${prefix}/cohorts/:id/add_persons_to_static_cohort/`,
      summary: 'Add persons (integer ids or uuids) to a static cohort; any unknown id fails the whole request',
      params: cohortParams,
      body: { type: 'object', properties: { person_ids: { type: 'array' } } },
      response: { 200: cohortSchema },
      handler: async (request, principal) => {
        const project = await projectOf(principal, request.params.project_id);
        return cohortView(await cohorts.addPersons(project.id, cohortId(request.params.id), request.body?.person_ids));
      },
    });

    apiRoute<{ Params: CohortParams; Body: { person_id?: unknown } }>(app, api, {
      ...base,
      method: 'PATCH',
      url: `${prefix}/cohorts/:id/remove_person_from_static_cohort/`,
      summary: 'Remove one person (integer id or uuid) from a static cohort',
      params: cohortParams,
      body: { type: 'object', properties: { person_id: { type: ['string', 'integer'] } } },
      response: { 200: cohortSchema },
      handler: async (request, principal) => {
        const project = await projectOf(principal, request.params.project_id);
        return cohortView(await cohorts.removePerson(project.id, cohortId(request.params.id), request.body?.person_id));
      },
    });
  }
}
