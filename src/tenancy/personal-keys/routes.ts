/**
 * /api/personal_api_keys/: a user's own keys (service.ts). The value is returned once, on
 * creation; after that only its mask.
 */
import type { FastifyInstance } from 'fastify';
import type { PersonalApiKey } from '../../store/types.js';
import type { ApiKit } from '../../http/auth.js';
import { envelope, pageQuery, paginated, readPage, slicePage } from '../../http/pagination.js';
import { apiRoute } from '../../http/route.js';
import { dateTime, noContent, nullable, object, params, patchBody, uuid } from '../../http/schemas.js';
import type { PersonalKeys } from './service.js';

const keySchema = object({
  id: uuid,
  label: { type: 'string' },
  mask_value: { type: 'string', description: 'First and last four characters, e.g. phx_...abcd' },
  scopes: { type: 'array', items: { type: 'string' } },
  user_id: { type: 'integer' },
  created_at: dateTime,
  last_used_at: nullable(dateTime),
});
const createdKeySchema = object({ ...(keySchema.properties as object), value: { type: 'string', description: 'Shown only in this response.' } });

const serialize = (key: PersonalApiKey) => ({ ...key, scopes: key.scopes ?? ['*'] });

const keyParams = params({ id: 'Key id, or @current for the key making the request' });

export interface PersonalKeyRouteDeps {
  api: ApiKit;
  keys: PersonalKeys;
}

export async function registerPersonalKeyRoutes(app: FastifyInstance, { api, keys }: PersonalKeyRouteDeps): Promise<void> {
  const base = { scope: 'personal_api_key', tag: 'personal_api_keys' };

  apiRoute<{ Querystring: Record<string, unknown> }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/personal_api_keys/',
    summary: "List the requesting user's personal API keys (newest first)",
    querystring: { type: 'object', properties: pageQuery },
    response: { 200: paginated(keySchema) },
    handler: async (request, principal) => {
      const page = readPage(request.query);
      const own = await keys.list(principal.user.id);
      return envelope(request, api, page, slicePage(own.map(serialize), page));
    },
  });

  apiRoute<{ Body: { label?: string; scopes?: string[] } }>(app, api, {
    ...base,
    method: 'POST',
    url: '/api/personal_api_keys/',
    summary: 'Create a personal API key; its value is shown only in this response',
    body: patchBody({
      label: { type: 'string', maxLength: 40 },
      scopes: { type: 'array', items: { type: 'string' }, maxItems: 100, description: "'*' or '<object>:<read|write>'; default: the creating key's scopes (all, from a browser session)" },
    }),
    response: { 201: createdKeySchema },
    handler: async (request, principal, reply) => {
      const { key, value } = await keys.create(principal, request.body ?? {});
      return reply.code(201).send({ ...serialize(key), value });
    },
  });

  apiRoute<{ Params: { id: string } }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/personal_api_keys/:id/',
    summary: 'Retrieve one of your keys (masked)',
    params: keyParams,
    response: { 200: keySchema },
    handler: async (request, principal) => serialize(await keys.get(principal, request.params.id)),
  });

  apiRoute<{ Params: { id: string } }>(app, api, {
    ...base,
    method: 'DELETE',
    url: '/api/personal_api_keys/:id/',
    summary: 'Revoke one of your keys',
    params: keyParams,
    response: { 204: noContent },
    handler: async (request, principal, reply) => {
      await keys.revoke(principal, request.params.id);
      return reply.code(204).send();
    },
  });
}
