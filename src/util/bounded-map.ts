/**
 * Bounded caches on a Map: Map order is insertion order, so the first key is the oldest entry.
 */

/**
 * Sets `key` as `map`'s newest entry; past `max` entries the oldest go, down to nine tenths of
 * it at once. One at a time would cost O(size) each: V8 leaves a deleted entry's slot in place
 * until the table is rebuilt, and finding the first key skips over every such slot (~7.5 µs an
 * insertion at 10,000 entries, against ~0.4 µs this way, on the machine of docs/benchmarks.md).
 */
export function setNewest<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size <= max) return;
  let excess = map.size - (max - Math.ceil(max / 10));
  for (const oldest of map.keys()) {
    if (excess-- <= 0) break;
    map.delete(oldest);
  }
}
