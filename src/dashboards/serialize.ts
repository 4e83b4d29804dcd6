/**
 * Saved insights and dashboards as PostHog's API returns them (query-api.md §3): the stored
 * fields, the people as basic users, the tiles, and an insight's result fields.
 */
import { dateTime, nullable, object, userBasic } from '../http/schemas.js';
import type { StoredDashboard, StoredInsight, StoredTile, User } from '../store/types.js';
import type { ResultFields } from './results.js';

const anything = {};

export const insightSchema = object({
  id: { type: 'integer' },
  short_id: { type: 'string' },
  name: { type: 'string' },
  derived_name: { type: 'null' },
  description: { type: 'string' },
  query: { type: 'object', additionalProperties: true },
  filters: { type: 'object', additionalProperties: true, description: 'Legacy filters: always {} (the query holds everything)' },
  order: { type: 'null' },
  deleted: { type: 'boolean' },
  dashboards: { type: 'array', items: { type: 'integer' }, description: 'Ids of the dashboards showing it' },
  dashboard_tiles: { type: 'array', items: object({ id: { type: 'integer' }, dashboard_id: { type: 'integer' }, deleted: { type: 'boolean' } }) },
  tags: { type: 'array', items: { type: 'string' } },
  favorited: { type: 'boolean' },
  saved: { type: 'boolean' },
  created_at: dateTime,
  created_by: nullable(userBasic),
  updated_at: dateTime,
  last_modified_at: dateTime,
  last_modified_by: nullable(userBasic),
  is_sample: { type: 'boolean' },
  result: { ...anything, description: "The query's results (null in lists, or when the query was refused)" },
  hasMore: { type: ['boolean', 'null'] },
  columns: { type: ['array', 'null'] },
  types: { type: ['array', 'null'] },
  hogql: { type: ['string', 'null'] },
  is_cached: { type: 'boolean' },
  last_refresh: { type: ['string', 'null'] },
  next_allowed_client_refresh: { type: ['string', 'null'] },
  cache_target_age: { type: ['string', 'null'] },
  timezone: { type: ['string', 'null'] },
  query_status: {
    type: ['object', 'null'],
    additionalProperties: true,
    description: 'When the query API refused the query: {complete, error: true, error_message, code, attr}',
  },
});

const layoutsSchema = { type: 'object', additionalProperties: true, description: '{sm: {x, y, w, h}, xs: …}' };

const tileSchema = object({
  id: { type: 'integer' },
  insight: insightSchema,
  text: { type: 'null' },
  layouts: layoutsSchema,
  color: { type: ['string', 'null'] },
  last_refresh: { type: ['string', 'null'] },
  is_cached: { type: 'boolean' },
});

const dashboardFields = {
  id: { type: 'integer' },
  name: { type: 'string' },
  description: { type: 'string' },
  pinned: { type: 'boolean' },
  created_at: dateTime,
  created_by: nullable(userBasic),
  last_modified_at: dateTime,
  is_shared: { type: 'boolean' },
  deleted: { type: 'boolean' },
  creation_mode: { type: 'string' },
  filters: { type: 'object', additionalProperties: true, description: '{date_from, date_to, properties}: applied over every tile' },
  tags: { type: 'array', items: { type: 'string' } },
  team_id: { type: 'integer' },
};

export const dashboardBasicSchema = object(dashboardFields);
export const dashboardSchema = object({ ...dashboardFields, tiles: { type: 'array', items: tileSchema } });

const userOf = (users: Map<number, User>, id: number | null) => (id === null ? null : (users.get(id) ?? null));

export function serializeInsight(insight: StoredInsight, users: Map<number, User>, tiles: StoredTile[], results: ResultFields) {
  return {
    id: insight.id,
    short_id: insight.short_id,
    name: insight.name,
    derived_name: null,
    description: insight.description,
    query: insight.query,
    filters: {},
    order: null,
    deleted: insight.deleted,
    dashboards: tiles.filter((tile) => !tile.deleted).map((tile) => tile.dashboard_id),
    dashboard_tiles: tiles.map((tile) => ({ id: tile.id, dashboard_id: tile.dashboard_id, deleted: tile.deleted })),
    tags: insight.tags,
    favorited: insight.favorited,
    saved: true,
    created_at: insight.created_at,
    created_by: userOf(users, insight.created_by),
    updated_at: insight.last_modified_at,
    last_modified_at: insight.last_modified_at,
    last_modified_by: userOf(users, insight.last_modified_by),
    is_sample: false,
    ...results,
  };
}

export function serializeDashboard(dashboard: StoredDashboard, users: Map<number, User>) {
  return {
    id: dashboard.id,
    name: dashboard.name,
    description: dashboard.description,
    pinned: dashboard.pinned,
    created_at: dashboard.created_at,
    created_by: userOf(users, dashboard.created_by),
    last_modified_at: dashboard.last_modified_at,
    is_shared: false,
    deleted: dashboard.deleted,
    creation_mode: 'default',
    filters: dashboard.filters,
    tags: dashboard.tags,
    team_id: dashboard.project_id,
  };
}
