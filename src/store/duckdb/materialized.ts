/**
 * The embedded store's materialized properties: a VARCHAR column `mat_<key>` per hot key
 * (../materialized-keys.ts) that the printer reads for `properties.<key>` instead of parsing every
 * event's JSON, once every row has it (docs/ingestion.md, "Materialized properties").
 *
 * DuckDB fills the columns itself, with the function the JSON path prints (`json_extract_string`),
 * so a column holds exactly what extraction reads: a string as it is, any other value as DuckDB
 * renders its JSON (`1e21` where JSON.stringify writes `1e+21`), NULL for a missing key or JSON
 * null. `mat_filled` marks the rows that have them: true for every event written since the
 * columns exist, NULL for older ones until the back-fill (backfill.ts) reaches them.
 */
import { MATERIALIZED_PROPERTIES, materializedColumn } from '../materialized-keys.js';
import { jsonPointer } from '../../hogql/duckdb/writer.js';

export { materializedColumns } from '../materialized-keys.js';

/** The temporary table events are appended to (an appender cannot compute columns). */
export const PENDING_EVENTS = 'pending_events';
/** The sync_state key whose value is 1 once every row has its columns. */
export const READY_KEY = 'materialized';

const quoted = (name: string) => `"${name}"`;
const COLUMNS = MATERIALIZED_PROPERTIES.map((key) => quoted(materializedColumn(key)));
/** One parse of the properties for every key: a list of texts, in MATERIALIZED_PROPERTIES' order. */
const EXTRACTED = `json_extract_string(properties, [${MATERIALIZED_PROPERTIES.map((key) => `'${jsonPointer([key])}'`).join(', ')}])`;
/** The SET list of an UPDATE from a row source whose `extracted` is EXTRACTED. */
const SET_FROM_EXTRACTED = [...COLUMNS.map((column, i) => `${column} = s.extracted[${i + 1}]`), 'mat_filled = true'].join(', ');

/**
 * Migration 4: the columns, added without touching the rows (DuckDB stores a NULL column as a
 * constant: 0.3 s and ~1 MB at 1,000,000 events, where rebuilding the table took minutes and a
 * second copy of the file). A folder with no events has nothing to back-fill.
 */
export const ADD_MATERIALIZED_COLUMNS = `
  ${[...COLUMNS.map((column) => `${column} VARCHAR`), 'mat_filled BOOLEAN'].map((column) => `ALTER TABLE events ADD COLUMN ${column};`).join('\n  ')}
  INSERT INTO sync_state SELECT '${READY_KEY}', CASE WHEN EXISTS (SELECT 1 FROM events) THEN 0 ELSE 1 END;
`;

/** The pending table, made once per writer connection with the stored columns of `events`. */
export const CREATE_PENDING_EVENTS = `CREATE TEMP TABLE ${PENDING_EVENTS} AS SELECT * EXCLUDE (${COLUMNS.join(', ')}, mat_filled) FROM events LIMIT 0`;

/**
 * Moves the pending events into `events` with their columns (by name: the table's column order
 * does not matter), in the connection's open transaction, and empties the pending table.
 */
export const INSERT_PENDING_EVENTS =
  `INSERT INTO events BY NAME SELECT * EXCLUDE (extracted), ${COLUMNS.map((column, i) => `extracted[${i + 1}] AS ${column}`).join(', ')}, true AS mat_filled ` +
  `FROM (SELECT *, ${EXTRACTED} AS extracted FROM ${PENDING_EVENTS}); DELETE FROM ${PENDING_EVENTS}`;

export const READ_READY = `SELECT value FROM sync_state WHERE key = '${READY_KEY}'`;
export const MARK_READY = `UPDATE sync_state SET value = 1 WHERE key = '${READY_KEY}'`;

/** The first row without its columns from row id `from` on (NULL when none is left there). */
export const firstUnfilled = (from: number) => `SELECT min(rowid) FROM events WHERE rowid >= ${from} AND mat_filled IS NULL`;

/**
 * Fills the rows without their columns among `rows` row ids from `from` (our own integers,
 * checked by the caller): one parse of each row's properties.
 */
export const fillRows = (from: number, rows: number) =>
  `UPDATE events SET ${SET_FROM_EXTRACTED} FROM (SELECT rowid AS row_id, ${EXTRACTED} AS extracted FROM events ` +
  `WHERE rowid >= ${from} AND rowid < ${from + rows} AND mat_filled IS NULL) s WHERE events.rowid = s.row_id`;
