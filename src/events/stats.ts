/**
 * The envelope's exact `count` (plus the time span of the matches, which sizes the page query's
 * window). Counting a JSON property filter over a million events means parsing a million JSON
 * documents, so counts are kept per filter together with the flush sequence they were read at:
 * rows are append-only and stamped with their flush, so the next request only counts rows of
 * later flushes (DuckDB skips older row groups by their min/max). Filters that read persons are
 * never kept: a merge changes which old rows match. Deleting events (retention) forgets them all.
 */
import { setNewest } from '../util/bounded-map.js';
import type { QueryPlan } from './plan.js';
import { timestampMs } from './rows.js';
import type { Runner } from './run.js';
import { statsQuery } from './statements.js';

export interface MatchStats {
  n: number;
  /** Oldest and newest matching timestamp (epoch ms), null when nothing matches. */
  lo: number | null;
  hi: number | null;
}

const MAX_ENTRIES = 500;

export class StatsCache {
  /**
   * False where flush sequences do not order the rows: in an event store that nodes share, each
   * node numbers its own flushes, so counts are read whole every time (ClickHouse counts fast).
   */
  constructor(readonly incremental = true) {}

  private readonly entries = new Map<string, { seq: number; stats: MatchStats }>();
  /** Bumped by `forgetAll`: a count read before it must not be kept after it. */
  private generation = 0;

  get(key: string): { seq: number; stats: MatchStats } | undefined {
    const entry = this.entries.get(key);
    if (entry) {
      // Map order is recency order: re-insert on use, evict from the front.
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  /** The generation to pass to `set` for a count read from now on. */
  get current(): number {
    return this.generation;
  }

  set(key: string, seq: number, stats: MatchStats, generation: number): void {
    if (generation === this.generation) setNewest(this.entries, key, { seq, stats }, MAX_ENTRIES);
  }

  /** Events were deleted: counts kept so far are too high, and so are those being read now. */
  forgetAll(): void {
    this.generation += 1;
    this.entries.clear();
  }
}

export async function matchStats(run: Runner, plan: QueryPlan, cache: StatsCache): Promise<MatchStats> {
  if (!cache.incremental) return statsOf((await run(statsQuery(plan, null)))[0]);
  const key = plan.stable ? JSON.stringify([plan.projectId, plan.where]) : null;
  const cached = key === null ? undefined : cache.get(key);
  const generation = cache.current;
  const [row] = await run(statsQuery(plan, cached?.seq ?? -1));
  const fresh = statsOf(row);
  const stats = cached ? merge(cached.stats, fresh) : fresh;
  if (key !== null) cache.set(key, Number(row.seq), stats, generation);
  return stats;
}

function statsOf(row: Record<string, unknown>): MatchStats {
  return { n: Number(row.n), lo: row.lo === null ? null : timestampMs(row.lo as string), hi: row.hi === null ? null : timestampMs(row.hi as string) };
}

function merge(a: MatchStats, b: MatchStats): MatchStats {
  const pick = (x: number | null, y: number | null, f: (...v: number[]) => number) => (x === null ? y : y === null ? x : f(x, y));
  return { n: a.n + b.n, lo: pick(a.lo, b.lo, Math.min), hi: pick(a.hi, b.hi, Math.max) };
}
