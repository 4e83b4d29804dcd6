/**
 * How every /api/ route is declared: the caller is authenticated (personal key or browser
 * session, and a key's scope for the route's object checked) before anything the request
 * carries is validated, the body's JSON types are enforced, and the schemas double as the
 * OpenAPI description.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteGenericInterface } from 'fastify';
import { requireScope, type ApiKit, type Principal } from './auth.js';
import { errorResponses, type JsonSchema } from './schemas.js';
import { rejectCoercion } from './strict-body.js';
import { isHyphenatedUuid } from '../util/uuid.js';

export interface ApiRoute<G extends RouteGenericInterface> {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  url: string;
  /** Scope object such as `project`; GET needs `<object>:read`, other methods `<object>:write`. */
  scope: string;
  /** What the route does to its scope object; by default GET reads and other methods write. */
  action?: 'read' | 'write';
  tag: string;
  summary: string;
  params?: JsonSchema;
  querystring?: JsonSchema;
  body?: JsonSchema;
  /** Success responses by status code; the error responses are added here. */
  response: Record<number, JsonSchema>;
  handler(request: FastifyRequest<G>, principal: Principal, reply: FastifyReply): Promise<unknown>;
}

const principals = new WeakMap<object, Principal>();

export function apiRoute<G extends RouteGenericInterface = RouteGenericInterface>(app: FastifyInstance, api: ApiKit, route: ApiRoute<G>): void {
  const action = route.action ?? (route.method === 'GET' ? 'read' : 'write');
  app.route<G>({
    method: route.method,
    url: route.url,
    schema: {
      tags: [route.tag],
      summary: route.summary,
      security: [{ PersonalApiKey: [`${route.scope}:${action}`] }],
      ...(route.params && { params: route.params }),
      ...(route.querystring && { querystring: route.querystring }),
      ...(route.body && { body: route.body }),
      response: { ...route.response, ...errorResponses },
    },
    onRequest: async (request) => {
      const principal = await api.access.authenticate(request);
      requireScope(principal, route.scope, action);
      principals.set(request, principal);
    },
    ...(route.body && { preValidation: rejectCoercion(route.body) }),
    // The route's own schema types the reply; the generic handler signature cannot express that.
    handler: (request, reply) => {
      lowerCaseUuids(request.params as Record<string, unknown>);
      return route.handler(request, principals.get(request)!, reply) as never;
    },
  });
}

/** Stored uuids are lower case; a path may carry one in upper case (Django's UUIDField matches either). */
function lowerCaseUuids(params: Record<string, unknown> | undefined): void {
  for (const [name, value] of Object.entries(params ?? {})) {
    if (typeof value !== 'string') continue;
    const lower = value.toLowerCase();
    if (isHyphenatedUuid(lower)) params![name] = lower;
  }
}
