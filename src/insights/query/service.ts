/**
 * Answers a query request: picks the kind, lets it parse its node, serves a fresh cached result
 * or computes one, and wraps it in PostHog's envelope (query-api.md §1.3).
 */
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { clientGone } from '../../http/client-gone.js';
import { ApiError, validationError } from '../../kernel/errors.js';
import { runner } from '../../events/run.js';
import type { CohortStore, EventStore, EventStorePosition, GroupStore, Project } from '../../store/types.js';
import { cohortBreakdownIds, isObject } from '../node-fields.js';
import { groupPropertiesOf, loadGroupProperties } from '../../events/group-filters.js';
import { queryKinds } from '../kinds.js';
import type { InsightProject, QueryKind } from '../types.js';
import { isoWithOffset } from '../time/index.js';
import { resolveActions, type ActionLookup } from './actions.js';
import { resultCsv } from './csv.js';
import { cachePolicy } from './refresh.js';
import { ResultCache } from './result-cache.js';

const positionText = (position: EventStorePosition) => `${position.seq}.${position.events}`;

/** Bumped when a kind's results change for the same query, so old cached results are not served. */
const CACHE_VERSION = 1;
/** PostHog's default minimum age before a blocking request recomputes. */
const DEFAULT_FRESH_SECONDS = 60;

export interface QueryServiceOptions {
  cacheBytes: number;
  kinds?: ReadonlyMap<string, QueryKind<unknown>>;
  now?: () => Date;
  /** Resolves ActionsNode ids; absent where the metadata store has no actions. */
  actions?: ActionLookup;
  /** Reads group properties for group filters and breakdowns, and the groups an actors list shows; absent where the metadata store has no groups. */
  groups?: Pick<GroupStore, 'propertyOfGroups' | 'ofKeys'>;
  /** Reads the names of a cohort breakdown's cohorts (its labels); absent: labels are the ids. */
  cohorts?: Pick<CohortStore, 'get'>;
}

export class QueryService {
  private readonly cache: ResultCache;
  private readonly kinds: ReadonlyMap<string, QueryKind<unknown>>;
  private readonly now: () => Date;
  private readonly actions: ActionLookup | null;
  private readonly groups: Pick<GroupStore, 'propertyOfGroups' | 'ofKeys'> | null;
  private readonly cohorts: Pick<CohortStore, 'get'> | null;

  constructor(options: QueryServiceOptions) {
    this.cache = new ResultCache(options.cacheBytes);
    this.kinds = options.kinds ?? queryKinds;
    this.now = options.now ?? (() => new Date());
    this.actions = options.actions ?? null;
    this.groups = options.groups ?? null;
    this.cohorts = options.cohorts ?? null;
  }

  /** The reply's body as JSON text (cached results are kept as text), or the results as CSV. */
  async answer(project: Project, request: Record<string, unknown>, events: EventStore, reply: FastifyReply, format: 'json' | 'csv' = 'json'): Promise<unknown> {
    const json = await this.respond(project, request, events, clientGone(reply));
    if (format === 'csv') {
      reply.header('content-type', 'text/csv; charset=utf-8');
      reply.header('content-disposition', 'attachment; filename="query.csv"');
      return resultCsv(JSON.parse(json) as Record<string, unknown>);
    }
    reply.header('content-type', 'application/json; charset=utf-8');
    return json;
  }

