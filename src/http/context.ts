import type { Config } from '../config.js';
import type { IngestBuffer } from '../ingest/buffer.js';
import type { GeoIp } from '../ingest/geoip.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { Stores } from '../store/index.js';
import type { ProjectCache } from './project-cache.js';

/** Everything a route module may use; built once in app.ts. */
export interface AppContext {
  config: Config;
  log: Logger;
  stores: Stores;
  buffer: IngestBuffer;
  metrics: Metrics;
  geoip: GeoIp | null;
  projects: ProjectCache;
}
