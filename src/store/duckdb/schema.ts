import { ADD_MATERIALIZED_COLUMNS } from './materialized.js';

/**
 * Rows per row group: DuckDB's default is 122,880. A transaction that appends whole row groups
 * has them compressed and written straight to the database file, with no WAL and nothing left
 * for a checkpoint; anything smaller goes through the WAL and is compressed again by the next
 * checkpoint, which blocks writes meanwhile. Measured with realistic events (~3 KB of
 * properties): ~35 µs of CPU an event for whole row groups against 75–110 µs otherwise, and
 * checkpoint stalls of 5–7 s at the default size (8,192 and 16,384 rows measured alike). Small
 * row groups let the ingestion mirror write whole ones after a second or two of traffic, holding
 * ~30 MB of events, instead of 120,000 events in memory and in the flush log.
 */
export const ROW_GROUP_ROWS = 8_192;
/** Versioned schema of the DuckDB event store (append-only, like the SQLite migrations). */
export const duckMigrations: { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE events (
        project_id INTEGER NOT NULL,
        uuid UUID NOT NULL,
        event VARCHAR NOT NULL,
        distinct_id VARCHAR NOT NULL,
        person_id UUID,
        timestamp TIMESTAMP NOT NULL,
        created_at TIMESTAMP NOT NULL,
        properties JSON NOT NULL,
        elements_chain VARCHAR NOT NULL,
        "$group_0" VARCHAR NOT NULL,
        "$group_1" VARCHAR NOT NULL,
        "$group_2" VARCHAR NOT NULL,
        "$group_3" VARCHAR NOT NULL,
        "$group_4" VARCHAR NOT NULL,
        flush_seq BIGINT NOT NULL
      );
      CREATE TABLE person_distinct_ids (project_id INTEGER NOT NULL, distinct_id VARCHAR NOT NULL, person_id UUID NOT NULL);
      CREATE TABLE persons (
        project_id INTEGER NOT NULL,
        id UUID NOT NULL,
        properties JSON NOT NULL,
        is_identified BOOLEAN NOT NULL,
        created_at TIMESTAMP NOT NULL
      );
      CREATE TABLE sync_state (key VARCHAR PRIMARY KEY, value BIGINT NOT NULL);
      INSERT INTO sync_state VALUES ('flush_seq', 0);
    `,
  },
  {
    version: 2,
    sql: `
      -- A write may end inside a flush: how many of the next flush's events are already stored.
      INSERT INTO sync_state VALUES ('flush_events', 0);
    `,
  },
  {
    version: 3,
    sql: `
      -- Cohort membership mirrored from the metadata store (the source of truth), for filters
      -- and breakdowns by cohort; each calculation or upload replaces a cohort's rows.
      CREATE TABLE cohort_people (project_id INTEGER NOT NULL, cohort_id BIGINT NOT NULL, person_id UUID NOT NULL);
    `,
  },
  // Hot properties in columns of their own, empty for the events already stored (materialized.ts).
  { version: 4, sql: ADD_MATERIALIZED_COLUMNS },
];
