/**
 * PostHog's query API (query-api.md §1.1–1.3): `POST /api/projects/:id/query/` and the same under
 * `/api/environments/:id/`, with an optional `/:Kind/` suffix that must match the body's kind.
 * Scope `query:read` (a query is a read, as PostHog counts it).
 */
import type { FastifyInstance } from 'fastify';
import type { ApiKit } from '../../http/auth.js';
import { apiRoute } from '../../http/route.js';
import { params } from '../../http/schemas.js';
import { notFound, validationError } from '../../kernel/errors.js';
import type { EventStore } from '../../store/types.js';
import type { QueryService } from './service.js';

export interface QueryRouteDeps {
  api: ApiKit;
  queries: QueryService;
  /** The event store once it holds every event acknowledged so far. */
  queryableEvents(): Promise<EventStore>;
}

type QueryParams = { project_id: string; kind?: string };

const body = {
  type: 'object',
  properties: {
    query: { type: 'object', description: 'A query node; `kind` selects what runs (TrendsQuery, FunnelsQuery, HogQLQuery, …)' },
    refresh: { description: '`blocking` (default), `force_blocking`, `async`, `lazy_async`, `force_async`, `force_cache`; `true` means force_blocking' },
    client_query_id: { type: 'string', maxLength: 200 },
    async: { type: 'boolean' },
    name: { type: 'string', maxLength: 128 },
    filters_override: {},
    variables_override: {},
    limit_context: {},
  },
  required: ['query'],
} as const;

export async function registerQueryRoutes(app: FastifyInstance, deps: QueryRouteDeps): Promise<void> {
  const { api, queries } = deps;
  for (const root of ['projects', 'environments']) {
    for (const suffix of ['', ':kind/']) {
      apiRoute<{ Params: QueryParams; Body: Record<string, unknown> }>(app, api, {
        method: 'POST',
        action: 'read',
        url: `/api/${root}/:project_id/query/${suffix}`,
        scope: 'query',
        tag: 'query',
        summary: 'Run a query: HogQL, events, trends, funnels, retention, lifecycle, stickiness, paths or actors',
        params: params(suffix ? { project_id: 'Project id, or @current', kind: 'Must equal query.kind' } : { project_id: 'Project id, or @current' }),
        body,
        response: { 200: { type: 'object', additionalProperties: true } },
        handler: async (request, principal, reply) => {
          const { project } = await api.access.projectFor(principal, request.params.project_id);
          const node = request.body.query as Record<string, unknown>;
          if (request.params.kind !== undefined && !queries.knows(request.params.kind)) throw notFound();
          if (request.params.kind !== undefined && request.params.kind !== node.kind) {
            throw validationError(`Query kind mismatch: the path says ${request.params.kind}, the body's query.kind says ${String(node.kind)}.`, 'query.kind');
          }
          const events = await deps.queryableEvents();
          return queries.answer(project, request.body, events, reply);
        },
      });
    }
  }
}
