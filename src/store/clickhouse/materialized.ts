/**
 * Hot properties kept in columns of their own (`mat_<key>`), so that a filter or breakdown on them
 * reads a small column instead of decompressing and scanning every event's properties JSON
 * (PostHog's materialized columns; docs/scale-out-cluster.md, "Materialized properties").
 *
 * The set is fixed in code and added by a versioned migration (schema.ts), so every node writes
 * and reads the same columns: 18.16 fills a column left out of a JSONEachRow row with NULL, not
 * with its DEFAULT, so a node that did not know a column would store wrong values in it.
 */
import { propertyText } from '../../hogql/clickhouse/sql.js';

/** The keys of the web SDK that filters and breakdowns use most (PostHog's defaults and the web app's). */
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

/** Key → column, as the ClickHouse printer takes it. */
export const materializedColumns = (): ReadonlyMap<string, string> => new Map(MATERIALIZED_PROPERTIES.map((key) => [key, materializedColumn(key)]));

/**
 * The column's definition. Its DEFAULT is the printer's JSON read of the key, so rows written
 * before the column existed answer exactly as the JSON path did (computed on read until a merge
 * writes them); new rows carry the value taken from the parsed properties (`materializedValues`).
 */
export const materializedColumnDefinition = (key: string) => `\`${materializedColumn(key)}\` Nullable(String) DEFAULT ${propertyText('`properties`', [key])}`;

/**
 * The text that `properties.<key>` reads, from the parsed properties: a string as it is, any
 * other value as its JSON text, NULL when the key is missing or JSON null. The properties text
 * is JSON.stringify's (ingestion/plan/row.ts), so a value's JSON text is exactly what the
 * JSON path (`visitParamExtractRaw`) reads out of it.
 */
export function materializedValue(properties: unknown, key: string): string | null {
  if (properties === null || typeof properties !== 'object' || Array.isArray(properties) || !Object.hasOwn(properties, key)) return null;
  const value = (properties as Record<string, unknown>)[key];
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The row's `mat_*` fields from the properties text. */
export function materializedValues(propertiesJson: string): Record<string, string | null> {
  const properties: unknown = JSON.parse(propertiesJson);
  const row: Record<string, string | null> = {};
  for (const key of MATERIALIZED_PROPERTIES) row[materializedColumn(key)] = materializedValue(properties, key);
  return row;
}
