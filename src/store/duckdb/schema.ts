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
];
