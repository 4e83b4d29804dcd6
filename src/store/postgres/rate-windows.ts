/**
 * Rate windows every node shares (util/rate-windows.ts): one row per key in an UNLOGGED table,
 * counted by one upsert. Unlogged: a crash may forget the counts (the windows start again), and
 * in return the counting writes no WAL.
 */
import type { RateWindow, RateWindows } from '../../util/rate-windows.js';
import { one, type PgPool } from './database.js';

/** How often ended windows are deleted (the table stays as small as the keys of the last window). */
const SWEEP_EVERY = 1_000;

export class PostgresRateWindows implements RateWindows {
  private adds = 0;

  constructor(private readonly pool: PgPool) {}

  async add(key: string, by: number, windowMs: number, now: number): Promise<RateWindow> {
    // Each row ends at its own time: counters of different window lengths share the table.
    if (++this.adds % SWEEP_EVERY === 0) await this.pool.query('DELETE FROM rate_windows WHERE ends_at <= $1', [now]);
    if (by === 0) {
      const row = await one<{ started_at: string; count: number }>(this.pool, 'SELECT started_at, count FROM rate_windows WHERE key = $1 AND ends_at > $2', [key, now]);
      return row ? { start: Number(row.started_at), count: row.count } : { start: now, count: 0 };
    }
    const row = await one<{ started_at: string; count: number }>(
      this.pool,
      `INSERT INTO rate_windows AS w (key, started_at, ends_at, count) VALUES ($1, $2::bigint, $2::bigint + $4::bigint, $3::integer)
       ON CONFLICT (key) DO UPDATE SET
         started_at = CASE WHEN w.ends_at <= $2::bigint THEN $2::bigint ELSE w.started_at END,
         ends_at = CASE WHEN w.ends_at <= $2::bigint THEN $2::bigint + $4::bigint ELSE w.ends_at END,
         count = CASE WHEN w.ends_at <= $2::bigint THEN $3::integer ELSE w.count + $3::integer END
       RETURNING started_at, count`,
      [key, now, by, windowMs],
    );
    return { start: Number(row!.started_at), count: row!.count };
  }

  async clear(key: string): Promise<void> {
    await this.pool.query('DELETE FROM rate_windows WHERE key = $1', [key]);
  }
}