  /**
   * The response to a query request as JSON text, from the cache when the request's refresh
   * mode allows; saved insights and dashboard tiles are answered through here too.
   */
  async respond(project: Project, request: Record<string, unknown>, events: EventStore, signal?: AbortSignal): Promise<string> {
    const policy = cachePolicy(request.refresh ?? (request.async === true ? 'async' : undefined));
    const node = (await resolveActions(request.query, project.id, this.actions)) as Record<string, unknown>;
    const kind = this.kindOf(node);
    const parsed = kind.parse(node);
    const insightProject = insightProjectOf(project);
    const groupValues = await loadGroupProperties(groupPropertiesOf([node, insightProject.testAccountFilters]), project.id, this.groups, 'query');
    // The event store's position is the data version: new events (and the person changes that
    // come with them) make every cached result stale; so do changed group properties it read.
    // A store several nodes write has a version of its own that every node's writes move.
    const dataVersion = events.dataVersion ? await events.dataVersion() : positionText(await events.position());
    const groupsRead = groupValues ? [...groupValues].map(([name, values]) => [name, [...values]]) : null;
    // A renamed cohort changes labels: the names read are part of the key too.
    const cohortNames = await loadCohortNames(node, project.id, this.cohorts);
    const key = cacheKey(kind.kind, parsed, insightProject, dataVersion, [groupsRead, cohortNames ? [...cohortNames] : null]);
    const now = this.now();

    const cached = policy.useCache ? this.cache.get(key) : undefined;
    if (cached && (policy.acceptStale || cached.freshUntil > now.getTime())) {
      return cached.json.replace('"is_cached":false', '"is_cached":true');
    }

    const started = performance.now();
    const groups = this.groups;
    const groupsOfKeys = groups ? (index: number, keys: readonly string[]) => groups.ofKeys(project.id, index, keys) : null;
    const computed = await kind.run(parsed, { project: insightProject, now, groupValues, cohortNames, groupsOfKeys, run: runner(events, 'query', signal), engine: events.dialect });
    const seconds = (performance.now() - started) / 1000;
    const freshFor = kind.freshForSeconds?.(parsed) ?? DEFAULT_FRESH_SECONDS;
    const body = {
      ...computed,
      // `is_cached` first, so a cache hit can flip it in the stored text without reparsing.
      is_cached: false,
      hogql: computed.hogql ?? null,
      timings: [{ k: './query', t: seconds }],
      error: null,
      modifiers: {},
      query_status: null,
      last_refresh: isoWithOffset(now.getTime(), 'UTC'),
      next_allowed_client_refresh: isoWithOffset(now.getTime() + freshFor * 1000, 'UTC'),
      cache_key: key,
      cache_target_age: null,
      timezone: insightProject.timeZone,
    };
    const json = JSON.stringify(body);
    this.cache.set(key, { json, computedAt: now.getTime(), freshUntil: now.getTime() + freshFor * 1000 });
    return json;
  }

  /**
   * Checks a query node as a request would check it (a 400 naming the field, under `attrPrefix`).
   * False when no kind of that name is served, so a saved insight may name a kind not built yet.
   */
  validate(node: Record<string, unknown>, attrPrefix: string): boolean {
    const kind = typeof node.kind === 'string' ? this.kinds.get(node.kind) : undefined;
    if (!kind) return false;
    try {
      kind.parse(node);
    } catch (error) {
      if (error instanceof ApiError && error.status === 400) {
        throw validationError(error.detail, error.attr ? `${attrPrefix}${error.attr}` : attrPrefix.replace(/\.$/, ''), error.code);
      }
      throw error;
    }
    return true;
  }

  knows(kind: string): boolean {
    return this.kinds.has(kind);
  }

  private kindOf(node: Record<string, unknown>): QueryKind<unknown> {
    const name = node.kind;
    if (typeof name !== 'string' || name === '') throw validationError('query.kind is required.', 'query.kind', 'required');
    const kind = this.kinds.get(name);
    if (!kind) {
      throw validationError(`Unsupported query kind "${name.slice(0, 100)}"; supported: ${[...this.kinds.keys()].join(', ') || 'none yet'}.`, 'query.kind', 'invalid_choice');
    }
    return kind;
  }
}

/** The project settings a query reads. */
export function insightProjectOf(project: Project): InsightProject {
  return {
    id: project.id,
    timeZone: project.timezone || 'UTC',
    weekStartDay: project.week_start_day === 1 ? 1 : 0,
    testAccountFilters: project.test_account_filters ?? [],
  };
}

/** Names of the cohorts a cohort breakdown lists, or null. */
async function loadCohortNames(node: Record<string, unknown>, projectId: number, cohorts: Pick<CohortStore, 'get'> | null): Promise<Map<number, string> | null> {
  const filter = node.breakdownFilter;
  if (!cohorts || !isObject(filter) || filter.breakdown_type !== 'cohort' || filter.breakdown === undefined || filter.breakdown === null) return null;
  let ids: (number | 'all')[];
  try {
    ids = cohortBreakdownIds(filter.breakdown, 'breakdownFilter.breakdown');
  } catch {
    return null; // a kind without cohort breakdowns ignores the field
  }
  const names = new Map<number, string>();
  for (const id of ids) {
    if (id === 'all') continue;
    const cohort = await cohorts.get(projectId, id);
    if (cohort) names.set(id, cohort.name);
  }
  return names;
}

function cacheKey(kind: string, node: unknown, project: InsightProject, dataVersion: string, groupsRead: unknown): string {
  const text = JSON.stringify([CACHE_VERSION, kind, node, project, dataVersion, groupsRead]);
  return `cache_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
}
