import fs from 'node:fs';
import type { Logger, LogLevel } from '../kernel/logger.js';
import path from 'node:path';
import { ChangeStamps } from './change-stamps.js';
import { DataDirError, describeOpenError } from './errors.js';
import { ThreadedEventStore } from './duckdb/threaded.js';
import { SqliteMetaStore } from './sqlite/meta-store.js';
import type { EventStore, MetaStore } from './types.js';

export interface Stores {
  meta: MetaStore;
  events: EventStore;
}

/** Where the metadata store lives. Plain data: flag threads receive it as it is. */
export interface MetaStoreSettings {
  dataDir: string;
}

export interface StoreSettings extends MetaStoreSettings {
  duckdb: { memoryLimit: string; threads: number; queryTimeoutMs: number; logLevel: LogLevel };
}

/**
 * The metadata store alone: for the CLI, and for flag threads, each with its own connection.
 * `changeStamps`: shared with the other threads that open the store (change-stamps.ts).
 * `create`: make the data folder if it is missing (a flag thread must not: its server made it).
 */
export function openMetaStore(settings: MetaStoreSettings, changeStamps = new ChangeStamps(), { create = true } = {}): MetaStore {
  if (create) fs.mkdirSync(settings.dataDir, { recursive: true });
  return SqliteMetaStore.open(settings.dataDir, changeStamps);
}

/**
 * Opens both stores once (the ingest buffer then replays what either lacks). This is the only
 * place that names an engine.
 */
export async function openStores(settings: StoreSettings, changeStamps = new ChangeStamps()): Promise<Stores> {
  const dataDir = path.resolve(settings.dataDir);
  asDataDirError(dataDir, () => checkWritable(dataDir));
  // First, so that the event store's thread loads and opens DuckDB (most of the start) while
  // this thread opens SQLite and loads the rest of the service.
  const openingEvents = ThreadedEventStore.open(settings.dataDir, settings.duckdb);
  let meta: MetaStore;
  try {
    meta = asDataDirError(dataDir, () => openMetaStore(settings, changeStamps));
  } catch (error) {
    void openingEvents.then((events) => events.close(), () => undefined);
    throw error;
  }
  try {
    return { meta, events: await openingEvents };
  } catch (error) {
    await meta.close();
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
