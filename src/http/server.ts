/**
 * The Fastify instance: CORS for browsers on any origin, one error shape for every failure,
 * request metrics, and the slow-client limits. Route modules are registered by app.ts.
 */
import { toApiError } from './error-mapping.js';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Config } from '../config.js';
import type { Logger } from '../kernel/logger.js';
import type { Metrics } from '../kernel/metrics.js';
import { guardJson, JsonTooDeepError, mayHoldSurrogates } from '../util/json-guard.js';
import { ApiError } from '../kernel/errors.js';
import { readRawBody } from './raw-body.js';
import type { Drain } from './drain.js';
import { readQueryLikeDrf } from './query-params.js';
import type { JsonSchema } from './schemas.js';
import { lazySchemaCompilers } from './lazy-schemas.js';

export function createServer(config: Config, log: Logger, metrics: Metrics, drain: Drain): FastifyInstance {
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
    // Idle connections are ended by the shutdown's IdleReaper (http/drain.ts), which spares a client that has just connected.
    forceCloseConnections: false,
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 500 },
    // A membership level is an integer or its string ('8'), as DRF accepts it.
    ajv: { customOptions: { allowUnionTypes: true } },
    schemaController: { compilersFactory: lazySchemaCompilers() },
    onProtoPoisoning: 'remove',
    onConstructorPoisoning: 'remove',
    // Node enforces headersTimeout/requestTimeout only when it sweeps its connections, every
    // 30 s by default: a slowloris client would outlive small timeouts by that much.
    http: { connectionsCheckingInterval: checkingInterval(config) },
    clientErrorHandler,
    // URLs the router cannot decode (bad percent-encoding, overlong parameters) get the same
    // error shape as everything else instead of Fastify's own.
    frameworkErrors: (error, _request, reply) => {
      const api = toApiError(error);
      (reply as FastifyReply).code(api.status).send(api.toBody());
    },
  }) as unknown as FastifyInstance;
  app.server.headersTimeout = config.headersTimeoutMs;
  app.server.maxConnections = config.maxConnections;

  // JSON bodies (the /api/ routes): read by readRawBody, which drains a body over the limit
  // before its 413 (Fastify's reader answers at once, and the connection reset that follows
  // often reaches the client first); then Fastify's JSON parser, then the guards capture
  // applies too, so a 100,000-level body is a 400 rather than a stack overflow later.
  const parseJson = app.getDefaultJsonParser('remove', 'remove');
  const readText = (payload: IncomingMessage, done: (error: Error | null, text?: string) => void) =>
    readRawBody(payload, config.bodyLimitBytes, (error, bytes) => done(error, bytes?.toString('utf8')));
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('text/plain', (_request, payload, done) => readText(payload, done));
  app.addContentTypeParser('application/json', (request, payload, done) => {
    readText(payload, (readError, body) => {
      if (readError || body === undefined) return done(readError, undefined);
      // No body, as many clients send a DELETE with this content type: none to parse (a route
      // that needs one says so in its own validation error).
      if (body === '') return done(null, undefined);
      parseJson(request, body, (error, value) => {
        if (error) return done(error, undefined);
        try {
          done(null, guardJson(value, { fixStrings: mayHoldSurrogates(body) }));
        } catch (err) {
          if (!(err instanceof JsonTooDeepError)) return done(err as Error, undefined);
          done(new ApiError(400, 'validation_error', 'parse_error', `Malformed JSON body: ${err.message}`, null), undefined);
        }
      });
    });
  });

  // Browsers: echo the Origin and allow credentials on every response (posthog-js works with
  // or without credentials), and answer every preflight. Hooks on every request are callback
  // hooks: an async one costs a promise each time.
  app.addHook('onRequest', (request, reply, done) => {
    drain.seen();
    if (drain.draining) reply.header('connection', 'close');
    const origin = request.headers.origin;
    if (origin) {
      reply.header('access-control-allow-origin', origin);
      reply.header('access-control-allow-credentials', 'true');
      reply.header('vary', 'Origin');
    } else {
      reply.header('access-control-allow-origin', '*');
    }
    done();
  });
  app.options('/*', async (request, reply) => {
    reply.header('access-control-allow-methods', 'GET, POST, PATCH, PUT, DELETE, OPTIONS');
    const requested = request.headers['access-control-request-headers'];
    reply.header('access-control-allow-headers', typeof requested === 'string' && requested ? requested : 'content-type, authorization');
    reply.header('access-control-max-age', '86400');
    return reply.code(204).send();
  });

  // Query strings are read as DRF reads them before a route's schema checks them.
  app.addHook('preValidation', (request, _reply, done) => {
    const schema = request.routeOptions.schema?.querystring as JsonSchema | undefined;
    const properties = schema?.properties as Record<string, JsonSchema> | undefined;
    if (properties && request.query && typeof request.query === 'object') readQueryLikeDrf(request.query as Record<string, unknown>, properties);
    done();
  });

  const requestCounters = new Map<string, { inc(): void }>();
  app.addHook('onResponse', (request, reply, done) => {
    // One labelled child per method, route and status, found by a string key rather than by
    // prom-client hashing the label object on every request.
    const route = request.routeOptions.url ?? 'unmatched';
    const key = `${request.method} ${reply.statusCode} ${route}`;
    let counter = requestCounters.get(key);
    if (!counter) {
      counter = metrics.httpRequests.labels({ method: request.method, route, status: String(reply.statusCode) });
      requestCounters.set(key, counter);
    }
    counter.inc();
    done();
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

/** A tenth of the smallest timeout, between 100 ms and Node's default 30 s. */
const checkingInterval = (config: Config) =>
  Math.min(30_000, Math.max(100, Math.floor(Math.min(config.headersTimeoutMs, config.requestTimeoutMs) / 10)));

/**
 * Errors Node's HTTP parser raises before Fastify sees a request (malformed request line,
 * oversized headers, header or request timeout): answered in the API's error shape, then the
 * socket is closed, as Fastify's default handler does.
 */
function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  let status = 400;
  let body = new ApiError(400, 'invalid_request', 'bad_request', 'Malformed HTTP request.', null);
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    body = new ApiError(408, 'invalid_request', 'request_timeout', 'The request was not received in time.', null);
  } else if (error.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    body = new ApiError(431, 'invalid_request', 'request_header_fields_too_large', 'Request headers (or URL) are too large.', null);
  }
  const text = JSON.stringify(body.toBody());
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
    );
  }
  socket.destroy(error);
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };
