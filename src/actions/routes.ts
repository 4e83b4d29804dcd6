/**
 * /api/projects/:project_id/actions/ (PostHog's actions API): list, create, retrieve and update.
 * Deleting is `PATCH {"deleted": true}` (PostHog refuses DELETE on actions too); `false` restores.
 */
import type { FastifyInstance } from 'fastify';
import type { ApiKit } from '../http/auth.js';
import { envelope, pageQuery, paginated, readPage } from '../http/pagination.js';
import { searchWords } from '../http/query-params.js';
import { apiRoute } from '../http/route.js';
import { cleanTags, dateTime, nullable, object, params, patchBody, tags, userBasic } from '../http/schemas.js';
import type { StoredAction, User } from '../store/types.js';
import { MAX_NAME_LENGTH, type ActionInput, type Actions } from './service.js';
import { MAX_STEPS } from './steps.js';

export interface ActionRouteDeps {
  api: ApiKit;
  actions: Actions;
  users: { getUser(id: number): Promise<User | null> };
}

const matching = { type: ['string', 'null'], enum: ['contains', 'regex', 'exact', null] };
const textOrNull = { type: ['string', 'null'] };

const stepSchema = object({
  event: textOrNull,
  properties: { type: 'array', items: { type: 'object', additionalProperties: true } },
  selector: textOrNull,
  tag_name: textOrNull,
  text: textOrNull,
  text_matching: matching,
  href: textOrNull,
  href_matching: matching,
  url: textOrNull,
  url_matching: matching,
});

const actionSchema = object({
  id: { type: 'integer' },
  name: { type: 'string' },
  description: { type: 'string' },
  tags: { type: 'array', items: { type: 'string' } },
  post_to_slack: { type: 'boolean' },
  slack_message_format: { type: 'string' },
  steps: { type: 'array', items: stepSchema },
  created_at: dateTime,
  created_by: nullable(userBasic),
  deleted: { type: 'boolean' },
  is_calculating: { type: 'boolean' },
  last_calculated_at: dateTime,
  team_id: { type: 'integer' },
  is_action: { type: 'boolean' },
  bytecode_error: { type: 'null' },
  pinned_at: { type: 'null' },
});

const writable = {
  name: { type: 'string', maxLength: MAX_NAME_LENGTH },
  description: { type: 'string', maxLength: 4000 },
  tags,
  steps: {
    type: 'array',
    maxItems: MAX_STEPS,
    description:
      'Any step matching makes an event match: {event, properties, url, url_matching (contains|regex|exact), text, text_matching, href, href_matching, selector, tag_name}',
  },
  deleted: { type: 'boolean', description: 'true: soft delete; false: restore' },
};

type ProjectParams = { project_id: string };
type ActionParams = ProjectParams & { id: string };

export async function registerActionRoutes(app: FastifyInstance, { api, actions, users }: ActionRouteDeps): Promise<void> {
  const base = { scope: 'action', tag: 'actions' };
  const projectParams = params({ project_id: 'Project id, or @current' });
  const actionParams = params({ project_id: 'Project id, or @current', id: 'Action id' });

  const serialize = async (list: StoredAction[]) => {
    const people = new Map<number, User | null>();
    for (const id of new Set(list.map((action) => action.created_by))) if (id !== null) people.set(id, await users.getUser(id));
    return list.map((action) => ({
      id: action.id,
      name: action.name,
      description: action.description,
      tags: action.tags,
      post_to_slack: false,
      slack_message_format: '',
      steps: action.steps,
      created_at: action.created_at,
      created_by: action.created_by === null ? null : (people.get(action.created_by) ?? null),
      deleted: action.deleted,
      is_calculating: false,
      last_calculated_at: action.updated_at,
      team_id: action.project_id,
      is_action: true,
      bytecode_error: null,
      pinned_at: null,
    }));
  };
  const one = async (action: StoredAction) => (await serialize([action]))[0];

  apiRoute<{ Params: ProjectParams; Querystring: { limit?: number; offset?: number; search?: string } }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/projects/:project_id/actions/',
    summary: 'List actions (not deleted) by name',
    params: projectParams,
    querystring: { type: 'object', properties: { ...pageQuery, search: { type: 'string', maxLength: 1000 } } },
    response: { 200: paginated(actionSchema) },
    handler: async (request, principal) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const page = readPage(request.query);
      const found = await actions.page({ ...page, projectId: project.id, searchWords: searchWords(request.query.search) });
      return envelope(request, api, page, { count: found.count, results: await serialize(found.results) });
    },
  });

  apiRoute<{ Params: ProjectParams; Body: ActionInput }>(app, api, {
    ...base,
    method: 'POST',
    url: '/api/projects/:project_id/actions/',
    summary: 'Create an action: a name and steps, any of which makes an event match',
    params: projectParams,
    body: patchBody(writable),
    response: { 201: actionSchema },
    handler: async (request, principal, reply) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const body = request.body ?? {};
      const created = await actions.create(project.id, principal.user.id, { ...body, tags: cleanTags(body.tags) });
      return reply.code(201).send(await one(created));
    },
  });

  apiRoute<{ Params: ActionParams }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/projects/:project_id/actions/:id/',
    summary: 'Retrieve an action (deleted ones too)',
    params: actionParams,
    response: { 200: actionSchema },
    handler: async (request, principal) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      return one(await actions.get(project.id, request.params.id));
    },
  });

  apiRoute<{ Params: ActionParams; Body: ActionInput }>(app, api, {
    ...base,
    method: 'PATCH',
    url: '/api/projects/:project_id/actions/:id/',
    summary: 'Update an action; {"deleted": true} soft-deletes it, false restores it',
    params: actionParams,
    body: patchBody(writable),
    response: { 200: actionSchema },
    handler: async (request, principal) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const body = request.body ?? {};
      return one(await actions.update(project.id, request.params.id, { ...body, tags: cleanTags(body.tags) }));
    },
  });
}
