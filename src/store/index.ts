import fs from 'node:fs';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { DuckDbEventStore } from './duckdb/event-store.js';
import { SqliteMetaStore } from './sqlite/meta-store.js';
import type { EventStore, MetaStore } from './types.js';

export interface Stores {
  meta: MetaStore;
  events: EventStore;
}

/** Opens the configured engines once, then repairs what a crash between their commits left. */
export async function openStores(config: Config, log: Logger): Promise<Stores> {
  fs.mkdirSync(config.dataDir, { recursive: true });
  const meta = SqliteMetaStore.open(config.dataDir);
  const events = await DuckDbEventStore.open(config.dataDir, { memoryLimit: config.duckdbMemoryLimit });
  await reconcile({ meta, events }, log);
  return { meta, events };
}

/**
 * Metadata commits before events. If the process died between the two commits of a flush,
 * that flush was never acknowledged: forget its uuids so the client's retry is stored, and
 * rebuild the event store's person mirror from the metadata store.
 */
export async function reconcile(stores: Stores, log: Logger): Promise<void> {
  const metaSeq = await stores.meta.ingest.committedFlushSeq();
  const eventSeq = await stores.events.committedFlushSeq();
  if (metaSeq <= eventSeq) return;
  log.warn({ metaSeq, eventSeq }, 'recovering from an interrupted flush');
  // Mirror first: forgetting the uuids also lowers the metadata seq, which marks recovery as
  // done; a crash between the two steps must leave it still to do, not a stale mirror.
  await stores.events.rebuildPersonMirror(stores.meta.ingest.allPersons());
  await stores.meta.ingest.forgetUuidsAfter(eventSeq);
}
