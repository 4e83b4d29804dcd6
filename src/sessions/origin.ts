import type { FastifyRequest } from 'fastify';

/** Whether the browser reached us over HTTPS (cookies are then marked Secure). */
export const servedOverHttps = (request: FastifyRequest, publicUrl: string | null) =>
  request.protocol === 'https' || (publicUrl?.startsWith('https:') ?? false);

/**
 * False when the request says it comes from a page of another origin. A session is only
 * accepted from our own pages: the API answers CORS requests from any origin, and a sibling
 * subdomain's page would be sent our SameSite=Lax cookie. Our own origin is the request's
 * (X-Forwarded-* only when trusted), or SIGHTLINE_PUBLIC_URL's.
 */
export function fromOwnPage(request: FastifyRequest, publicUrl: string | null): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') return false;
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  return origin === `${request.protocol}://${request.host}` || (publicUrl !== null && origin === new URL(publicUrl).origin);
}
