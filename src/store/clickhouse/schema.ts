/**
 * Versioned schema of the ClickHouse event store, in DDL that 18.16 and current servers both
 * take. With a cluster name, events are a Distributed table over one ReplicatedReplacingMergeTree
 * per shard, sharded by sipHash64(distinct_id): a distinct id's events (and so a person's, but
 * for merges) sit on one shard, and a retried insert lands where the first one did. The person
 * mirror and the positions are small and replicated whole to every server (a ZooKeeper path
 * without the shard), so that each shard joins its events with them locally.
 *
 * UUIDs are lower-case text, not ClickHouse's UUID type: its order is not the text's (it compares
 * the halves as integers), and the events API pages by (timestamp, uuid) in text order.
 *
 * De-duplication: ReplacingMergeTree on the event's uuid (the sorting key ends in it), read with
 * FINAL. Replicated inserts also drop a retried identical block. The mirror's rows carry a
 * version; a deletion is a row with is_deleted = 1.
 *
 * Hot properties have columns of their own (materialized.ts), added by migration 3.
 */
import { MATERIALIZED_PROPERTIES, materializedColumn, materializedColumnDefinition } from './materialized.js';

export interface SchemaTarget {
  database: string;
  /** remote_servers cluster name; null for one server. */
  cluster: string | null;
}

const q = (name: string) => `\`${name}\``;

function engine(target: SchemaTarget, table: string, replicatedEverywhere: boolean, version = ''): string {
  if (!target.cluster) return `ReplacingMergeTree(${version})`;
  const shard = replicatedEverywhere ? 'all' : '{shard}';
  return `ReplicatedReplacingMergeTree('/clickhouse/tables/${shard}/${target.database}/${table}', '{replica}'${version ? `, ${version}` : ''})`;
}

const onCluster = (target: SchemaTarget) => (target.cluster ? ` ON CLUSTER ${q(target.cluster)}` : '');

const EVENT_COLUMNS = `
  project_id Int64,
  uuid String,
  event String,
  distinct_id String,
  stored_person_id Nullable(String),
  timestamp Int64,
  created_at Int64,
  properties String,
  elements_chain String,
  \`$group_0\` String, \`$group_1\` String, \`$group_2\` String, \`$group_3\` String, \`$group_4\` String,
  flush_seq UInt64,
  node String`;

/**
 * A statement of a migration. 18.16 has no `ADD COLUMN IF NOT EXISTS`: such a statement names the
 * column, and is skipped where the server it runs from has it already.
 */
export type MigrationStatement = string | { sql: string; unlessColumn: { table: string; column: string } };

/** Each migration: statements run in order; every one is idempotent (IF NOT EXISTS, or `unlessColumn`). */
export function clickhouseMigrations(target: SchemaTarget): { version: number; statements: MigrationStatement[] }[] {
  const db = q(target.database);
  const local = target.cluster ? 'events_local' : 'events';
  const tbl = (name: string) => `${db}.${q(name)}`;
  const mirror = (name: string, columns: string, order: string) =>
    `CREATE TABLE IF NOT EXISTS ${tbl(name)}${onCluster(target)} (${columns}, is_deleted UInt8, version UInt64) ENGINE = ${engine(target, name, true, 'version')} ORDER BY ${order}`;
  const statements = [
    `CREATE TABLE IF NOT EXISTS ${tbl(local)}${onCluster(target)} (${EVENT_COLUMNS}) ENGINE = ${engine(target, local, false)}
       PARTITION BY intDiv(timestamp, 2592000000000) ORDER BY (project_id, intDiv(timestamp, 3600000000), uuid)`,
  ];
  if (target.cluster) {
    statements.push(
      `CREATE TABLE IF NOT EXISTS ${tbl('events')}${onCluster(target)} (${EVENT_COLUMNS}) ENGINE = Distributed(${q(target.cluster)}, ${db}, ${q(local)}, sipHash64(distinct_id))`,
    );
  }
  statements.push(
    mirror('persons', 'project_id Int64, id String, properties String, is_identified UInt8, created_at Int64', '(project_id, id)'),
    mirror('person_distinct_ids', 'project_id Int64, distinct_id String, person_id String', '(project_id, distinct_id)'),
    `CREATE TABLE IF NOT EXISTS ${tbl('sync_state')}${onCluster(target)} (node String, seq UInt64, events UInt64, version UInt64) ENGINE = ${engine(target, 'sync_state', true, 'version')} ORDER BY node`,
  );
  return [
    { version: 1, statements },
    // Cohort membership mirrored from the metadata store, for filters and breakdowns by cohort.
    { version: 2, statements: [mirror('cohort_people', 'project_id Int64, cohort_id Int64, person_id String', '(project_id, cohort_id, person_id)')] },
    { version: 3, statements: materializedPropertyColumns(target, local) },
  ];
}

/**
 * The hot properties' columns, on the events table and (with a cluster) under the Distributed
 * table. 18.16 refuses `ALTER … ON CLUSTER` on a Distributed table of a cluster whose shards
 * replicate internally; that table holds no rows (inserts are synchronous), so it is dropped and
 * created again with the new columns, on every server at once.
 */
function materializedPropertyColumns(target: SchemaTarget, local: string): MigrationStatement[] {
  const db = q(target.database);
  const statements: MigrationStatement[] = MATERIALIZED_PROPERTIES.map((key) => ({
    sql: `ALTER TABLE ${db}.${q(local)}${onCluster(target)} ADD COLUMN ${materializedColumnDefinition(key)}`,
    unlessColumn: { table: local, column: materializedColumn(key) },
  }));
  if (target.cluster) {
    const columns = `${EVENT_COLUMNS},\n  ${MATERIALIZED_PROPERTIES.map(materializedColumnDefinition).join(',\n  ')}`;
    statements.push(
      `DROP TABLE IF EXISTS ${db}.${q('events')}${onCluster(target)}`,
      `CREATE TABLE IF NOT EXISTS ${db}.${q('events')}${onCluster(target)} (${columns}) ENGINE = Distributed(${q(target.cluster)}, ${db}, ${q(local)}, sipHash64(distinct_id))`,
    );
  }
  return statements;
}

/** Where applied versions are recorded (one row per version, replicated like the mirror). */
export function migrationsTable(target: SchemaTarget): string {
  return `CREATE TABLE IF NOT EXISTS ${q(target.database)}.schema_migrations${onCluster(target)} (version UInt32, applied_at DateTime) ENGINE = ${engine(target, 'schema_migrations', true)} ORDER BY version`;
}
