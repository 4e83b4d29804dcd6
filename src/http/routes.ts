/** Every route module, registered in this order by app.ts. Add a module here, nowhere else. */
import type { FastifyInstance } from 'fastify';
import { registerEventDefinitionRoutes } from './api/event-definitions.js';
import { registerEventRoutes } from './api/events.js';
import { registerFeatureFlagRoutes } from './api/feature-flags.js';
import { registerInviteRoutes } from './api/invites.js';
import { registerMemberRoutes } from './api/members.js';
import { registerMethodNotAllowed } from './api/method-not-allowed.js';
import { registerOpenApi } from './api/openapi.js';
import { registerOrganizationRoutes } from './api/organizations.js';
import { registerPersonalKeyRoutes } from './api/personal-keys.js';
import { registerProjectRoutes } from './api/projects.js';
import { registerPropertyDefinitionRoutes } from './api/property-definitions.js';
import { registerApiRateLimit } from './api/rate-limit.js';
import { registerCaptureRoutes } from './capture.js';
import type { AppContext } from './context.js';
import { registerDecideRoutes } from './flags/decide.js';
import { registerFlagDefinitionRoutes } from './flags/definitions.js';
import { registerFlagsRoutes } from './flags/flags-endpoint.js';
import { registerRemoteConfigRoutes } from './flags/remote-config.js';
import { registerHealthRoutes } from './health.js';
import { registerSessionRoutes } from '../sessions/routes.js';
import { registerWebAppRoutes } from '../webapp/routes.js';

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
  registerSessionRoutes,
  registerWebAppRoutes,
];
