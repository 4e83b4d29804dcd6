/**
 * Shared by the insight reference implementations: raw events in memory and who their person
 * is after merges ($identify with $anon_distinct_id moves the anonymous id to the identified
 * person), with the plainest possible code.
 */
export interface RefEvent {
  event: string;
  distinct_id: string;
  /** Instant (ms). */
  ts: number;
  properties: Record<string, unknown>;
}

/** distinct id → the person key it belongs to now. */
export function personsAfterMerges(events: RefEvent[]): (distinctId: string) => string {
  const parent = new Map<string, string>();
  const find = (id: string): string => {
    let at = id;
    while (parent.has(at)) at = parent.get(at)!;
    return at;
  };
  for (const e of [...events].sort((a, b) => a.ts - b.ts)) {
    const anon = e.event === '$identify' ? e.properties.$anon_distinct_id : undefined;
    if (typeof anon === 'string' && find(anon) !== find(e.distinct_id)) parent.set(find(anon), find(e.distinct_id));
  }
  return find;
}

/** Property text as the engine reads it (JSON text of numbers and booleans), null when missing. */
export function propertyText(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** Linear-interpolated quantile (type 7), as DuckDB's quantile_cont. */
export function quantile(values: number[], level: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * level;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}
