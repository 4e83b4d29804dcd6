/**
 * Counters in fixed time windows: API request budgets and sign-in failures. The embedded mode
 * counts in memory; nodes sharing a PostgreSQL count there (store/postgres/rate-windows.ts), so a
 * limit holds across them.
 */

export interface RateWindow {
  count: number;
  /** When the window began (ms since the epoch). */
  start: number;
}

export interface RateWindows {
  /**
   * Adds `by` to `key`'s count, in a new window from `now` when the last one (of `windowMs`) has
   * ended, and returns the window after the addition (`by` = 0 only reads it).
   */
  add(key: string, by: number, windowMs: number, now: number): Promise<RateWindow>;
  clear(key: string): Promise<void>;
}

/** Above this many keys, ended windows are dropped (bounded memory under key spraying). */
const MAX_TRACKED = 10_000;

export class MemoryRateWindows implements RateWindows {
  /** Each with its own end: counters of different window lengths share the map. */
  private readonly windows = new Map<string, RateWindow & { end: number }>();

  async add(key: string, by: number, windowMs: number, now: number): Promise<RateWindow> {
    let window = this.windows.get(key);
    if (!window || now >= window.end) {
      if (this.windows.size >= MAX_TRACKED) this.dropEnded(now);
      window = { start: now, end: now + windowMs, count: 0 };
      if (by > 0) this.windows.set(key, window);
    }
    window.count += by;
    return { start: window.start, count: window.count };
  }

  async clear(key: string): Promise<void> {
    this.windows.delete(key);
  }

  private dropEnded(now: number): void {
    for (const [key, window] of this.windows) if (now >= window.end) this.windows.delete(key);
  }
}
