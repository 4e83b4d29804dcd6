/**
 * The Fastify instance: CORS for browsers on any origin, one error shape for every failure,
 * request metrics, and the slow-client limits. Route modules are registered by app.ts.
 */
import Fastify, { LogController, type FastifyError, type FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { ApiError, payloadTooLarge } from './errors.js';

export function createServer(config: Config, log: Logger, metrics: Metrics): FastifyInstance {
  const app = Fastify({
    loggerInstance: log,
    // Per-request log lines would dominate the hot path; errors are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: config.trustProxy,
    bodyLimit: config.bodyLimitBytes,
    connectionTimeout: config.requestTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: 65_000,
    maxRequestsPerSocket: 0,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 500 },
    onProtoPoisoning: 'remove',
    onConstructorPoisoning: 'remove',
  }) as unknown as FastifyInstance;
  app.server.headersTimeout = config.headersTimeoutMs;
  app.server.maxConnections = config.maxConnections;

  // Browsers: echo the Origin and allow credentials on every response (posthog-js works with
  // or without credentials), and answer every preflight.
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin) {
      reply.header('access-control-allow-origin', origin);
      reply.header('access-control-allow-credentials', 'true');
      reply.header('vary', 'Origin');
    } else {
      reply.header('access-control-allow-origin', '*');
    }
  });
  app.options('/*', async (request, reply) => {
    reply.header('access-control-allow-methods', 'GET, POST, PATCH, PUT, DELETE, OPTIONS');
    const requested = request.headers['access-control-request-headers'];
    reply.header('access-control-allow-headers', typeof requested === 'string' && requested ? requested : 'content-type, authorization');
    reply.header('access-control-max-age', '86400');
    return reply.code(204).send();
  });

  app.addHook('onResponse', async (request, reply) => {
    metrics.httpRequests.inc({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) });
  });

  app.setNotFoundHandler(async (request, reply) => {
    const error = new ApiError(404, 'invalid_request', 'not_found', `Not found: ${request.method} ${request.url.split('?')[0]}`, null);
    return reply.code(404).send(error.toBody());
  });

  app.setErrorHandler(async (error: FastifyError | ApiError, request, reply) => {
    const api = toApiError(error);
    if (api.status >= 500) request.log.error({ err: error, url: request.url.split('?')[0] }, 'request failed');
    for (const [name, value] of Object.entries(api.headers)) reply.header(name, value);
    return reply.code(api.status).send(api.toBody());
  });

  return app;
}

/** Maps anything thrown into the spec's error shape; unknown errors become a logged 500. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const e = error as FastifyError & { validation?: { instancePath?: string; params?: Record<string, unknown> }[] };
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return payloadTooLarge();
  if (e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || e instanceof SyntaxError) {
    return new ApiError(400, 'validation_error', 'parse_error', `Malformed JSON body: ${e.message}`, null);
  }
  if (e.validation) {
    const first = e.validation[0];
    const attr = (first?.instancePath ?? '').replace(/^\//, '').replace(/\//g, '__') || (first?.params?.missingProperty as string | undefined) || null;
    return new ApiError(400, 'validation_error', 'invalid_input', e.message, attr);
  }
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ApiError(415, 'invalid_request', 'unsupported_media_type', e.message, null);
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new ApiError(e.statusCode, 'invalid_request', e.code?.toLowerCase() ?? 'invalid_request', e.message, null);
  }
  return new ApiError(500, 'server_error', 'error', 'A server error occurred.', null);
}
