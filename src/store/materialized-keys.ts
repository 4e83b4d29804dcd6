/**
 * The hot event property keys that both event stores keep in columns of their own (`mat_<key>`):
 * the web SDK's keys that filters, breakdowns and the web app use most (PostHog's defaults).
 * Fixed in code, so that every node writes and reads the same columns.
 */
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

/** Key → column, as the printers take it. */
export const materializedColumns = (): ReadonlyMap<string, string> => new Map(MATERIALIZED_PROPERTIES.map((key) => [key, materializedColumn(key)]));
