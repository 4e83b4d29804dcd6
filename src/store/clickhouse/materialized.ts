/**
 * Hot properties kept in columns of their own (`mat_<key>`), so that a filter or breakdown on them
 * reads a small column instead of decompressing and scanning every event's properties JSON
 * (PostHog's materialized columns; docs/scale-out-cluster.md, "Materialized properties").
 *
 * The set (../materialized-keys.ts, shared with the embedded store) is fixed in code and added
 * by a versioned migration (schema.ts), so every node writes and reads the same columns: 18.16
 * fills a column left out of a JSONEachRow row with NULL, not with its DEFAULT, so a node that did
 * not know a column would store wrong values in it.
 */
import { propertyText } from '../../hogql/clickhouse/sql.js';
import { MATERIALIZED_PROPERTIES, materializedColumn } from '../materialized-keys.js';

export { MATERIALIZED_PROPERTIES, materializedColumn, materializedColumns } from '../materialized-keys.js';

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
