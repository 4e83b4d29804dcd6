import fs from 'node:fs';
import type { Logger, LogLevel } from '../kernel/logger.js';
import path from 'node:path';
import { ChangeStamps } from './change-stamps.js';
import { DataDirError, describeOpenError, EventStoreUnreachableError, MetaStoreUnreachableError } from './errors.js';
import { ThreadedEventStore } from './duckdb/threaded.js';
import { SqliteMetaStore } from './sqlite/meta-store.js';
import { nodeName } from './node-name.js';
import type { EventStore, MetaStore } from './types.js';

export interface Stores {
  meta: MetaStore;
  events: EventStore;
}

/** Where the metadata store lives. Plain data: flag threads receive it as it is. */
export interface MetaStoreSettings {
  dataDir: string;
  /** Set: metadata in this PostgreSQL database (shared by every node), not in the data folder. */
  postgresUrl?: string;
}

/** Connections to PostgreSQL: the main thread's store, and each flag thread's. */
const POSTGRES_CONNECTIONS = { main: 8, thread: 2 };

/** Where events live when not in the data folder's DuckDB file. */
export interface ClickHouseStoreSettings {
  urls: string[];
  cluster: string | null;
  database: string;
}

export interface StoreSettings extends MetaStoreSettings {
  duckdb: { memoryLimit: string; threads: number; queryTimeoutMs: number; logLevel: LogLevel };
  /** Set: events in ClickHouse (shared by every node), not in DuckDB. */
  clickhouse?: ClickHouseStoreSettings;
}

/*
 * The PostgreSQL and ClickHouse stores load only when the settings name them: their clients
 * cost the embedded mode's main thread ~4 MB of heap and ~150 ms of its start for nothing.
 */
const postgresStore = () => import('./postgres/meta-store.js').then((m) => m.PostgresMetaStore);
const clickHouseStore = () => import('./clickhouse/event-store.js').then((m) => m.ClickHouseEventStore);

/** The event store the settings name. */
async function openEventStore(settings: StoreSettings): Promise<EventStore> {
  const { clickhouse } = settings;
  if (clickhouse) {
    const node = nodeName(settings.dataDir);
    const ClickHouseEventStore = await clickHouseStore();
    return ClickHouseEventStore.open({ ...clickhouse, node, queryTimeoutMs: settings.duckdb.queryTimeoutMs }).catch((error: unknown) => {
      throw new EventStoreUnreachableError(clickhouse.urls[0], describeOpenError(error));
    });
  }
  return ThreadedEventStore.open(settings.dataDir, settings.duckdb);
}

/**
 * The metadata store alone: for the CLI, and for flag threads, each with its own connection.
 * `changeStamps`: shared with the other threads that open the store (change-stamps.ts).
 * `create`: make the data folder if it is missing, and migrate a PostgreSQL schema (a flag
 * thread must do neither: its server did).
 */
export async function openMetaStore(settings: MetaStoreSettings, changeStamps = new ChangeStamps(), { create = true } = {}): Promise<MetaStore> {
  if (create) fs.mkdirSync(settings.dataDir, { recursive: true });
  if (settings.postgresUrl) {
    const postgres = { url: settings.postgresUrl, node: nodeName(settings.dataDir), maxConnections: POSTGRES_CONNECTIONS[create ? 'main' : 'thread'] };
    const PostgresMetaStore = await postgresStore();
    return PostgresMetaStore.open(postgres, changeStamps, { migrate: create });
  }
  return SqliteMetaStore.open(settings.dataDir, changeStamps);
}

/** `sightline migrate`: applies the pending migrations of both stores; says what it did. */
export async function migrateStores(settings: MetaStoreSettings & { clickhouse?: ClickHouseStoreSettings }): Promise<string> {
  const meta = await migrateMetaStore(settings);
  if (!settings.clickhouse) return meta;
  const ClickHouseEventStore = await clickHouseStore();
  const applied = await ClickHouseEventStore.migrate(settings.clickhouse);
  return `${meta}\n${applied.length === 0 ? 'ClickHouse schema is up to date' : `ClickHouse: applied migrations ${applied.join(', ')}`}`;
}

