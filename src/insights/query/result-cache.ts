/**
 * Computed query results, per cache key, in memory and bounded by bytes: a result is kept as its
 * JSON text (what the reply sends anyway), and the oldest go first when the bound is passed.
 * A restart empties it, which costs one recomputation per insight.
 */
import { setNewest } from '../../util/bounded-map.js';

export interface CachedResult {
  json: string;
  computedAt: number;
  freshUntil: number;
}

/** One result larger than this is not kept (it would push out many small ones). */
const MAX_ENTRY_FRACTION = 0.25;

export class ResultCache {
  private readonly entries = new Map<string, CachedResult>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string): CachedResult | undefined {
    return this.entries.get(key);
  }

  set(key: string, entry: CachedResult): void {
    if (entry.json.length > this.maxBytes * MAX_ENTRY_FRACTION) return;
    const old = this.entries.get(key);
    if (old) this.bytes -= old.json.length;
    setNewest(this.entries, key, entry, Number.MAX_SAFE_INTEGER);
    this.bytes += entry.json.length;
    for (const [oldestKey, oldest] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldestKey);
      this.bytes -= oldest.json.length;
    }
  }
}
