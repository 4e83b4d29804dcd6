/**
 * /api/projects/:project_id/insights/ (query-api.md §3.1): list, create, retrieve (with its
 * result, computed through the query API's service and its cache) and update. Deleting is
 * `PATCH {"deleted": true}`; DELETE is refused with 405, as PostHog refuses it.
 */
import type { FastifyInstance } from 'fastify';
import type { ApiKit } from '../http/auth.js';
import { clientGone } from '../http/client-gone.js';
import { envelope, pageQuery, paginated, readPage } from '../http/pagination.js';
import { searchWords } from '../http/query-params.js';
import { apiRoute } from '../http/route.js';
import { cleanTags, params, patchBody, tags } from '../http/schemas.js';
import type { StoredInsight } from '../store/types.js';
import type { InsightInput, SavedInsights } from './insights-service.js';
import { EMPTY, refreshParam, type InsightResults, type ResultFields } from './results.js';
import { insightSchema, serializeInsight } from './serialize.js';

export interface InsightRouteDeps {
  api: ApiKit;
  insights: SavedInsights;
  results: InsightResults;
}

const writable = {
  name: { type: 'string', maxLength: 400 },
  description: { type: 'string', maxLength: 4000 },
  query: { type: 'object', description: 'InsightVizNode {source: TrendsQuery|FunnelsQuery|…}, DataVisualizationNode {source: HogQLQuery}, or a bare query' },
  favorited: { type: 'boolean' },
  tags,
  deleted: { type: 'boolean', description: 'true: soft delete; false: restore' },
  dashboards: { type: 'array', items: { type: 'integer' }, maxItems: 100, description: 'Ids of every dashboard to show it on' },
};

export const refreshQuery = {
  type: 'string',
  maxLength: 40,
  description: 'blocking (default: cached result while fresh, else computed), force_blocking, lazy_async, …; true = force_blocking',
};

type ProjectParams = { project_id: string };
type InsightParams = ProjectParams & { id: string };

export async function registerInsightRoutes(app: FastifyInstance, { api, insights, results }: InsightRouteDeps): Promise<void> {
  const base = { scope: 'insight', tag: 'insights' };
  const projectParams = params({ project_id: 'Project id, or @current' });
  const insightParams = params({ project_id: 'Project id, or @current', id: 'Insight id' });

  const respond = async (insight: StoredInsight, fields: ResultFields) => {
    const users = await insights.usersById([insight.created_by, insight.last_modified_by]);
    return serializeInsight(insight, users, await insights.tiles(insight), fields);
  };

  apiRoute<{ Params: ProjectParams; Querystring: { limit?: number; offset?: number; search?: string; favorited?: boolean; dashboard?: number; short_id?: string } }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/projects/:project_id/insights/',
    summary: 'List saved insights (not deleted), last modified first; results are not computed here',
    params: projectParams,
    querystring: {
      type: 'object',
      properties: {
        ...pageQuery,
        search: { type: 'string', maxLength: 1000, description: 'Every word must occur in the name or the description' },
        favorited: { type: 'boolean' },
        dashboard: { type: 'integer', minimum: 1, description: 'Only insights on this dashboard' },
        short_id: { type: 'string', maxLength: 20 },
      },
    },
    response: { 200: paginated(insightSchema) },
    handler: async (request, principal) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const page = readPage(request.query);
      const q = request.query;
      let found;
      if (q.short_id !== undefined) {
        const one = await insights.byShortId(project.id, q.short_id);
        const list = one && !one.deleted ? [one] : [];
        found = { count: list.length, results: list.slice(page.offset, page.offset + page.limit) };
      } else {
        found = await insights.page({ ...page, projectId: project.id, searchWords: searchWords(q.search), favorited: q.favorited ?? null, dashboardId: q.dashboard ?? null });
      }
      const users = await insights.usersById(found.results.flatMap((insight) => [insight.created_by, insight.last_modified_by]));
      const shaped = [];
      for (const insight of found.results) shaped.push(serializeInsight(insight, users, await insights.tiles(insight), EMPTY));
      return envelope(request, api, page, { count: found.count, results: shaped });
    },
  });

  apiRoute<{ Params: ProjectParams; Body: InsightInput }>(app, api, {
    ...base,
    method: 'POST',
    url: '/api/projects/:project_id/insights/',
    summary: 'Save an insight (its query is checked as the query API checks it)',
    params: projectParams,
    body: patchBody(writable),
    response: { 201: insightSchema },
    handler: async (request, principal, reply) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const body = request.body ?? {};
      const created = await insights.create(project.id, principal.user.id, { ...body, tags: cleanTags(body.tags) });
      return reply.code(201).send(await respond(created, EMPTY));
    },
  });

  apiRoute<{ Params: InsightParams; Querystring: { refresh?: string } }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/projects/:project_id/insights/:id/',
    summary: "Retrieve a saved insight with its result (the query API's cache answers while fresh)",
    params: insightParams,
    querystring: { type: 'object', properties: { refresh: refreshQuery } },
    response: { 200: insightSchema },
    handler: async (request, principal, reply) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const refresh = refreshParam(request.query.refresh);
      const insight = await insights.get(project.id, request.params.id);
      return respond(insight, await results.of(project, insight.query, {}, refresh, clientGone(reply)));
    },
  });

  apiRoute<{ Params: InsightParams; Body: InsightInput }>(app, api, {
    ...base,
    method: 'PATCH',
    url: '/api/projects/:project_id/insights/:id/',
    summary: 'Update a saved insight; {"deleted": true} soft-deletes it, "dashboards" sets the dashboards showing it',
    params: insightParams,
    body: patchBody(writable),
    response: { 200: insightSchema },
    handler: async (request, principal) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const body = request.body ?? {};
      const updated = await insights.update(project.id, request.params.id, principal.user.id, { ...body, tags: cleanTags(body.tags) });
      return respond(updated, EMPTY);
    },
  });
}
