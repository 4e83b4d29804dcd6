/**
 * /api/projects/:project_id/events/ (https://posthog.com/docs/api/events; docs/api.md, "Stored
 * events"): the stored events, newest first, with PostHog's filters, HogQL `select`/`where`, CSV
 * export, one event by uuid, and the values of a property. Scope `query:read`, like PostHog's query
 * endpoints.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { encodeCursor } from './cursor.js';
import { eventsCsv, tableCsv } from './csv.js';
import { readEventsQuery, readFormat, readPaging, text, type RawQuery } from './params.js';
import { personLookup } from './persons.js';
import { runner } from './run.js';
import { csvExport, eventById, exportTotal, groupedPage, orderedPage, planRequest, walkPage } from './service.js';
import type { TypeLookup } from './typed-compile.js';
import { canonicalUuid } from '../util/uuid.js';
import type { Cursor } from './types.js';
import type { DefinitionStore, EventStore, GroupStore, IngestStore, PersonStore, StoredAction } from '../store/types.js';
import { loadGroupValues } from './group-filters.js';
import { customEventNames, DEFAULT_VALUES_LIMIT, MAX_VALUES_LIMIT, propertyValues, VALUE_COLUMNS } from './values.js';
import type { ApiKit } from '../http/auth.js';
import type { StatsCache } from './stats.js';
import { notFound, validationError } from '../kernel/errors.js';
import { envelope, integer, link } from '../http/pagination.js';
import { params } from '../http/schemas.js';
import { eventsQuerystring, eventSchema, listResponse, valuesQuerystring } from './schemas.js';
import { apiRoute } from '../http/route.js';
import { clientGone } from '../http/client-gone.js';

type ProjectParams = { project_id: string };

export interface EventRouteDeps {
  api: ApiKit;
  /**
   * The event store once it holds every event acknowledged so far: it follows capture by a few
   * milliseconds (ingestion/event-store-feed.ts), so an event acknowledged before a request is
   * in its answer.
   */
  queryableEvents(): Promise<EventStore>;
  persons: Pick<IngestStore, 'personsOf'>;
  /** Turns an integer `person_id` into the person's uuid. */
  /** Integer person ids; null where the metadata store has none yet (PostgreSQL): `person_id` is then a uuid only. */
  personIds: Pick<PersonStore, 'resolve'>;
  definitions: Pick<DefinitionStore, 'propertyTypes'>;
  /** The list's counts per filter. */
  counts: StatsCache;
  /** Live actions by id, for `action_id`. */
  actions: { resolve(projectId: number, id: number): Promise<StoredAction | null> };
  /** Group properties for `group` filters; null where the metadata store has none (PostgreSQL). */
  groups: Pick<GroupStore, 'propertyOfGroups'> | null;
}

async function sendCsv(reply: FastifyReply, body: AsyncIterable<string>, filename: string): Promise<FastifyReply> {
  reply.header('content-type', 'text/csv; charset=utf-8');
  reply.header('content-disposition', `attachment; filename="${filename}"`);
  return reply.send(Readable.from(logFailure(body, reply), { objectMode: false }));
}

/** An export failing after its first rows is cut off (the status is sent): the log must say why. */
async function* logFailure(body: AsyncIterable<string>, reply: FastifyReply): AsyncGenerator<string> {
  try {
    yield* body;
  } catch (error) {
    reply.log.error({ err: error }, 'CSV export failed after it had started; the response was cut off');
    throw error;
  }
}

