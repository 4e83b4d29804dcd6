/** Wires configuration, stores, ingestion and HTTP into one running service. */
import { QueryService } from './insights/query/service.js';
import { Actions } from './actions/service.js';
import { Dashboards } from './dashboards/dashboards-service.js';
import { SavedInsights } from './dashboards/insights-service.js';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { bootstrapIfEmpty } from './tenancy/bootstrap.js';
import type { Config } from './config.js';
import { IngestBuffer } from './ingestion/buffer.js';
import { openIngestLog } from './ingestion/log/index.js';
import { applyGeoIp, GeoIp } from './geoip/geoip.js';
import type { Logger } from './kernel/logger.js';
import { createMetrics } from './kernel/metrics.js';
import type { ChangeStamps } from './store/change-stamps.js';
import { beginOpeningStores, type OpeningStores } from './app-stores.js';
import type { MetaChange, MetaStore } from './store/types.js';
import type { AppContext } from './app-context.js';
import { ALL_PROJECTS, FlagService } from './flags/evaluation/index.js';
import type { FlagAnswerDeps } from './flags/remote/answer.js';
import { mainThreadAnswerer, type FlagAnswerer } from './flags/remote/answerer.js';
import { FlagThreads } from './flags/threads/flag-threads.js';
import { ProjectCache } from './tenancy/projects/project-cache.js';
import { registerRoutes } from './routes.js';
import { createServer } from './http/server.js';
import { Drain, IdleReaper } from './http/drain.js';
import { IdleCollector } from './util/idle-collect.js';
import { Retention } from './ingestion/retention.js';
import { Capture } from './capture/service.js';
import { Definitions } from './definitions/service.js';
import { FlagManagement } from './flags/management/service.js';
import { ApiAccess } from './http/auth.js';
import { Memberships } from './tenancy/members/service.js';
import { Organizations } from './tenancy/organizations/service.js';
import { PersonalKeys } from './tenancy/personal-keys/service.js';
import { Projects } from './tenancy/projects/service.js';
import { StatsCache } from './events/stats.js';
import { setOwnerPassword } from './sessions/owner.js';
import { SessionService } from './sessions/service.js';
import { MemoryRateWindows } from './util/rate-windows.js';
import { SessionAuth } from './sessions/session-auth.js';
import { CohortCalculations } from './cohorts/calculation.js';
import { Cohorts } from './cohorts/service.js';
import { PersonDeletions } from './persons/deletion.js';
import { Persons } from './persons/service.js';
import { PersonSplits } from './persons/split.js';
import { SharedVisibility } from './ingestion/shared-visibility.js';

// The shutdown's drain window ends once no request came for this long, or after this long
// (at most a quarter of SIGHTLINE_SHUTDOWN_TIMEOUT_MS).
const DRAIN_QUIET_MS = 150;
/** How long the main thread must be without requests before its garbage is collected (util/idle-collect.ts). */
const IDLE_COLLECT_AFTER_MS = 30_000;
/** The same after the start, counted from before the routes are registered. */
const IDLE_COLLECT_AFTER_START_MS = 2_000;
/** Probes and scrapes allocate next to nothing, and a probe every few seconds would otherwise keep the idle collection from ever running. */
const isProbe = (url: string) => url === '/_health' || url === '/_ready' || url === '/metrics';
/** Events per event-store transaction, at most: two DuckDB row groups. */
const FEED_EVENTS_PER_WRITE = 16_384;
/**
 * How long acknowledged events may wait for a whole row group before they are written anyway;
 * shorter in an event store that nodes share, since reads on the other nodes wait for them.
 */
const FEED_MAX_DELAY_MS = 5_000;
const SHARED_FEED_MAX_DELAY_MS = 1_000;
/** Acknowledged bytes the event store may lack before they are written anyway (bounds the flush log's extra disk use). */
const FEED_WRITE_AT_BYTES = 32 * 2 ** 20;
/** A read of events (API, queries, cohort calculations) waits this long for the event store to hold every acknowledged event. */
const QUERYABLE_WAIT_MS = 10_000;
/** How long a person deletion waits for the NATS log to process what was acknowledged before it. */
const ORDERING_WAIT_MS = 30_000;

export interface RunningApp {
  app: FastifyInstance;
  ctx: AppContext;
  address: string;
  stop(): Promise<void>;
}

/**
 * `opening`: the stores, already being opened (main.ts starts that before it loads this module,
 * so that DuckDB loads on its thread meanwhile).
 */
