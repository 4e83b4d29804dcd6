/**
 * The contract between the query API (query/, which owns the route, the envelope and the cache)
 * and the query kinds (one folder each: trends/, funnels/, retention/, …). A kind parses its
 * own node and computes its results; it never sees HTTP, and it reaches the event store only
 * through `ctx.run`, which takes dialect-neutral IR (hogql/ir.ts) — so a second engine is a
 * second printer, not a second copy of each kind.
 */
import type { ir, PrintOptions } from '../hogql/index.js';
import type { WeekStartDay } from './time/index.js';

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
  /** Runs one statement on the event store; rows decoded (hogql/dialect.ts RowValue). */
  run(query: ir.IrQuery, options?: PrintOptions): Promise<Row[]>;
}

/** What a kind returns; the query API adds the envelope (cache fields, timings, timezone). */
export interface KindResponse {
  results: unknown;
  /** Any further top-level fields of the kind's response (columns, types, hasMore, resolved_date_range, …). */
  [field: string]: unknown;
}

export interface QueryKind<Node = unknown> {
  readonly kind: string;
  /**
   * Validates the node (the request's `query`), throwing a 400 ApiError whose attr names the
   * field (`series.0.math`), and returns it typed and with defaults applied.
   */
  parse(node: Record<string, unknown>): Node;
  run(node: Node, ctx: InsightContext): Promise<KindResponse>;
  /** Seconds a cached result stays fresh for `refresh: "blocking"` (PostHog: 60 s, or 15 min for insights). */
  freshForSeconds?(node: Node): number;
}
