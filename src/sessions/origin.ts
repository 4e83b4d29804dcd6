import type { FastifyRequest } from 'fastify';

/** This server's origin as the browser sees it: SIGHTLINE_PUBLIC_URL's, else the request's (X-Forwarded-* only when trusted). */
export function ownOrigin(request: FastifyRequest, publicUrl: string | undefined): string {
  return publicUrl ? new URL(publicUrl).origin : `${request.protocol}://${request.host}`;
}

/** Whether the browser reached us over HTTPS (cookies are then marked Secure). */
export const servedOverHttps = (request: FastifyRequest, publicUrl: string | undefined) =>
  request.protocol === 'https' || (publicUrl?.startsWith('https:') ?? false);

/**
 * False when the request says it comes from a page of another origin. A session is only
 * accepted from our own pages: the API answers CORS requests from any origin, and a sibling
 * subdomain's page would be sent our SameSite=Lax cookie.
 */
export function fromOwnPage(request: FastifyRequest, publicUrl: string | undefined): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') return false;
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  return origin === `${request.protocol}://${request.host}` || (publicUrl !== undefined && origin === new URL(publicUrl).origin);
}
