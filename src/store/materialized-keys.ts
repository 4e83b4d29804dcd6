/**
 * Hot event properties kept in columns of their own (`mat_<key>`) by both event stores, so that a
 * filter or breakdown on them reads a small column instead of every event's properties JSON
 * (PostHog's materialized columns). The set is fixed in code: each store adds it by a versioned
 * migration (docs/scale-out-cluster.md and docs/architecture.md say why not chosen by usage).
 */

/** The keys of the web SDK that filters, breakdowns and the web app use most. */
export const MATERIALIZED_PROPERTIES: readonly string[] = [
  '$current_url',
  '$pathname',
  '$host',
  '$browser',
  '$os',
  '$device_type',
  '$session_id',
  '$lib',
];

/** The column of a key: `mat_` and the key (these keys are all `[$A-Za-z0-9_]`). */
export const materializedColumn = (key: string) => `mat_${key}`;

/** Key → column, as the HogQL printers take it. */
export const materializedColumns = (): ReadonlyMap<string, string> => new Map(MATERIALIZED_PROPERTIES.map((key) => [key, materializedColumn(key)]));