export async function startApp(config: Config, log: Logger, opening: OpeningStores = beginOpeningStores(config)): Promise<RunningApp> {
  const metrics = createMetrics();
  const { changeStamps } = opening;
  const stores = await opening.stores;
  const created = await bootstrapIfEmpty(stores.meta, {
    projectApiKey: config.bootstrapProjectApiKey,
    personalApiKey: config.bootstrapPersonalApiKey,
    email: config.ownerEmail,
  });
  if (created) {
    const { generated } = await setOwnerPassword(stores.meta.accounts, created.user, config.ownerPassword);
    // Printed once, to the console only: the log stream never carries key material.
    process.stdout.write(
      [
        '',
        'Sightline created its default organization and project:',
        `  organization id:   ${created.organization.id}`,
        `  project id:        ${created.project.id}`,
        `  project API key:   ${created.projectApiKey}   (for SDKs: posthog.init('<this key>', …))`,
        `  personal API key:  ${created.personalApiKey}   (for /api/: Authorization: Bearer <this key>)`,
        `  sign in as:        ${created.user.email}   (web app, at this server's address)`,
        `  password:          ${generated ?? '(the one in SIGHTLINE_OWNER_PASSWORD)'}`,
        '  Store the personal API key and the password now: they are kept only as hashes and cannot be shown again.',
        '',
      ].join('\n') + '\n',
    );
  }

  logMemoryPlan(config, log);
  const geoip = config.geoipEnabled ? await GeoIp.open(undefined, { cacheEntries: config.geoipCacheEntries }) : null;
  const buffer = new IngestBuffer(
    stores,
    {
      flushIntervalMs: config.flushIntervalMs,
      flushMaxEvents: config.flushMaxEvents,
      maxPendingEvents: config.maxPendingEvents,
      personCacheSize: config.personCacheSize,
      logDir: path.join(config.dataDir, 'flush-log'),
      recordMemoryBytes: config.recordMemoryBytes,
      feed: { maxLagEvents: config.eventStoreMaxLagEvents, maxLagBytes: config.eventStoreMaxLagBytes, maxEventsPerWrite: FEED_EVENTS_PER_WRITE, maxDelayMs: stores.events.storedFlushSeqs ? SHARED_FEED_MAX_DELAY_MS : FEED_MAX_DELAY_MS, writeAtBytes: FEED_WRITE_AT_BYTES },
      enrich: geoip ? (properties) => applyGeoIp(properties, geoip) : undefined,
      killAfterMetaCommits: config.killAfterMetaCommits,
    },
    metrics,
    log,
  );
  // What the event store held before the replay: with several nodes, person deletions that
  // finished meanwhile erase again past it (persons/deletion.ts).
  const storedBeforeReplay = await buffer.start();
  const ingestLog = await openIngestLog(config.nats, { buffer, metaStore: stores.meta, postgresUrl: config.postgresUrl, log });
  const sharedVisibility = SharedVisibility.of(stores.meta.ingest, stores.events);
  // A deletion waits for the batches acknowledged before it (the NATS log processes them later).
  const ordering = {
    betweenFlushes: async <T>(work: (lastFlushSeq: number) => Promise<T>) => (await ingestLog.processedAll(ORDERING_WAIT_MS), buffer.betweenFlushes(work)),
    eventStoreHolds: (seq: number, timeoutMs: number) => buffer.eventStoreHolds(seq, timeoutMs),
    everyNodeStored: sharedVisibility ? (flushes: Record<string, number>, timeoutMs: number) => sharedVisibility.holds(flushes, timeoutMs) : undefined,
  };

  /** The event store once it holds what was acknowledged: by this node, and with shared stores by every node (bounded wait). */
  const queryableEvents = async () => {
    // With the NATS log, acknowledged batches may still wait in the stream: processed first, then in the event store.
    await ingestLog.processedAll(QUERYABLE_WAIT_MS);
    // While the event store refuses writes, waiting for it cannot help: the query runs at once
    // (and fails clearly if the store cannot answer it either).
    if (!buffer.eventStoreError) {
      await buffer.eventsQueryable(QUERYABLE_WAIT_MS);
      await sharedVisibility?.wait(QUERYABLE_WAIT_MS);
    }
    return stores.events;
  };

  const tenancy = stores.meta.tenancy;
  const projectCache = new ProjectCache(tenancy);
  const flags = new FlagService(stores.meta.flags, log);
  const flagAnswers = answererOf(config, { projects: projectCache, service: flags, maxDecodedBytes: config.decodedLimitBytes, log }, changeStamps);
  const eventCounts = new StatsCache(!stores.events.storedFlushSeqs);
  const invalidate = sharedInvalidation(stores.meta, log, {
    flags: (projectId) => flags.cache.invalidate(projectId),
    projects: () => projectCache.invalidate(),
    definitions: () => buffer.definitions.clear(),
  });
  const rateWindows = stores.meta.rateWindows ?? new MemoryRateWindows();
  const sessions = new SessionService({ accounts: stores.meta.accounts, tenancy, rateWindows });
  const publicUrl = config.publicUrl ?? null;
  const sessionAuth = new SessionAuth(sessions, publicUrl);
  const access = new ApiAccess(tenancy, sessionAuth);
  const capture = new Capture({
    settings: { decodedLimitBytes: config.decodedLimitBytes, maxEventBytes: config.maxEventBytes, dropBotEvents: config.dropBotEvents },
    projects: projectCache,
    access,
    tenancy,
    metrics,
    submit: (events, batchId) => ingestLog.append(events, batchId),
  });
  const personStore = stores.meta.persons;
  const dashboardStore = stores.meta.dashboards;
  const personDeletions = new PersonDeletions({
    store: personStore,
    persons: stores.meta.ingest,
    events: stores.events,
    ordering,
    eventsDeleted: () => eventCounts.forgetAll(),
    compactionDelayMs: config.deletionCompactionDelaySeconds * 1000,
    otherNodesWaitMs: config.deletionNodeWaitSeconds * 1000,
    log,
  });
  // After the flush log's replay (buffer.start): a deletion a crash interrupted finishes now.
  await personDeletions.resume(storedBeforeReplay.seq);
  const actions = new Actions(stores.meta.actions);
  const queries = new QueryService({ cacheBytes: config.memory.queryCacheBytes, actions: (projectId, id) => actions.resolve(projectId, id), groups: stores.meta.groups, cohorts: stores.meta.cohorts });
  const cohortStore = stores.meta.cohorts;
  const cohortCalculations = new CohortCalculations({
    store: cohortStore,
    queryableEvents,
    events: async () => stores.events,
    log,
  });
  const ctx: AppContext = {
    config,
    log,
    stores,
    buffer,
    ingestLog,
    metrics,
    geoip,
    api: { access, publicUrl },
    capture,
    projectCache,
    projects: new Projects(tenancy, () => invalidate({ kind: 'projects' })),
    organizations: new Organizations(tenancy),
    memberships: new Memberships(tenancy),
    personalKeys: new PersonalKeys(tenancy),
    definitions: new Definitions(stores.meta.definitions, () => invalidate({ kind: 'definitions' })),
    flags,
    flagManagement: new FlagManagement({
      flags: stores.meta.flags,
      users: tenancy,
      invalidate: (projectId) => invalidate({ kind: 'flags', projectId }),
      countPersons: (projectId, properties) => cohortCalculations.countMatching(projectId, properties),
      groups: stores.meta.groups,
    }),
    flagAnswers,
    eventCounts,
    queries,
    queryableEvents,
    savedInsights: new SavedInsights({ store: dashboardStore, users: tenancy, validateQuery: (node, attr) => queries.validate(node, attr) }),
    dashboards: new Dashboards(dashboardStore),
    actions,
    drain: new Drain(),
    rateWindows,
    sessions,
    sessionAuth,
    persons: new Persons(personStore, (events) => buffer.submit(events)),
    personDeletions,
    personSplits: new PersonSplits({ store: personStore, persons: stores.meta.ingest, events: stores.events, ordering, log }),
    cohorts: new Cohorts({ store: cohortStore, persons: personStore, calculations: cohortCalculations, definitionsChanged: (projectId) => invalidate({ kind: 'flags', projectId }) }),
  };
  const app = createServer(config, log, metrics, ctx.drain);
  const idle = new IdleReaper(app.server);
  app.server.on('connection', () => ctx.drain.seen());
  const idleCollector = new IdleCollector(IDLE_COLLECT_AFTER_MS, IDLE_COLLECT_AFTER_START_MS);
  idleCollector.onIdle(() => buffer.releaseIdleMemory());
  idleCollector.onIdle(() => stores.meta.releaseIdleMemory?.());
  idleCollector.onIdle(() => log.debug('idle: caches let go, heap compacted'));
  app.addHook('onResponse', (request, _reply, done) => {
    if (!isProbe(request.routeOptions.url ?? request.url)) idleCollector.touch();
    done();
  });
  await registerRoutes(app, ctx);
  const address = await app.listen({ host: config.host, port: config.port });
  log.info({ address, dataDir: config.dataDir, metadataStore: config.postgresUrl ? 'postgresql' : 'sqlite' }, 'Sightline is accepting traffic');
  const retention = config.retentionDays > 0 ? new Retention(stores, { days: config.retentionDays, intervalSeconds: config.retentionIntervalSeconds, eventsDeleted: () => eventCounts.forgetAll() }, metrics, log) : null;
  retention?.start();
  cohortCalculations.start(config.cohortRecalculationSeconds);

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      // Drain (serve with `Connection: close` until requests stop coming), then stop accepting,
      // answer what is in flight, flush, and close the stores.
      // At most half the shutdown's time, so that flushing and closing keep the other half.
      await ctx.drain.start(DRAIN_QUIET_MS, Math.min(config.shutdownDrainMs, config.shutdownTimeoutMs / 2));
      // A shared log's consumers drain their partitions below, and the event store's writes must
      // keep retrying meanwhile: their batches are acknowledged only once it holds them.
      if (!ingestLog.shared) buffer.beginShutdown();
      const closing = app.close();
      // A socket whose in-flight request is answered after close started stays open until its
      // keep-alive timeout (65 s) and would hold the shutdown past its deadline: keep reaping
      // idle ones until the server is closed.
      idle.reap();
      const reaper = setInterval(() => idle.reap(), 50);
      // Queries and exports still running halfway to the shutdown limit are stopped (their
      // requests get 503), so that they cannot hold the shutdown past it.
      const interrupter = setTimeout(() => void stores.events.interruptQueries().catch(() => undefined), config.shutdownTimeoutMs / 2);
      try {
        await closing;
      } finally {
        clearInterval(reaper);
        clearTimeout(interrupter);
      }
      idleCollector.stop();
      await retention?.stop();
      await cohortCalculations.stop();
      // An unfinished deletion stays queued in the metadata store and resumes at the next start.
      personDeletions.stop();
      await flagAnswers.close();
      await ingestLog.close({ drainMs: config.shutdownTimeoutMs / 3 });
      buffer.beginShutdown();
      await buffer.close();
      await stores.events.close();
      await stores.meta.close();
    })());
  return { app, ctx, address, stop };
}

