/**
 * What a saved insight's `query` may be, and how a dashboard's filters change the query a tile
 * runs. PostHog saves a display wrapper (`InsightVizNode`, `DataTableNode`,
 * `DataVisualizationNode`) around the query itself, or the bare query; either is accepted.
 */
import { validationError } from '../kernel/errors.js';
import { isPlainObject, type JsonObject } from '../kernel/json.js';
import type { DashboardFilters } from '../store/types.js';

const WRAPPERS = new Set(['InsightVizNode', 'DataTableNode', 'DataVisualizationNode']);

/** The query kinds a saved insight may hold (query-api.md §1). */
export const SAVED_QUERY_KINDS = [
  'TrendsQuery',
  'FunnelsQuery',
  'RetentionQuery',
  'LifecycleQuery',
  'StickinessQuery',
  'PathsQuery',
  'HogQLQuery',
  'EventsQuery',
] as const;

/** Kinds whose dates and properties are `dateRange` and `properties` (InsightsQueryBase). */
const INSIGHT_KINDS = new Set(['TrendsQuery', 'FunnelsQuery', 'RetentionQuery', 'LifecycleQuery', 'StickinessQuery', 'PathsQuery']);

/** Validates a node the query API would run; true when it was checked, false when its kind is not served yet. */
export type ValidateNode = (node: JsonObject, attrPrefix: string) => boolean;

/** Checks a saved query's shape and, when the query API serves its kind, the query itself. */
export function checkSavedQuery(value: unknown, validate: ValidateNode): JsonObject {
  if (!isPlainObject(value)) throw validationError('query must be a query node: an object with a kind.', 'query');
  if (typeof value.kind !== 'string' || value.kind === '') throw validationError('This field is required.', 'query.kind', 'required');
  if (WRAPPERS.has(value.kind)) {
    if (!isPlainObject(value.source)) throw validationError(`A ${value.kind} needs a source query.`, 'query.source', 'required');
    checkKind(value.source.kind, 'query.source.kind');
    validate(value.source, 'query.source.');
  } else {
    checkKind(value.kind, 'query.kind');
    validate(value, 'query.');
  }
  return value;
}

function checkKind(kind: unknown, attr: string): void {
  if (typeof kind !== 'string' || !(SAVED_QUERY_KINDS as readonly string[]).includes(kind)) {
    throw validationError(`Unsupported query kind "${String(kind).slice(0, 100)}"; a saved insight holds one of ${SAVED_QUERY_KINDS.join(', ')}.`, attr, 'invalid_choice');
  }
}

/** The query a saved node runs: the wrapper's source, or the node itself. */
export const sourceOf = (query: JsonObject): JsonObject => (WRAPPERS.has(String(query.kind)) && isPlainObject(query.source) ? query.source : query);

/**
 * The query with a dashboard's filters applied over its own, as PostHog's `filters_override`:
 * a dashboard date bound replaces the query's, dashboard properties are ANDed with its own.
 */
export function withDashboardFilters(source: JsonObject, filters: DashboardFilters): JsonObject {
  const dates = pickDates(filters);
  const properties = filters.properties ?? [];
  if (!dates && properties.length === 0) return source;
  const kind = String(source.kind);
  if (INSIGHT_KINDS.has(kind)) {
    return {
      ...source,
      ...(dates && { dateRange: { ...(isPlainObject(source.dateRange) ? source.dateRange : {}), ...dates } }),
      ...(properties.length > 0 && { properties: andProperties(source.properties, properties) }),
    };
  }
  if (kind === 'HogQLQuery') {
    // PostHog applies these where the statement says `{filters}` (the HogQL kind does not read them yet).
    const own = isPlainObject(source.filters) ? source.filters : {};
    return {
      ...source,
      filters: {
        ...own,
        ...(dates && { dateRange: { ...(isPlainObject(own.dateRange) ? own.dateRange : {}), ...dates } }),
        ...(properties.length > 0 && { properties: andProperties(own.properties, properties) }),
      },
    };
  }
  if (kind === 'EventsQuery') {
    return {
      ...source,
      ...(dates?.date_from !== undefined && { after: dates.date_from }),
      ...(dates?.date_to !== undefined && { before: dates.date_to }),
      ...(properties.length > 0 && { properties: [...(Array.isArray(source.properties) ? source.properties : []), ...properties] }),
    };
  }
  return source;
}

function pickDates(filters: DashboardFilters): { date_from?: string; date_to?: string } | null {
  const dates: { date_from?: string; date_to?: string } = {};
  if (typeof filters.date_from === 'string') dates.date_from = filters.date_from;
  if (typeof filters.date_to === 'string') dates.date_to = filters.date_to;
  return Object.keys(dates).length > 0 ? dates : null;
}

/** A query's own properties (a list, or a property group) ANDed with more. */
function andProperties(own: unknown, more: JsonObject[]): unknown {
  if (own === undefined || own === null) return more;
  if (Array.isArray(own)) return [...own, ...more];
  return { type: 'AND', values: [own, { type: 'AND', values: more }] };
}
