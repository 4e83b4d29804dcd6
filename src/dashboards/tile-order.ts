/**
 * The order a dashboard starts its tiles' queries in. The event store runs a few queries at a
 * time (its reader connections) and queues the rest in arrival order, so a slow query that
 * arrives last finishes last, after everything else: starting the slow kinds first lets the quick
 * ones fill the other connections meanwhile, and the dashboard is done when the slowest is
 * (longest-first scheduling). The weights are the kinds' measured costs relative to a plain
 * trend over the same events (docs/benchmarks.md, dashboard).
 */
import { isPlainObject, type JsonObject } from '../kernel/json.js';
import { sourceOf } from './query-node.js';

/** Every kind not named costs 1: one grouped pass over the events. */
const KIND_WEIGHTS: Record<string, number> = { PathsQuery: 50, FunnelsQuery: 20, RetentionQuery: 2, LifecycleQuery: 2 };
/** A breakdown reads a property of every event (JSON extraction is most of its cost). */
const BREAKDOWN_WEIGHT = 15;

/** How long a saved query is expected to take, relative to others. */
export function expectedCost(query: JsonObject): number {
  const source = sourceOf(query);
  const kind = typeof source.kind === 'string' ? source.kind : '';
  const breakdown = isPlainObject(source.breakdownFilter) && (source.breakdownFilter.breakdown ?? source.breakdownFilter.breakdowns) != null;
  return Math.max(KIND_WEIGHTS[kind] ?? 1, breakdown ? BREAKDOWN_WEIGHT : 1);
}

/**
 * Runs `start` for every item, the costliest first (ties in their own order), and gives the
 * answers back in the items' order.
 */
export function costliestFirst<T, R>(items: T[], queryOf: (item: T) => JsonObject, start: (item: T) => Promise<R>): Promise<R[]> {
  const order = items.map((item, index) => ({ index, cost: expectedCost(queryOf(item)) })).sort((a, b) => b.cost - a.cost || a.index - b.index);
  const answers: Promise<R>[] = new Array(items.length);
  for (const { index } of order) answers[index] = start(items[index]!);
  return Promise.all(answers);
}
