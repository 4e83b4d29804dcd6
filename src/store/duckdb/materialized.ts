/**
 * The embedded store's materialized properties: a VARCHAR column `mat_<key>` per hot key
 * (materialized-keys.ts) that the printer reads for `properties.<key>` instead of parsing every
 * event's JSON (docs/ingestion.md, "Materialized properties").
 *
 * The columns are filled by DuckDB itself, with the very function the JSON path prints
 * (`json_extract_string`), so a column holds exactly what extraction would read: a string as it
 * is, any other value as DuckDB renders its JSON (`1e21` where JSON.stringify writes `1e+21`), NULL
 * when the key is missing or JSON null. Appenders cannot compute a column, so events are appended
 * to a temporary table of the stored columns and copied into `events` with the extracted values.
 */
import { MATERIALIZED_PROPERTIES, materializedColumn } from '../materialized-keys.js';
import { jsonPointer } from '../../hogql/duckdb/writer.js';

export { materializedColumns } from '../materialized-keys.js';

/** The temporary table events are appended to before `INSERT_PENDING_EVENTS`. */
export const PENDING_EVENTS = 'pending_events';

const quoted = (name: string) => `"${name}"`;
const COLUMNS = MATERIALIZED_PROPERTIES.map((key) => quoted(materializedColumn(key)));
/** One parse of the properties for every key: a list of texts, in MATERIALIZED_PROPERTIES' order. */
const EXTRACTED = `json_extract_string(properties, [${MATERIALIZED_PROPERTIES.map((key) => `'${jsonPointer([key])}'`).join(', ')}])`;

/**
 * The rows of `source` (the stored columns) with the materialized columns after them, in the
 * source's order. The keys are our own constants (`[$A-Za-z0-9_]`), safe in the statement text.
 */
function withMaterialized(source: string): string {
  const values = COLUMNS.map((column, i) => `extracted[${i + 1}] AS ${column}`).join(', ');
  return `SELECT * EXCLUDE (extracted), ${values} FROM (SELECT *, ${EXTRACTED} AS extracted FROM ${source})`;
}

/** A fresh, empty pending table with the stored columns of `events` (their types included). */
export const CREATE_PENDING_EVENTS = `CREATE OR REPLACE TEMP TABLE ${PENDING_EVENTS} AS SELECT * EXCLUDE (${COLUMNS.join(', ')}) FROM events LIMIT 0`;

/** Moves the pending events into `events` (columns by name, so their order in the table does not matter). */
export const INSERT_PENDING_EVENTS = `INSERT INTO events BY NAME ${withMaterialized(PENDING_EVENTS)}; DROP TABLE ${PENDING_EVENTS}`;

/**
 * The migration that adds the columns: `events` is copied into a new table with them filled, which
 * replaces it. One JSON parse per event and freshly compressed row groups, where `ADD COLUMN` and an
 * `UPDATE` would parse once per key and keep every updated value in memory until the commit. The
 * file needs room for a second copy of the events meanwhile; it runs once, at the first start.
 * `storedColumns`: the columns of migration 1, with their constraints.
 */
export const addMaterializedColumns = (storedColumns: string) => `
  CREATE TABLE events_materialized (${storedColumns},
    ${COLUMNS.map((column) => `${column} VARCHAR`).join(',\n    ')}
  );
  INSERT INTO events_materialized BY NAME ${withMaterialized('events')};
  DROP TABLE events;
  ALTER TABLE events_materialized RENAME TO events;
`;
