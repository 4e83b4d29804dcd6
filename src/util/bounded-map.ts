/**
 * Bounded caches on a Map: Map order is insertion order, so the first key is the oldest entry.
 */

/** Sets `key` as `map`'s newest entry, and drops the oldest once there are more than `max`. */
export function setNewest<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
}
