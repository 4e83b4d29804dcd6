/**
 * The contract between the query API (query/, which owns the route, the envelope and the cache)
 * and the query kinds (one folder each: trends/, funnels/, retention/, …). A kind parses its
 * own node and computes its results; it never sees HTTP, and it reaches the event store only
 * through `ctx.run`, which takes dialect-neutral IR (hogql/ir.ts) — so a second engine is a
 * second printer, not a second copy of each kind.
 */
import type { ir, PrintOptions, SqlDialect } from '../hogql/index.js';
import type { WeekStartDay } from './time/index.js';
import type { GroupValues } from '../events/group-filters.js';
import type { StoredGroup } from '../store/types.js';

export type Row = Record<string, unknown>;

export interface InsightProject {
  id: number;
  /** IANA zone every bucket is computed in; echoed as the response's `timezone`. */
  timeZone: string;
  weekStartDay: WeekStartDay;
  /** The project's `test_account_filters` (property filters), ANDed when a query sets filterTestAccounts. */
  testAccountFilters: unknown[];
}

export interface InsightContext {
  project: InsightProject;
  /** The request's "now": relative dates count back from it. */
  now: Date;
  /** The group properties the query's filters and breakdowns read (events/group-filters.ts), or null. */
  groupValues?: GroupValues | null;
  /** Names of the cohorts a cohort breakdown lists (loaded by the query service), by id. */
  cohortNames?: ReadonlyMap<number, string> | null;
  /** The stored groups of a type among `keys` (metadata store), for listing group actors; absent where there are none. */
  groupsOfKeys?: ((groupTypeIndex: number, keys: readonly string[]) => Promise<StoredGroup[]>) | null;
  /** Runs one statement on the event store; rows decoded (hogql/dialect.ts RowValue). */
  run(query: ir.IrQuery, options?: PrintOptions): Promise<Row[]>;
  /** What the event store's SQL does well, where an insight can say the same thing two ways. */
  engine: Pick<SqlDialect, 'prefersAsOfJoins'>;
}

/** What a kind returns; the query API adds the envelope (cache fields, timings, timezone). */
export interface KindResponse {
  results: unknown;
  /** Any further top-level fields of the kind's response (columns, types, hasMore, resolved_date_range, …). */
  [field: string]: unknown;
}

/** One data point of an insight, as InsightActorsQuery names it (query-api.md §1.13). */
export interface ActorsPoint {
  /** The bucket: its date text (`2025-03-09`) or index, as the kind's results name it. */
  day?: string | number | null;
  /** Index of the series. */
  series?: number | null;
  breakdown?: unknown;
  compare?: 'current' | 'previous' | null;
  /** Lifecycle status, funnel step (1-based; negative: dropped off before it), retention interval. */
  status?: string | null;
  funnelStep?: number | null;
  interval?: number | null;
  /** Funnels' trends view: the entry period (a `days` entry) and whether to list who did not convert. */
  funnelTrendsEntrancePeriodStart?: string | null;
  funnelTrendsDropOff?: boolean | null;
  /** Paths: a node (`"1_/home"`), with pathEndKey an edge; pathDropoffKey: paths that ended at a node. */
  pathStartKey?: string | null;
  pathEndKey?: string | null;
  pathDropoffKey?: string | null;
}

export interface QueryKind<Node = unknown> {
  readonly kind: string;
  /**
   * Validates the node (the request's `query`), throwing a 400 ApiError whose attr names the
   * field (`series.0.math`), and returns it typed and with defaults applied.
   */
  parse(node: Record<string, unknown>): Node;
  run(node: Node, ctx: InsightContext): Promise<KindResponse>;
  /**
   * The persons behind one data point (ActorsQuery with an InsightActorsQuery source): a
   * statement whose first column is the person id (UUID). Kinds without it answer such a
   * request with a 400.
   */
  actors?(node: Node, point: ActorsPoint, ctx: InsightContext): ir.IrQuery | Promise<ir.IrQuery>;
  /**
   * The group type index when the point's actors are groups (the insight aggregates by group):
   * `actors` then yields group keys (`$group_N`, never empty) instead of person ids. Absent or
   * null: persons.
   */
  actorsGroupType?(node: Node, point: ActorsPoint): number | null;
  /** Seconds a cached result stays fresh for `refresh: "blocking"` (PostHog: 60 s, or 15 min for insights). */
  freshForSeconds?(node: Node): number;
}
