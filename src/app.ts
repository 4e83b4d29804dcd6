/** Wires configuration, stores, ingestion and HTTP into one running service. */
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { bootstrapIfEmpty } from './bootstrap.js';
import type { Config } from './config.js';
import { IngestBuffer } from './ingest/buffer.js';
import { applyGeoIp, GeoIp } from './ingest/geoip.js';
import type { Logger } from './logger.js';
import { createMetrics } from './metrics.js';
import { ChangeStamps } from './store/change-stamps.js';
import { openStores } from './store/index.js';
import type { AppContext } from './http/context.js';
import { FlagService } from './flags-service/index.js';
import type { FlagAnswerDeps } from './http/flags/answer.js';
import { mainThreadAnswerer, type FlagAnswerer } from './http/flags/answerer.js';
import { FlagThreads } from './http/flags/flag-threads.js';
import { ProjectCache } from './http/project-cache.js';
import { routeModules } from './http/routes.js';
import { createServer } from './http/server.js';
import { Retention } from './retention.js';
import { StatsCache } from './events-api/stats.js';
import { setOwnerPassword } from './sessions/owner.js';
import { SessionService } from './sessions/service.js';

/** Events per event-store transaction, at most: two DuckDB row groups. */
const MIRROR_EVENTS_PER_WRITE = 16_384;
/** How long acknowledged events may wait for a whole row group before they are written anyway. */
const MIRROR_MAX_DELAY_MS = 5_000;
/** Acknowledged bytes the event store may lack before they are written anyway (bounds the flush log's extra disk use). */
const MIRROR_WRITE_AT_BYTES = 32 * 2 ** 20;

export interface RunningApp {
  app: FastifyInstance;
  ctx: AppContext;
  address: string;
  stop(): Promise<void>;
}

export async function startApp(config: Config, log: Logger): Promise<RunningApp> {
  const metrics = createMetrics();
  // Shared with the flag threads' stores, which keep persons and groups they read until these change.
  const changeStamps = new ChangeStamps();
  const stores = await openStores(config, changeStamps);
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

  const geoip = config.geoipEnabled ? await GeoIp.open() : null;
  const buffer = new IngestBuffer(
    stores,
    {
      flushIntervalMs: config.flushIntervalMs,
      flushMaxEvents: config.flushMaxEvents,
      maxPendingEvents: config.maxPendingEvents,
      personCacheSize: config.personCacheSize,
      logDir: path.join(config.dataDir, 'flush-log'),
      mirror: { maxLagEvents: config.eventStoreMaxLagEvents, maxEventsPerWrite: MIRROR_EVENTS_PER_WRITE, maxDelayMs: MIRROR_MAX_DELAY_MS, writeAtBytes: MIRROR_WRITE_AT_BYTES },
      enrich: geoip ? (properties) => applyGeoIp(properties, geoip) : undefined,
    },
    metrics,
    log,
  );
  await buffer.start();

  const projects = new ProjectCache(stores.meta.tenancy);
  const flags = new FlagService(stores.meta.flags, log);
  const flagAnswers = answererOf(config, { projects, service: flags, maxDecodedBytes: config.decodedLimitBytes, log }, changeStamps);
  const eventCounts = new StatsCache();
  const sessions = new SessionService(stores.meta);
  const ctx: AppContext = { config, log, stores, buffer, metrics, geoip, projects, flags, flagAnswers, eventCounts, sessions };
  const app = createServer(config, log, metrics);
  for (const register of routeModules) await register(app, ctx);
  const address = await app.listen({ host: config.host, port: config.port });
  log.info({ address, dataDir: config.dataDir }, 'Sightline is accepting traffic');
  const retention = config.retentionDays > 0 ? new Retention(stores, { days: config.retentionDays, intervalSeconds: config.retentionIntervalSeconds, eventsDeleted: () => eventCounts.forgetAll() }, metrics, log) : null;
  retention?.start();

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      // Stop accepting, answer what is in flight, flush, then close the stores.
      buffer.beginShutdown();
      const closing = app.close();
      // Node closes idle keep-alive sockets once, when close starts; a socket whose in-flight
      // request is answered later stays open until its keep-alive timeout (65 s) and holds the
      // shutdown past its deadline. Keep reaping until the server is closed.
      const reaper = setInterval(() => app.server.closeIdleConnections(), 50);
      // Queries and exports still running halfway to the shutdown limit are stopped (their
      // requests get 503), so that they cannot hold the shutdown past it.
      const interrupter = setTimeout(() => void stores.events.interruptQueries().catch(() => undefined), config.shutdownTimeoutMs / 2);
      try {
        await closing;
      } finally {
        clearInterval(reaper);
        clearTimeout(interrupter);
      }
      await retention?.stop();
      await flagAnswers.close();
      await buffer.close();
      await stores.events.close();
      await stores.meta.close();
    })());
  return { app, ctx, address, stop };
}

/** /decide and /flags on flag threads (their caches cleared whenever the main thread's are), or on the main thread. */
function answererOf(config: Config, deps: FlagAnswerDeps & { projects: ProjectCache }, changeStamps: ChangeStamps): FlagAnswerer {
  const onMain = mainThreadAnswerer(deps);
  if (config.flagThreads === 0) return onMain;
  const data = { dataDir: config.dataDir, maxDecodedBytes: config.decodedLimitBytes, logLevel: config.logLevel, changeStamps: changeStamps.memory };
  const threads = new FlagThreads(config.flagThreads, data, onMain, deps.log);
  deps.service.cache.onInvalidate((projectId) => threads.invalidateFlags(projectId));
  deps.projects.onInvalidate(() => threads.invalidateProjects());
  return threads;
}