/** The memory budget and what the settings became, once at start (explicit settings show as set). */
function logMemoryPlan(config: Config, log: Logger): void {
  const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
  log.info(
    {
      memoryLimitMb: config.memory.limitMb,
      from: config.memory.source,
      cgroupLimitMb: config.memory.cgroupLimitMb,
      duckdbMemoryLimit: config.duckdbMemoryLimit,
      flushRecordMemoryMb: mb(config.recordMemoryBytes),
      eventStoreMaxLagMb: mb(config.eventStoreMaxLagBytes),
      eventStoreMaxLagEvents: config.eventStoreMaxLagEvents,
      flushMaxEvents: config.flushMaxEvents,
      maxPendingEvents: config.maxPendingEvents,
      personCacheSize: config.personCacheSize,
      geoipCacheEntries: config.geoipCacheEntries,
      flagThreads: config.flagThreads,
      decodedLimitMb: mb(config.decodedLimitBytes),
      heapGrowingPercent: config.memory.heapGrowingPercent,
    },
    'memory budget',
  );
}

/**
 * What a management write must drop from caches: here at once, and on every other node through the
 * store's change feed when several share it (the feed also brings this node's own change back,
 * which only costs one more reload).
 */
function sharedInvalidation(
  meta: MetaStore,
  log: Logger,
  drop: { flags: (projectId: number) => void; projects: () => void; definitions: () => void },
): (change: MetaChange) => void {
  const apply = (change: MetaChange) => {
    if (change.kind === 'flags') drop.flags(change.projectId);
    if (change.kind === 'projects') drop.projects();
    if (change.kind === 'definitions') drop.definitions();
    if (change.kind === 'all') {
      drop.flags(ALL_PROJECTS);
      drop.projects();
      drop.definitions();
    }
  };
  meta.changes?.subscribe(apply);
  return (change) => {
    apply(change);
    meta.changes?.publish(change).catch((error: unknown) => log.warn({ err: error, change }, 'could not tell other nodes of a change'));
  };
}

/** /decide and /flags on flag threads (their caches cleared whenever the main thread's are), or on the main thread. */
function answererOf(config: Config, deps: FlagAnswerDeps & { projects: ProjectCache }, changeStamps: ChangeStamps): FlagAnswerer {
  const onMain = mainThreadAnswerer(deps);
  if (config.flagThreads === 0) return onMain;
  const data = { dataDir: config.dataDir, postgresUrl: config.postgresUrl, maxDecodedBytes: config.decodedLimitBytes, logLevel: config.logLevel, changeStamps: changeStamps.memory };
  const threads = new FlagThreads(config.flagThreads, data, onMain, deps.log);
  deps.service.cache.onInvalidate((projectId) => threads.invalidateFlags(projectId));
  deps.projects.onInvalidate(() => threads.invalidateProjects());
  return threads;
}
