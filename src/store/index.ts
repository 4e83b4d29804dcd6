import fs from 'node:fs';
import type { Config } from '../config.js';
import type { Logger } from '../kernel/logger.js';
import { ChangeStamps } from './change-stamps.js';
import { ThreadedEventStore } from './duckdb/threaded.js';
import { SqliteMetaStore } from './sqlite/meta-store.js';
import type { EventStore, MetaStore } from './types.js';

export interface Stores {
  meta: MetaStore;
  events: EventStore;
}

/** Opens the configured engines once (the ingest buffer then replays what either lacks). */
/** `changeStamps`: shared with the threads that open the metadata store too (change-stamps.ts). */
export async function openStores(config: Config, changeStamps = new ChangeStamps()): Promise<Stores> {
  fs.mkdirSync(config.dataDir, { recursive: true });
  const meta = SqliteMetaStore.open(config.dataDir, changeStamps);
  const events = await ThreadedEventStore.open(config.dataDir, { memoryLimit: config.duckdbMemoryLimit, threads: config.duckdbThreads, queryTimeoutMs: config.queryTimeoutMs, logLevel: config.logLevel });
  return { meta, events };
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
