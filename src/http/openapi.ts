/**
 * The OpenAPI 3.1 document of the management API at GET /api/schema/, generated from the route
 * schemas by @fastify/swagger. Registered before every route module so that it sees them all;
 * only /api/ routes are described (the capture surface speaks PostHog's wire protocol).
 */
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Sightline management API',
        description: 'PostHog-compatible management endpoints. Lists use limit/offset pagination; errors are {type, code, detail, attr}.',
        version: '1',
      },
      components: {
        securitySchemes: {
          PersonalApiKey: { type: 'http', scheme: 'bearer', description: 'A personal API key (phx_…)' },
        },
      },
    },
    transform: ({ schema, url }) => ({ schema: { ...schema, hide: Boolean(schema?.hide) || !url.startsWith('/api/') }, url }),
  });

  // Public like PostHog's: it describes the API, not anyone's data.
  app.get(
    '/api/schema/',
    { schema: { tags: ['schema'], summary: 'This OpenAPI document', response: { 200: { type: 'object', additionalProperties: true } } } },
    async () => app.swagger(),
  );
}
