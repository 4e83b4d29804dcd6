/**
 * Every route module, registered in this order by app.ts, each given only the parts of the
 * application it uses. Add a module here, nowhere else.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from './app-context.js';
import { registerActionRoutes } from './actions/routes.js';
import { registerCaptureRoutes } from './capture/routes.js';
import { registerCohortRoutes } from './cohorts/routes.js';
import { registerDashboardRoutes } from './dashboards/dashboard-routes.js';
import { registerInsightRoutes } from './dashboards/insight-routes.js';
import { InsightResults } from './dashboards/results.js';
import { registerEventDefinitionRoutes } from './definitions/event-definitions.js';
import { registerPropertyDefinitionRoutes } from './definitions/property-definitions.js';
import { registerEventRoutes } from './events/routes.js';
import { registerFeatureFlagRoutes } from './flags/management/routes.js';
import { registerRemoteConfigRoutes } from './flags/remote/config-routes.js';
import { registerDecideRoutes } from './flags/remote/decide.js';
import { registerFlagsRoutes } from './flags/remote/flags.js';
import { registerFlagDefinitionRoutes } from './flags/remote/local-evaluation.js';
import { registerHealthRoutes } from './health/routes.js';
import { registerPersonRoutes } from './persons/routes.js';
import { registerGroupRoutes } from './groups/routes.js';
import { registerQueryRoutes } from './insights/query/routes.js';
import { registerMethodNotAllowed } from './http/method-not-allowed.js';
import { registerOpenApi } from './http/openapi.js';
import { registerApiRateLimit } from './http/rate-limit.js';
import { registerInviteRoutes } from './tenancy/members/invite-routes.js';
import { registerMemberRoutes } from './tenancy/members/routes.js';
import { registerOrganizationRoutes } from './tenancy/organizations/routes.js';
import { registerPersonalKeyRoutes } from './tenancy/personal-keys/routes.js';
import { registerProjectRoutes } from './tenancy/projects/routes.js';
import { registerSessionRoutes } from './sessions/routes.js';
import { registerWebAppRoutes } from './webapp/routes.js';

/** With the NATS log, API and flags requests wait this long for acknowledged batches to be processed. */
const PROCESSED_WAIT_MS = 10_000;

export async function registerRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { api, config, queryableEvents } = ctx;
  // Read-your-writes with the NATS log (bounded): an API or flags request waits for what any node
  // acknowledged before it, as a balancer may have sent the capture to another node.
  app.addHook('onRequest', async (request) => {
    if (/^\/(api|decide|flags)\b/.test(request.url)) await ctx.ingestLog.processedAll(PROCESSED_WAIT_MS);
  });
  // These three must come first: they observe every route added after them.
  await registerOpenApi(app);
  await registerMethodNotAllowed(app);
  await registerApiRateLimit(app, config.apiRateLimitPerMinute, ctx.rateWindows, (request) => api.access.credentialOf(request));

  await registerHealthRoutes(app, { drain: ctx.drain, ingestion: ctx.buffer, ingestLog: ctx.ingestLog, stores: ctx.stores, metrics: ctx.metrics });
  await registerCaptureRoutes(app, { capture: ctx.capture, bodyLimitBytes: config.bodyLimitBytes, trustProxy: config.trustProxy });
  await registerPersonalKeyRoutes(app, { api, keys: ctx.personalKeys });
  await registerProjectRoutes(app, { api, projects: ctx.projects });
  await registerOrganizationRoutes(app, { api, organizations: ctx.organizations });
  await registerMemberRoutes(app, { api, memberships: ctx.memberships });
  await registerInviteRoutes(app, { api, memberships: ctx.memberships });
  await registerPropertyDefinitionRoutes(app, { api, definitions: ctx.definitions });
  await registerEventDefinitionRoutes(app, { api, definitions: ctx.definitions });
  await registerEventRoutes(app, {
    api,
    queryableEvents,
    persons: ctx.stores.meta.ingest,
    personIds: ctx.stores.meta.persons,
    definitions: ctx.stores.meta.definitions,
    counts: ctx.eventCounts,
    actions: ctx.actions,
    groups: ctx.stores.meta.groups ?? null,
  });
  await registerQueryRoutes(app, { api, queries: ctx.queries, queryableEvents });
  await registerPersonRoutes(app, {
    api,
    persons: ctx.persons,
    store: ctx.stores.meta.persons,
    deletions: ctx.personDeletions,
    splits: ctx.personSplits,
    queryableEvents,
    personsOf: ctx.stores.meta.ingest,
    definitions: ctx.stores.meta.definitions,
  });
  await registerActionRoutes(app, { api, actions: ctx.actions, users: ctx.stores.meta.tenancy });
  await registerCohortRoutes(app, { api, cohorts: ctx.cohorts, store: ctx.stores.meta.cohorts, persons: ctx.stores.meta.persons });
  await registerGroupRoutes(app, { api, groups: ctx.stores.meta.groups });
  const results = new InsightResults(ctx.queries, queryableEvents);
  await registerInsightRoutes(app, { api, insights: ctx.savedInsights, results });
  await registerDashboardRoutes(app, { api, dashboards: ctx.dashboards, insights: ctx.savedInsights, results });
  await registerFeatureFlagRoutes(app, { api, flags: ctx.flagManagement });
  const remote = { answers: ctx.flagAnswers, geoip: ctx.geoip, bodyLimitBytes: config.bodyLimitBytes };
  await registerDecideRoutes(app, remote);
  await registerFlagsRoutes(app, remote);
  await registerFlagDefinitionRoutes(app, {
    api,
    flags: ctx.flags,
    projects: ctx.projectCache,
    tenancy: ctx.stores.meta.tenancy,
    groupTypes: ctx.stores.meta.flags,
  });
  await registerRemoteConfigRoutes(app, { flags: ctx.flags, projects: ctx.projectCache });
  await registerSessionRoutes(app, { api, sessions: ctx.sessions, sessionAuth: ctx.sessionAuth });
  await registerWebAppRoutes(app);
}
