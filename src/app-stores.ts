/**
 * Opening the stores, begun before the service's modules are loaded: the event store's thread
 * then loads and opens DuckDB on the other core while this one loads Fastify and the routes
 * (together about two thirds of the time to ready, measured on an empty data folder).
 */
import type { Config } from './config.js';
import { ChangeStamps } from './store/change-stamps.js';
import { openStores, type Stores, type StoreSettings } from './store/index.js';
import { checkNoUnfinishedImport } from './transfer/marker.js';

export interface OpeningStores {
  /** Shared with the flag threads' stores, which keep persons and groups they read until these change. */
  changeStamps: ChangeStamps;
  stores: Promise<Stores>;
}

export function beginOpeningStores(config: Config): OpeningStores {
  const changeStamps = new ChangeStamps();
  // Not on the stores an import left half written (transfer/marker.ts).
  const stores = Promise.resolve().then(() => checkNoUnfinishedImport(config.dataDir)).then(() => openStores(storeSettings(config), changeStamps));
  // Awaited by startApp once the service's modules have loaded; a failure meanwhile must not be
  // reported as an unhandled rejection first.
  stores.catch(() => undefined);
  return { changeStamps, stores };
}

export function storeSettings(config: Config): StoreSettings {
  const duckdb = {
    memoryLimit: config.duckdbMemoryLimit,
    threads: config.duckdbThreads,
    queryTimeoutMs: config.queryTimeoutMs,
    logLevel: config.logLevel,
    idleCloseMs: config.eventStoreIdleCloseSeconds * 1000,
  };
  return { dataDir: config.dataDir, postgresUrl: config.postgresUrl, clickhouse: config.clickhouse, duckdb };
}
