/**
 * The public capture surface: /capture, /batch, /e, /i/v0/e, /track, /engage (GET and POST,
 * with or without trailing slash, any query string). Bodies arrive raw, whatever their
 * content type, and are decoded by the capture service (service.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { withRawBodies } from '../http/raw-body.js';
import { clientIp } from '../util/ip.js';
import type { Capture } from './service.js';

export const CAPTURE_PATHS = ['/capture', '/batch', '/e', '/i/v0/e', '/track', '/engage'];

export interface CaptureRouteDeps {
  capture: Capture;
  bodyLimitBytes: number;
  /** Take the client IP from X-Forwarded-For. */
  trustProxy: boolean;
}

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

export async function registerCaptureRoutes(app: FastifyInstance, { capture, bodyLimitBytes, trustProxy }: CaptureRouteDeps): Promise<void> {
  // Raw bytes for every content type: posthog-js sends gzip as text/plain without a header.
  await withRawBodies(app, bodyLimitBytes, (scope) => {
    for (const path of CAPTURE_PATHS) {
      scope.route({
        method: ['GET', 'POST'],
        url: path,
        handler: async (request, reply) => {
          await capture.accept({
            path: request.url.split('?')[0],
            query: request.query as Record<string, string | undefined>,
            contentType: header(request, 'content-type'),
            contentEncoding: header(request, 'content-encoding'),
            body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
            ip: clientIp(request.socket.remoteAddress, header(request, 'x-forwarded-for'), trustProxy),
          });
          return reply.code(200).send({ status: 1 });
        },
      });
    }
  });
}
