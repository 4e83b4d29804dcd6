/** Every route module, registered in this order by app.ts. Add a module here, nowhere else. */
import type { FastifyInstance } from 'fastify';
import { registerEventDefinitionRoutes } from './definitions/event-definitions.js';
import { registerEventRoutes } from './events/routes.js';
import { registerFeatureFlagRoutes } from './flags/management/routes.js';
import { registerInviteRoutes } from './tenancy/invites.js';
import { registerMemberRoutes } from './tenancy/members.js';
import { registerMethodNotAllowed } from './http/method-not-allowed.js';
import { registerOpenApi } from './http/openapi.js';
import { registerOrganizationRoutes } from './tenancy/organizations.js';
import { registerPersonalKeyRoutes } from './tenancy/personal-keys.js';
import { registerProjectRoutes } from './tenancy/projects.js';
import { registerPropertyDefinitionRoutes } from './definitions/property-definitions.js';
import { registerApiRateLimit } from './http/rate-limit.js';
import { registerCaptureRoutes } from './capture/routes.js';
import type { AppContext } from './app-context.js';
import { registerDecideRoutes } from './flags/remote/decide.js';
import { registerFlagDefinitionRoutes } from './flags/remote/local-evaluation.js';
import { registerFlagsRoutes } from './flags/remote/flags.js';
import { registerRemoteConfigRoutes } from './flags/remote/remote-config.js';
import { registerHealthRoutes } from './health/routes.js';

export const routeModules: ((app: FastifyInstance, ctx: AppContext) => Promise<void>)[] = [
  // These three must come first: they observe every route added after them.
  registerOpenApi,
  registerMethodNotAllowed,
  registerApiRateLimit,
  registerHealthRoutes,
  registerCaptureRoutes,
  registerPersonalKeyRoutes,
  registerProjectRoutes,
  registerOrganizationRoutes,
  registerMemberRoutes,
  registerInviteRoutes,
  registerPropertyDefinitionRoutes,
  registerEventDefinitionRoutes,
  registerEventRoutes,
  registerFeatureFlagRoutes,
  registerDecideRoutes,
  registerFlagsRoutes,
  registerFlagDefinitionRoutes,
  registerRemoteConfigRoutes,
];
