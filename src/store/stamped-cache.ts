/**
 * Values read from the metadata store, kept between requests while nothing changed them: an
 * entry is used only while the change stamp (change-stamps.ts) taken before its read is
 * unchanged, so a committed change is seen by the next read, as without the cache.
 */
import type { ChangeStamps } from './change-stamps.js';
import { setNewest } from '../util/bounded-map.js';

export class StampedCache<T> {
  private readonly entries = new Map<string, { value: T; stamp: number }>();

  constructor(
    private readonly stamps: ChangeStamps,
    private readonly maxEntries: number,
  ) {}

  /**
   * The value of `entryKey` (default `stampKey`), valid while `stampKey`'s stamp holds: kept, or
   * `read` now. Kept values are shared, so never changed in place.
   */
  get(stampKey: string, read: () => T, entryKey = stampKey): T {
    // Taken before the read it vouches for: a change committed after it bumps it.
    const stamp = this.stamps.read(stampKey);
    const kept = this.entries.get(entryKey);
    if (kept !== undefined && kept.stamp === stamp) return kept.value;
    const value = read();
    setNewest(this.entries, entryKey, { value, stamp }, this.maxEntries);
    return value;
  }
}
