/**
 * Reads a stopped server's data dir through the real store implementations (the same code the
 * service uses), for tests that check what was stored before any API exists for it.
 */
import { spawnSync } from 'node:child_process';
import { ClickHouseEventStore } from '../../src/store/clickhouse/event-store.js';
import { DuckDbEventStore } from '../../src/store/duckdb/event-store.js';
import { SqliteMetaStore } from '../../src/store/sqlite/meta-store.js';
import { PostgresMetaStore } from '../../src/store/postgres/meta-store.js';
import type { MetaStore } from '../../src/store/types.js';
import pg from 'pg';
import { clickhouseEnvFor } from './clickhouse-databases.js';
import { clusterPostgresUrl } from './cluster.js';
import { databaseUrlOf } from './postgres-databases.js';

export interface StoredSnapshot {
  events: { uuid: string; event: string; distinct_id: string; person_id: string | null; timestamp: string; properties: Record<string, any>; elements_chain: string; groups: string[] }[];
  persons: { uuid: string; properties: Record<string, any>; is_identified: boolean; distinct_ids: string[] }[];
  groupTypes: { group_type: string; group_type_index: number }[];
  groups: { group_type_index: number; group_key: string; properties: Record<string, any> }[];
  propertyDefinitions: { name: string; type: number; group_type_index: number; property_type: string | null; is_numerical: boolean }[];
  eventDefinitions: { name: string }[];
  eventProperties: { event: string; property: string }[];
}

type SnapshotEvent = StoredSnapshot['events'][number];

/** The events where the server kept them: its ClickHouse database when the tests run on ClickHouse, else its DuckDB file. */
async function readEvents(dataDir: string): Promise<SnapshotEvent[]> {
  const clickhouse = clickhouseEnvFor(dataDir);
  if (clickhouse.SIGHTLINE_CLICKHOUSE_URL) {
    const settings = { urls: clickhouse.SIGHTLINE_CLICKHOUSE_URL.split(','), database: clickhouse.SIGHTLINE_CLICKHOUSE_DATABASE, cluster: clickhouse.SIGHTLINE_CLICKHOUSE_CLUSTER || null, node: 'test-reader', queryTimeoutMs: 60_000 };
    const store = await ClickHouseEventStore.open(settings, { migrate: false });
    try {
      const events: SnapshotEvent[] = [];
      for await (const chunk of store.exportEvents()) {
        for (const e of chunk) {
          const { properties_json, timestamp, project_id: _project, created_at: _created, ...rest } = e;
          events.push({ ...rest, timestamp: timestamp.toISOString(), properties: JSON.parse(properties_json), groups: [...e.groups] });
        }
      }
      return events.sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
    } finally {
      await store.close();
    }
  }
  const store = await DuckDbEventStore.open(dataDir);
  try {
    const rows = await store.query({
      sql: `SELECT uuid::VARCHAR AS uuid, event, distinct_id, person_id::VARCHAR AS person_id, strftime(timestamp, '%Y-%m-%dT%H:%M:%S.%gZ') AS timestamp,
              properties::VARCHAR AS properties, elements_chain, "$group_0" AS g0, "$group_1" AS g1, "$group_2" AS g2, "$group_3" AS g3, "$group_4" AS g4
            FROM events ORDER BY timestamp, uuid`,
      params: [],
    });
    return rows.map((r) => ({
      uuid: r.uuid as string,
      event: r.event as string,
      distinct_id: r.distinct_id as string,
      person_id: r.person_id as string | null,
      timestamp: r.timestamp as string,
      properties: JSON.parse(r.properties as string),
      elements_chain: r.elements_chain as string,
      groups: [r.g0, r.g1, r.g2, r.g3, r.g4] as string[],
    }));
  } finally {
    await store.close();
  }
}

export async function readStores(dataDir: string): Promise<StoredSnapshot> {
  // The metadata where the server kept it: its PostgreSQL database in cluster mode.
  const postgresUrl = databaseUrlOf(clusterPostgresUrl(), dataDir);
  let meta: MetaStore;
  let select: (sql: string) => Promise<any[]>;
  let closeSelect = async () => {};
  if (postgresUrl) {
    meta = await PostgresMetaStore.open({ url: postgresUrl, node: 'test-reader', maxConnections: 1 }, undefined, { migrate: false });
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    select = async (sql) => (await client.query(sql)).rows;
    closeSelect = () => client.end();
  } else {
    const sqlite = SqliteMetaStore.open(dataDir);
    meta = sqlite;
    // Plain objects, as PostgreSQL's rows are (node:sqlite's have no prototype).
    select = async (sql) => sqlite.db.prepare(sql).all().map((row) => ({ ...row }));
  }
  const json = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value);
  try {
    const persons = [];
    for await (const { person, distinct_ids } of meta.ingest.allPersons()) {
      persons.push({ uuid: person.uuid, properties: person.properties, is_identified: person.is_identified, distinct_ids });
    }
    return {
      events: await readEvents(dataDir),
      persons,
      groupTypes: await select('SELECT group_type, group_type_index FROM group_types ORDER BY group_type_index'),
      groups: (await select('SELECT group_type_index, group_key, properties FROM groups')).map((g) => ({ ...g, properties: json(g.properties) })),
      propertyDefinitions: (await select('SELECT name, type, group_type_index, property_type, is_numerical FROM property_definitions ORDER BY name')).map((d) => ({
        ...d,
        is_numerical: d.is_numerical === 1 || d.is_numerical === true,
      })),
      eventDefinitions: await select('SELECT name FROM event_definitions ORDER BY name'),
      eventProperties: await select('SELECT event, property FROM event_properties ORDER BY event, property'),
    };
  } finally {
    await meta.close();
    await closeSelect();
  }
}

/**
 * readStores in a child process, for a test that must have no file of the data dir open
 * afterwards (a read-only remount): a closed SQLite connection of @photostructure/sqlite 1.2
 * keeps its files open until its prepared statements are garbage, which the stores' caches
 * may delay past the test's next step.
 */
export function readStoresInChildProcess(dataDir: string): StoredSnapshot {
  const helper = new URL(import.meta.url).href;
  const script = `const { readStores } = await import(${JSON.stringify(helper)}); process.stdout.write(JSON.stringify(await readStores(${JSON.stringify(dataDir)})));`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', maxBuffer: 512 * 1024 * 1024, env: process.env });
  if (child.status !== 0) throw new Error(`reading the stores in a child process failed (${child.status}): ${child.stderr}`);
  return JSON.parse(child.stdout) as StoredSnapshot;
}
