/**
 * A saved insight's results, computed by the query API's service (and so served from its cache
 * while fresh): the fields PostHog adds to an insight it returns with its result. A query the
 * API refuses gives `result: null` and the refusal in `query_status.error_message`, so one
 * broken tile does not take its dashboard down.
 */
import { ApiError } from '../kernel/errors.js';
import type { JsonObject } from '../kernel/json.js';
import type { DashboardFilters, EventStore, Project } from '../store/types.js';
import { cachePolicy } from '../insights/query/refresh.js';
import { sourceOf, withDashboardFilters } from './query-node.js';

/** The one QueryService call a saved insight needs (insights/query/service.ts). */
export interface QueryResponder {
  respond(project: Project, request: JsonObject, events: EventStore, signal?: AbortSignal): Promise<string>;
}

export interface ResultFields {
  result: unknown;
  hasMore: boolean | null;
  columns: unknown[] | null;
  types: unknown[] | null;
  hogql: string | null;
  is_cached: boolean;
  last_refresh: string | null;
  next_allowed_client_refresh: string | null;
  cache_target_age: string | null;
  timezone: string | null;
  query_status: { complete: true; error: true; error_message: string; code: string; attr: string | null } | null;
}

/** The `refresh` query parameter: its text forms (`true`, `false`) or a mode, checked up front. */
export function refreshParam(raw: string | undefined): unknown {
  const refresh = raw === 'true' ? true : raw === 'false' || raw === undefined ? undefined : raw;
  cachePolicy(refresh);
  return refresh;
}

export class InsightResults {
  constructor(
    private readonly queries: QueryResponder,
    /** The event store once it holds every event acknowledged so far. */
    private readonly events: () => Promise<EventStore>,
  ) {}

  async of(project: Project, query: JsonObject, filters: DashboardFilters, refresh: unknown, signal?: AbortSignal): Promise<ResultFields> {
    const source = withDashboardFilters(sourceOf(query), filters);
    try {
      const text = await this.queries.respond(project, { query: source, ...(refresh !== undefined && { refresh }) }, await this.events(), signal);
      const body = JSON.parse(text) as JsonObject;
      return {
        result: body.results ?? null,
        hasMore: (body.hasMore as boolean | undefined) ?? null,
        columns: (body.columns as unknown[] | undefined) ?? null,
        types: (body.types as unknown[] | undefined) ?? null,
        hogql: (body.hogql as string | null | undefined) ?? null,
        is_cached: body.is_cached === true,
        last_refresh: (body.last_refresh as string | undefined) ?? null,
        next_allowed_client_refresh: (body.next_allowed_client_refresh as string | undefined) ?? null,
        cache_target_age: null,
        timezone: (body.timezone as string | undefined) ?? null,
        query_status: null,
      };
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      return {
        ...EMPTY,
        query_status: { complete: true, error: true, error_message: error.detail, code: error.code, attr: error.attr ?? null },
      };
    }
  }
}

/** The result fields of an insight returned without computing it (lists). */
export const EMPTY: ResultFields = {
  result: null,
  hasMore: null,
  columns: null,
  types: null,
  hogql: null,
  is_cached: false,
  last_refresh: null,
  next_allowed_client_refresh: null,
  cache_target_age: null,
  timezone: null,
  query_status: null,
};
