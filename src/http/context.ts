import type { Config } from '../config.js';
import type { FlagService } from '../flags-service/index.js';
import type { IngestBuffer } from '../ingest/buffer.js';
import type { GeoIp } from '../ingest/geoip.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { SessionService } from '../sessions/service.js';
import type { Stores } from '../store/index.js';
import type { FlagAnswerer } from './flags/answerer.js';
import type { ProjectCache } from './project-cache.js';
import type { StatsCache } from '../events-api/stats.js';

/** Everything a route module may use; built once in app.ts. */
export interface AppContext {
  config: Config;
  log: Logger;
  stores: Stores;
  buffer: IngestBuffer;
  metrics: Metrics;
  geoip: GeoIp | null;
  projects: ProjectCache;
  /** Flags of every project (cached) for the management API and local evaluation. */
  flags: FlagService;
  /** Answers /decide and /flags POSTs (on flag threads when configured). */
  flagAnswers: FlagAnswerer;
  /** The events list's counts per filter; forgotten whenever events are deleted. */
  eventCounts: StatsCache;
  /** Browser sessions and passwords (the web app's sign-in). */
  sessions: SessionService;
}
