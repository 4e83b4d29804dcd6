/**
 * /api/projects/:project_id/dashboards/ (query-api.md §3.2): list, create, retrieve with every
 * tile's insight and result (the dashboard's filters over each query, answered through the
 * query API's service and its cache), and update (fields, filters, tile layouts, removing
 * tiles). Deleting is `PATCH {"deleted": true}`.
 */
import type { FastifyInstance } from 'fastify';
import type { ApiKit } from '../http/auth.js';
import { clientGone } from '../http/client-gone.js';
import { envelope, pageQuery, paginated, readPage } from '../http/pagination.js';
import { searchWords } from '../http/query-params.js';
import { apiRoute } from '../http/route.js';
import { cleanTags, params, patchBody, tags } from '../http/schemas.js';
import type { Project, StoredDashboard } from '../store/types.js';
import type { DashboardInput, Dashboards } from './dashboards-service.js';
import { refreshQuery } from './insight-routes.js';
import type { SavedInsights } from './insights-service.js';
import { refreshParam, type InsightResults } from './results.js';
import { dashboardBasicSchema, dashboardSchema, serializeDashboard, serializeInsight } from './serialize.js';
import { costliestFirst } from './tile-order.js';

export interface DashboardRouteDeps {
  api: ApiKit;
  dashboards: Dashboards;
  insights: SavedInsights;
  results: InsightResults;
}

const writable = {
  name: { type: 'string', maxLength: 400 },
  description: { type: 'string', maxLength: 4000 },
  pinned: { type: 'boolean' },
  filters: { type: 'object', description: '{date_from, date_to, properties}: override every tile' },
  tags,
  deleted: { type: 'boolean', description: 'true: soft delete; false: restore' },
  tiles: {
    type: 'array',
    maxItems: 500,
    description: 'Changes to tiles on the dashboard, by id: layouts, color, deleted (removes the tile)',
    items: {
      type: 'object',
      properties: { id: { type: 'integer' }, layouts: { type: 'object' }, color: { type: ['string', 'null'], maxLength: 40 }, deleted: { type: 'boolean' } },
      required: ['id'],
      additionalProperties: false,
    },
  },
};

type ProjectParams = { project_id: string };
type DashboardParams = ProjectParams & { id: string };

export async function registerDashboardRoutes(app: FastifyInstance, { api, dashboards, insights, results }: DashboardRouteDeps): Promise<void> {
  const base = { scope: 'dashboard', tag: 'dashboards' };
  const projectParams = params({ project_id: 'Project id, or @current' });
  const dashboardParams = params({ project_id: 'Project id, or @current', id: 'Dashboard id' });

  /**
   * The dashboard with its tiles; the tiles' queries run side by side (the cache answers most),
   * the slow kinds started first (tile-order.ts).
   */
  const withTiles = async (project: Project, dashboard: StoredDashboard, refresh: unknown, signal?: AbortSignal) => {
    const placed = await dashboards.placedTiles(dashboard, (id) => insights.get(project.id, String(id)).catch(() => null));
    const users = await insights.usersById([dashboard.created_by, ...placed.flatMap(({ insight }) => [insight.created_by, insight.last_modified_by])]);
    const tiles = await costliestFirst(
      placed,
      ({ insight }) => insight.query,
      async ({ tile, insight }) => {
        const fields = await results.of(project, insight.query, dashboard.filters, refresh, signal);
        return {
          id: tile.id,
          insight: serializeInsight(insight, users, await insights.tiles(insight), fields),
          text: null,
          layouts: tile.layouts,
          color: tile.color,
          last_refresh: fields.last_refresh,
          is_cached: fields.is_cached,
        };
      },
    );
    return { ...serializeDashboard(dashboard, users), tiles };
  };

  apiRoute<{ Params: ProjectParams; Querystring: { limit?: number; offset?: number; search?: string } }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/projects/:project_id/dashboards/',
    summary: 'List dashboards (not deleted), pinned first, then by name',
    params: projectParams,
    querystring: { type: 'object', properties: { ...pageQuery, search: { type: 'string', maxLength: 1000 } } },
    response: { 200: paginated(dashboardBasicSchema) },
    handler: async (request, principal) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const page = readPage(request.query);
      const found = await dashboards.page({ ...page, projectId: project.id, searchWords: searchWords(request.query.search) });
      const users = await insights.usersById(found.results.map((dashboard) => dashboard.created_by));
      return envelope(request, api, page, { count: found.count, results: found.results.map((dashboard) => serializeDashboard(dashboard, users)) });
    },
  });

  apiRoute<{ Params: ProjectParams; Body: DashboardInput }>(app, api, {
    ...base,
    method: 'POST',
    url: '/api/projects/:project_id/dashboards/',
    summary: 'Create a dashboard (insights are placed on it from the insight: "dashboards")',
    params: projectParams,
    body: patchBody(writable),
    response: { 201: dashboardSchema },
    handler: async (request, principal, reply) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const body = request.body ?? {};
      const created = await dashboards.create(project.id, principal.user.id, { ...body, tags: cleanTags(body.tags) });
      return reply.code(201).send(await withTiles(project, created, undefined));
    },
  });

  apiRoute<{ Params: DashboardParams; Querystring: { refresh?: string } }>(app, api, {
    ...base,
    method: 'GET',
    url: '/api/projects/:project_id/dashboards/:id/',
    summary: "Retrieve a dashboard with every tile's insight and result",
    params: dashboardParams,
    querystring: { type: 'object', properties: { refresh: refreshQuery } },
    response: { 200: dashboardSchema },
    handler: async (request, principal, reply) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const refresh = refreshParam(request.query.refresh);
      const dashboard = await dashboards.get(project.id, request.params.id);
      return withTiles(project, dashboard, refresh, clientGone(reply));
    },
  });

  apiRoute<{ Params: DashboardParams; Body: DashboardInput }>(app, api, {
    ...base,
    method: 'PATCH',
    url: '/api/projects/:project_id/dashboards/:id/',
    summary: 'Update a dashboard: fields, filters, tiles (layouts, color, deleted); {"deleted": true} soft-deletes it',
    params: dashboardParams,
    body: patchBody(writable),
    response: { 200: dashboardSchema },
    handler: async (request, principal, reply) => {
      const { project } = await api.access.projectFor(principal, request.params.project_id);
      const body = request.body ?? {};
      const updated = await dashboards.update(project.id, request.params.id, { ...body, tags: cleanTags(body.tags) });
      return withTiles(project, updated, undefined, clientGone(reply));
    },
  });
}
