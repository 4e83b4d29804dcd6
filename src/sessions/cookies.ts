/** The two cookies of a browser session, read from and written to raw headers. */
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The session token: HttpOnly, so page scripts never see it. */
export const SESSION_COOKIE = 'sightline_session';
/** The CSRF token: readable by the app, which echoes it in the X-CSRFToken header. */
export const CSRF_COOKIE = 'sightline_csrftoken';
export const CSRF_HEADER = 'x-csrftoken';

export function readCookie(request: FastifyRequest, name: string): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

interface CookieOptions {
  secure: boolean;
  maxAgeSeconds: number;
  httpOnly: boolean;
}

const serialize = (name: string, value: string, options: CookieOptions) =>
  [
    `${name}=${value}`,
    'Path=/',
    `Max-Age=${options.maxAgeSeconds}`,
    'SameSite=Lax',
    ...(options.httpOnly ? ['HttpOnly'] : []),
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');

export function setSessionCookies(reply: FastifyReply, values: { session: string; csrf: string }, secure: boolean, maxAgeSeconds: number): void {
  reply.header('set-cookie', [
    serialize(SESSION_COOKIE, values.session, { secure, maxAgeSeconds, httpOnly: true }),
    serialize(CSRF_COOKIE, values.csrf, { secure, maxAgeSeconds, httpOnly: false }),
  ]);
}

export function clearSessionCookies(reply: FastifyReply, secure: boolean): void {
  reply.header('set-cookie', [
    serialize(SESSION_COOKIE, '', { secure, maxAgeSeconds: 0, httpOnly: true }),
    serialize(CSRF_COOKIE, '', { secure, maxAgeSeconds: 0, httpOnly: false }),
  ]);
}
