/**
 * /api/personal_api_keys/: a user's own keys. The value is returned once, on creation; after
 * that only its mask. Deleting a key revokes it at once (lookups go to the store every time).
 */
import type { FastifyInstance } from 'fastify';
import type { PersonalApiKey } from '../../store/types.js';
import { newPersonalApiKey } from '../../util/keys.js';
import type { Principal } from '../auth.js';
import type { AppContext } from '../context.js';
import { notFound, validationError } from '../errors.js';
import { envelope, pageQuery, paginated, readPage, slicePage } from './pagination.js';
import { apiRoute } from './route.js';
import { dateTime, noContent, nullable, object, params, patchBody, uuid } from './schemas.js';
import { scopesForNewKey } from './scopes.js';

const MAX_KEYS_PER_USER = 10;

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

async function keyFor(ctx: AppContext, principal: Principal, id: string): Promise<PersonalApiKey> {
  if (id === '@current') {
    if (principal.key === null) throw notFound('No personal API key made this request: it was signed in with a session.');
    return principal.key;
  }
  const key = (await ctx.stores.meta.tenancy.listPersonalApiKeys(principal.user.id)).find((k) => k.id === id);
  if (!key) throw notFound();
  return key;
}

export async function registerPersonalKeyRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const tenancy = ctx.stores.meta.tenancy;
  const base = { scope: 'personal_api_key', tag: 'personal_api_keys' };

  apiRoute<{ Querystring: Record<string, unknown> }>(app, ctx, {
    ...base,
    method: 'GET',
    url: '/api/personal_api_keys/',
    summary: "List the requesting user's personal API keys (newest first)",
    querystring: { type: 'object', properties: pageQuery },
    response: { 200: paginated(keySchema) },
    handler: async (request, principal) => {
      const page = readPage(request.query);
      const keys = await tenancy.listPersonalApiKeys(principal.user.id);
      return envelope(request, ctx, page, slicePage(keys.map(serialize), page));
    },
  });

  apiRoute<{ Body: { label?: string; scopes?: string[] } }>(app, ctx, {
    ...base,
    method: 'POST',
    url: '/api/personal_api_keys/',
    summary: 'Create a personal API key; its value is shown only in this response',
    body: patchBody({
      label: { type: 'string', maxLength: 40 },
      scopes: { type: 'array', items: { type: 'string' }, maxItems: 100, description: "'*' or '<object>:<read|write>'; default: the creating key's scopes" },
    }),
    response: { 201: createdKeySchema },
    handler: async (request, principal, reply) => {
      const body = request.body ?? {};
      const scopes = scopesForNewKey(body.scopes, principal.key?.scopes ?? null);
      if ((await tenancy.listPersonalApiKeys(principal.user.id)).length >= MAX_KEYS_PER_USER) {
        throw validationError(`You can only have ${MAX_KEYS_PER_USER} personal API keys. Remove an existing key before creating a new one.`);
      }
      const value = newPersonalApiKey();
      const key = await tenancy.createPersonalApiKey({ userId: principal.user.id, label: body.label?.trim() || 'API key', value, scopes });
      return reply.code(201).send({ ...serialize(key), value });
    },
  });

  apiRoute<{ Params: { id: string } }>(app, ctx, {
    ...base,
    method: 'GET',
    url: '/api/personal_api_keys/:id/',
    summary: 'Retrieve one of your keys (masked)',
    params: keyParams,
    response: { 200: keySchema },
    handler: async (request, principal) => serialize(await keyFor(ctx, principal, request.params.id)),
  });

  apiRoute<{ Params: { id: string } }>(app, ctx, {
    ...base,
    method: 'DELETE',
    url: '/api/personal_api_keys/:id/',
    summary: 'Revoke one of your keys',
    params: keyParams,
    response: { 204: noContent },
    handler: async (request, principal, reply) => {
      const key = await keyFor(ctx, principal, request.params.id);
      await tenancy.deletePersonalApiKey(principal.user.id, key.id);
      return reply.code(204).send();
    },
  });
}
