/**
 * Reading request bodies within the body limit. Routes that decode bodies themselves (capture,
 * /decide, /flags: the SDKs send gzip, base64 and lz64 under any type) get raw bytes whatever
 * the content type; the JSON and text parsers (server.ts) read through the same function.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { ApiError, payloadTooLarge } from '../kernel/errors.js';

/** Registers `routes` in a scope whose bodies arrive as raw bytes, at most `limit` of them (else 413). */
export async function withRawBodies(app: FastifyInstance, limit: number, routes: (scope: FastifyInstance) => void): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => readRawBody(payload, limit, done));
    routes(scope);
  });
}

// Past the body limit we keep reading (and discarding) up to this multiple of the limit before
// answering: answering while the client still uploads resets the connection, and the SDK then
// sees a network error and retries instead of seeing the 413 that makes it split the batch.
const DRAIN_FACTOR = 4;

/** A body as bytes: 413 past `limit` (after draining), 400 when it is shorter than its Content-Length. */
export function readRawBody(payload: IncomingMessage, limit: number, done: (error: Error | null, body?: Buffer) => void): void {
  const declared = Number(payload.headers['content-length']);
  const drainCap = limit * DRAIN_FACTOR;
  if (declared > drainCap) return done(payloadTooLarge());
  const chunks: Buffer[] = [];
  let received = 0;
  let tooLarge = false;
  let finished = false;
  const finish = (error: Error | null, body?: Buffer) => {
    if (finished) return;
    finished = true;
    payload.removeListener('data', onData);
    done(error, body);
  };
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > drainCap) return finish(payloadTooLarge());
    if (tooLarge) return;
    if (received > limit) {
      tooLarge = true;
      chunks.length = 0;
      return;
    }
    chunks.push(chunk);
  };
  payload.on('data', onData);
  payload.once('end', () => {
    if (tooLarge) finish(payloadTooLarge());
    else if (!Number.isNaN(declared) && received !== declared) finish(new ApiError(400, 'validation_error', 'invalid_payload', 'Malformed request data: body length does not match Content-Length', null));
    else finish(null, Buffer.concat(chunks, received));
  });
  payload.once('error', (error) => finish(error));
}
