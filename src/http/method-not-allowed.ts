/**
 * A known /api/ path asked with a method it does not serve answers 405 with `Allow` (DRF
 * does), not 404. Every /api/ route is recorded as it is added, so this module must be
 * registered before the route modules.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError, notFound } from '../kernel/errors.js';

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `/api/projects/:id/` → a pattern for concrete paths, trailing slash optional. */
const patternOf = (url: string) =>
  new RegExp(`^${url.replace(/\/+$/, '').split('/').map((part) => (part.startsWith(':') ? '[^/]+' : escape(part))).join('/')}/?$`);

export async function registerMethodNotAllowed(app: FastifyInstance): Promise<void> {
  const routes = new Map<string, { pattern: RegExp; methods: Set<string> }>();
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/')) return;
    const url = route.url.replace(/\/+$/, '');
    const entry = routes.get(url) ?? { pattern: patternOf(url), methods: new Set<string>() };
    for (const method of [route.method].flat()) entry.methods.add(method);
    routes.set(url, entry);
  });

  // Fastify routes an unmatched method like an unknown path; under /api this handler tells them apart.
  await app.register(
    async (scope) => {
      scope.setNotFoundHandler(async (request) => {
        const path = request.url.split('?')[0].replace(/\/{2,}/g, '/');
        const allowed = new Set<string>();
        for (const { pattern, methods } of routes.values()) if (pattern.test(path)) methods.forEach((m) => allowed.add(m));
        if (allowed.size === 0) throw notFound(`Not found: ${request.method} ${path}`);
        throw new ApiError(405, 'invalid_request', 'method_not_allowed', `Method "${request.method}" not allowed.`, null, {
          allow: [...allowed, 'OPTIONS'].sort().join(', '),
        });
      });
    },
    { prefix: '/api' },
  );
}
