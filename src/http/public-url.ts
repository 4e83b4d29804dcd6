import type { FastifyRequest } from 'fastify';
import { validationError } from '../kernel/errors.js';

// A host name, IPv4 address or bracketed IPv6 address, with an optional port: nothing that could
// add a path, query, credentials or another scheme to a link.
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * This server's address as its clients see it, for links it hands out (pagination, invites):
 * SIGHTLINE_PUBLIC_URL when set, else the request's protocol and `Host` (as DRF builds them;
 * X-Forwarded-* only when trusted). A `Host` that is not a plain host[:port] is refused with
 * 400, as Django refuses it, rather than copied into links.
 */
export function publicBase(request: FastifyRequest, publicUrl: string | null): string {
  if (publicUrl) return publicUrl;
  const host = request.host;
  if (typeof host !== 'string' || !HOST.test(host)) {
    throw validationError('The Host header is not a valid host name, so links cannot be built. Send a valid Host or set SIGHTLINE_PUBLIC_URL.', null);
  }
  return `${request.protocol}://${host}`;
}