async function migrateMetaStore(settings: MetaStoreSettings): Promise<string> {
  if (settings.postgresUrl) {
    const PostgresMetaStore = await postgresStore();
    const applied = await PostgresMetaStore.migrate(settings.postgresUrl);
    return applied.length === 0 ? 'PostgreSQL schema is up to date' : `PostgreSQL: applied migrations ${applied.join(', ')}`;
  }
  // Opening the SQLite store migrates it.
  const meta = await openMetaStore(settings);
  await meta.close();
  return `SQLite schema in ${path.join(settings.dataDir, 'meta.sqlite')} is up to date`;
}

/**
 * Opens both stores once (the ingest buffer then replays what either lacks). This is the only
 * place that names an engine.
 */
export async function openStores(settings: StoreSettings, changeStamps = new ChangeStamps()): Promise<Stores> {
  const dataDir = path.resolve(settings.dataDir);
  asDataDirError(dataDir, () => checkWritable(dataDir));
  // First, so that the event store's thread loads and opens DuckDB (most of the start) while
  // this thread opens the metadata store and loads the rest of the service.
  const openingEvents = openEventStore(settings);
  let meta: MetaStore;
  try {
    const postgresUrl = settings.postgresUrl;
    meta = postgresUrl
      ? await openMetaStore(settings, changeStamps).catch((error: unknown) => {
          throw new MetaStoreUnreachableError(postgresUrl, describeOpenError(error));
        })
      : await asDataDirErrorAsync(dataDir, () => openMetaStore(settings, changeStamps));
  } catch (error) {
    // Wait for the event store's thread to finish opening and close it: exit() with that thread
    // still inside DuckDB's native open waited for it forever (the start-up error never exited).
    await openingEvents.then((events) => events.close(), () => undefined);
    throw error;
  }
  try {
    const events = await openingEvents;
    const { personMirrorState } = meta.ingest;
    if (personMirrorState && events.followPersons) events.followPersons((persons) => personMirrorState.call(meta.ingest, persons));
    return { meta, events };
  } catch (error) {
    await meta.close();
    if (error instanceof EventStoreUnreachableError) throw error;
    throw new DataDirError(dataDir, describeOpenError(error));
  }
}

/** Creates the data folder if need be and proves a file can be written in it. */
function checkWritable(dataDir: string): void {
  fs.mkdirSync(dataDir, { recursive: true });
  const probe = path.join(dataDir, `.write-check-${process.pid}`);
  fs.writeFileSync(probe, '');
  fs.rmSync(probe);
}

function asDataDirError<T>(dataDir: string, open: () => T): T {
  try {
    return open();
  } catch (error) {
    throw new DataDirError(dataDir, describeOpenError(error));
  }
}

async function asDataDirErrorAsync<T>(dataDir: string, open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    throw new DataDirError(dataDir, describeOpenError(error));
  }
}

/**
 * Data directories written before the flush log existed acknowledged a flush only after both
 * commits; a crash between them left the metadata store ahead, with nothing to replay. Such
 * flushes were never acknowledged: forget their uuids so the clients' retries are stored, and
 * rebuild the event store's person mirror from the metadata store.
 */
export async function repairWithoutFlushLog(stores: Stores, log: Logger): Promise<void> {
  const eventSeq = (await stores.events.position()).seq;
  log.warn({ eventSeq }, 'recovering from an interrupted flush of an earlier version');
  // Mirror first: forgetting the uuids also lowers the metadata seq, which marks recovery as
  // done; a crash between the two steps must leave it still to do, not a stale mirror.
  await stores.events.rebuildPersonMirror(stores.meta.ingest.allPersons());
  await stores.meta.ingest.forgetUuidsAfter(eventSeq);
}
