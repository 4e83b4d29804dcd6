/** Every route module, registered in this order by app.ts. Add a module here, nowhere else. */
import type { FastifyInstance } from 'fastify';
import { registerCaptureRoutes } from './capture.js';
import type { AppContext } from './context.js';
import { registerHealthRoutes } from './health.js';

export const routeModules: ((app: FastifyInstance, ctx: AppContext) => Promise<void>)[] = [
  registerHealthRoutes,
  registerCaptureRoutes,
];