export async function registerEventRoutes(app: FastifyInstance, deps: EventRouteDeps): Promise<void> {
  const { api, queryableEvents } = deps;
  const base = { scope: 'query', tag: 'events' };
  const projectParams = params({ project_id: 'Project id, or @current' });
  const persons = personLookup(deps.persons);
  const typesOf =
    (projectId: number): TypeLookup =>
    async (kind, names) =>
      // Group properties carry no declared types here (they would need the group type too).
      kind === 'group' ? new Map() : deps.definitions.propertyTypes(projectId, kind === 'event' ? 1 : 2, names);

  apiRoute<{ Params: ProjectParams; Querystring: RawQuery }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/projects/:project_id/events/',
    summary:
      'List events, newest first; or the rows of a HogQL `select`. `format=csv` (or Accept: text/csv) streams CSV. ' +
      '`next`/`previous` carry a keyset `cursor`, so a walk never repeats or skips an event while new ones arrive.',
    params: projectParams,
    querystring: eventsQuerystring,
    response: { 200: listResponse },
    handler: async (request, principal, reply) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const format = readFormat(request.query, request.headers.accept);
      const query = readEventsQuery(await withPersonUuid(request.query, project.id, deps.personIds), project.id, new Date());
      query.actionSteps = await actionSteps(request.query, project.id, deps.actions);
      query.groupValues = await loadGroupValues(query.properties, project.id, deps.groups);
      const paging = readPaging(request.query, format);
      const plan = await planRequest(query, typesOf(project.id), paging);
      if (format === 'csv') {
        const events = await queryableEvents();
        // CSV has no envelope: a Link header tells that rows beyond this export exist, and where they start.
        const total = await exportTotal(runner(events, plan.hogqlAttr, clientGone(reply)), plan, deps.counts);
        const end = paging.offset + paging.limit;
        if (total > end) reply.header('link', `<${link(request, api, { offset: end, limit: paging.limit, cursor: null })}>; rel="next"`);
        return sendCsv(reply, await csvExport(events, plan, paging), 'events.csv');
      }
      const events = await queryableEvents();
      const run = runner(events, plan.hogqlAttr, clientGone(reply));
      if (plan.select?.grouped || plan.orderBy) {
        const { columns, types, ...page } = plan.select?.grouped
          ? await groupedPage(run, plan, paging.limit, paging.offset)
          : await orderedPage(run, persons, plan, paging, deps.counts);
        return { ...envelope(request, api, paging, page), ...(columns && { columns, types }) };
      }
      const page = await walkPage(run, persons, plan, paging, deps.counts, events.pageBytes);
      // A limit past the maximum was clamped: the links carry the limit used.
      const limit: Record<string, number> = request.query.limit === undefined ? {} : { limit: paging.limit };
      const at = (cursor: Cursor | null) => cursor && link(request, api, { cursor: encodeCursor(cursor), offset: null, ...limit });
      const { count, next, previous, ...rest } = page;
      return { count, next: at(next), previous: at(previous), ...rest };
    },
  });

  // Static segment: registered next to `:id`, the router prefers it.
  apiRoute<{ Params: ProjectParams; Querystring: RawQuery }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/projects/:project_id/events/values/',
    summary: 'Distinct values of an event property (last 7 days, or all time when those have none), most frequent first',
    params: projectParams,
    querystring: valuesQuerystring,
    response: { 200: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } } },
    handler: async (request, principal, reply) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const format = readFormat(request.query, request.headers.accept);
      const key = text(request.query, 'key');
      if (key === null) throw validationError('You must provide a key.', 'key', 'required');
      const isColumn = drfBoolean(request.query.is_column, 'is_column');
      if (isColumn && !VALUE_COLUMNS.includes(key)) throw validationError(`key must be one of the columns ${VALUE_COLUMNS.join(', ')}.`, 'key');
      const run = runner(await queryableEvents(), null, clientGone(reply));
      const values =
        key === 'custom_event' && !isColumn
          ? await customEventNames(run, project.id)
          : await propertyValues(run, {
              projectId: project.id,
              key,
              isColumn,
              eventNames: eventNames(request.query.event_name),
              value: text(request.query, 'value'),
              limit: integer(request.query.limit, 'limit', 1, MAX_VALUES_LIMIT, DEFAULT_VALUES_LIMIT),
              now: new Date(),
            });
      // As PostHog: the values change slowly, and property pickers ask for them as the user types.
      reply.header('cache-control', 'max-age=10');
      if (format === 'csv') return sendCsv(reply, tableCsv(['name'], [values.map((value) => [value.name])]), 'values.csv');
      return values;
    },
  });

  apiRoute<{ Params: ProjectParams & { id: string }; Querystring: RawQuery }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/projects/:project_id/events/:id/',
    summary: 'Retrieve one event by its uuid, with its current person',
    params: params({ project_id: 'Project id, or @current', id: 'Event uuid' }),
    querystring: { type: 'object', properties: { format: { type: 'string', enum: ['json', 'csv'] } } },
    response: { 200: eventSchema },
    handler: async (request, principal, reply) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const format = readFormat(request.query, request.headers.accept);
      const uuid = canonicalUuid(request.params.id);
      if (!uuid) throw validationError('Invalid UUID', null, 'invalid');
      const found = await eventById(runner(await queryableEvents(), null, clientGone(reply)), persons, project.id, uuid);
      if (!found) throw notFound(`No events exist for event UUID ${uuid}`);
      if (format === 'csv') return sendCsv(reply, eventsCsv([[found.row]]), 'event.csv');
      return found.event;
    },
  });
}

/**
 * `person_id` may be the person's integer id (the contract types it so) or uuid. An integer id
 * of no person matches nothing, as an unknown uuid does.
 */
async function withPersonUuid(query: RawQuery, projectId: number, personIds: Pick<PersonStore, 'resolve'>): Promise<RawQuery> {
  const raw = query.person_id;
  if (typeof raw !== 'string' || !/^\d{1,15}$/.test(raw)) return query;
  const [uuid] = await personIds.resolve(projectId, [Number(raw)]);
  return { ...query, person_id: uuid ?? NO_PERSON };
}

const NO_PERSON = '00000000-0000-0000-0000-000000000000';

/** The steps of the live action `action_id` names; an unknown or deleted one is a 400. */
async function actionSteps(query: RawQuery, projectId: number, actions: EventRouteDeps['actions']): Promise<StoredAction['steps'] | null> {
  const raw = text(query, 'action_id');
  if (raw === null) return null;
  if (!/^\d{1,15}$/.test(raw)) throw validationError('action_id must be an action id.', 'action_id');
  const action = await actions.resolve(projectId, Number(raw));
  if (!action) throw validationError(`Action ${raw} does not exist.`, 'action_id', 'invalid_choice');
  return action.steps;
}

/** A boolean query parameter as DRF's BooleanField reads it. */
function drfBoolean(raw: unknown, name: string): boolean {
  if (raw === undefined || raw === '') return false;
  const value = String(raw).toLowerCase();
  if (['true', '1', 'yes', 'on', 't', 'y'].includes(value)) return true;
  if (['false', '0', 'no', 'off', 'f', 'n'].includes(value)) return false;
  throw validationError('Must be a valid boolean.', name);
}

/** `event_name` may repeat; the schema has already made it a list of strings. */
function eventNames(raw: unknown): string[] {
  const names = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  return names.filter((name): name is string => typeof name === 'string' && name !== '');
}
