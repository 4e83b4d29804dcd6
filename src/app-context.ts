/**
 * Everything the composition root builds once (app.ts). Only routes.ts reads it, to hand each
 * route module the few parts it needs.
 */
import type { QueryService } from './insights/query/service.js';
import type { Actions } from './actions/service.js';
import type { Dashboards } from './dashboards/dashboards-service.js';
import type { SavedInsights } from './dashboards/insights-service.js';
import type { Capture } from './capture/service.js';
import type { Config } from './config.js';
import type { Definitions } from './definitions/service.js';
import type { StatsCache } from './events/stats.js';
import type { FlagService } from './flags/evaluation/index.js';
import type { FlagManagement } from './flags/management/service.js';
import type { FlagAnswerer } from './flags/remote/answerer.js';
import type { GeoIp } from './geoip/geoip.js';
import type { ApiKit } from './http/auth.js';
import type { Drain } from './http/drain.js';
import type { IngestBuffer } from './ingestion/buffer.js';
import type { IngestLog } from './ingestion/log/types.js';
import type { Logger } from './kernel/logger.js';
import type { Metrics } from './kernel/metrics.js';
import type { SessionService } from './sessions/service.js';
import type { RateWindows } from './util/rate-windows.js';
import type { SessionAuth } from './sessions/session-auth.js';
import type { Stores } from './store/index.js';
import type { EventStore } from './store/types.js';
import type { Cohorts } from './cohorts/service.js';
import type { PersonDeletions } from './persons/deletion.js';
import type { Persons } from './persons/service.js';
import type { PersonSplits } from './persons/split.js';
import type { Memberships } from './tenancy/members/service.js';
import type { Organizations } from './tenancy/organizations/service.js';
import type { PersonalKeys } from './tenancy/personal-keys/service.js';
import type { ProjectCache } from './tenancy/projects/project-cache.js';
import type { Projects } from './tenancy/projects/service.js';

export interface AppContext {
  config: Config;
  log: Logger;
  stores: Stores;
  buffer: IngestBuffer;
  /** Where capture appends: the local flush log, or the NATS JetStream stream. */
  ingestLog: IngestLog;
  metrics: Metrics;
  geoip: GeoIp | null;
  /** Authentication and access scoping of /api/, and the base of its links. */
  api: ApiKit;
  capture: Capture;
  /** Projects by token (cached) for capture and flags. */
  projectCache: ProjectCache;
  projects: Projects;
  organizations: Organizations;
  memberships: Memberships;
  personalKeys: PersonalKeys;
  definitions: Definitions;
  /** Flags of every project (cached) for evaluation and local-evaluation definitions. */
  flags: FlagService;
  flagManagement: FlagManagement;
  /** Answers /decide and /flags POSTs (on flag threads when configured). */
  flagAnswers: FlagAnswerer;
  /** The query API (insights): kinds, result cache, envelope. */
  queries: QueryService;
  /** The event store, once the events acknowledged before this call are in it (bounded wait). */
  queryableEvents(): Promise<EventStore>;
  /** Saved insights and dashboards (their results come from `queries`). */
  savedInsights: SavedInsights;
  dashboards: Dashboards;
  /** Actions: named combinations of steps, used by the events API and insights. */
  actions: Actions;
  /** The events list's counts per filter; forgotten whenever events are deleted. */
  eventCounts: StatsCache;
  /** The shutdown's drain window (readiness and `Connection: close` while it lasts). */
  drain: Drain;
  /** The web app's sign-in: passwords, browser sessions, invite links. */
  sessions: SessionService;
  /** Where rate limits count: the shared metadata store's, else this process's memory. */
  rateWindows: RateWindows;
  /** Reads a request's browser session (ApiAccess's second way in). */
  sessionAuth: SessionAuth;
  persons: Persons;
  /** Person deletions: metadata between two flushes, the event store's part queued after it. */
  personDeletions: PersonDeletions;
  personSplits: PersonSplits;
  /** Cohorts and their calculations. */
  cohorts: Cohorts;
}
