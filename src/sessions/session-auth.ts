/**
 * The browser session as a way to the same authenticated user a personal API key leads to
 * (ApiAccess asks it when a request presents no key). The session cookie counts only on
 * requests from our own pages, and a request that changes anything must carry the session's
 * CSRF token in X-CSRFToken.
 */
import type { FastifyRequest } from 'fastify';
import type { SessionAuthenticator } from '../http/auth.js';
import { ApiError } from '../kernel/errors.js';
import type { User } from '../store/types.js';
import { CSRF_HEADER, readCookie, SESSION_COOKIE } from './cookies.js';
import { fromOwnPage } from './origin.js';
import type { SessionService } from './service.js';
import { csrfTokenMatches } from './tokens.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export const csrfFailed = () =>
  new ApiError(403, 'authentication_error', 'csrf_failed', 'CSRF Failed: the X-CSRFToken header is missing or does not match this session.', null);

/** Sign-in from a page this server does not take for its own: an attack, or a proxy that hides our address. */
export const foreignOrigin = () =>
  new ApiError(
    403,
    'authentication_error',
    'csrf_failed',
    'CSRF Failed: this request came from a page of another origin. Behind a reverse proxy, set SIGHTLINE_PUBLIC_URL to the address people open (or SIGHTLINE_TRUST_PROXY with X-Forwarded-Proto and X-Forwarded-Host).',
    null,
  );

export class SessionAuth implements SessionAuthenticator {
  constructor(
    private readonly sessions: Pick<SessionService, 'userOf'>,
    private readonly publicUrl: string | null,
  ) {}

  /** The session token of a request's cookie, if it has one. */
  tokenOf(request: FastifyRequest): string | null {
    return readCookie(request, SESSION_COOKIE);
  }

  /** The signed-in user, or null when the request carries no usable session. Throws 403 on a missing or wrong CSRF token. */
  async userOf(request: FastifyRequest): Promise<User | null> {
    const token = this.tokenOf(request);
    if (token === null || !fromOwnPage(request, this.publicUrl)) return null;
    const user = await this.sessions.userOf(token);
    if (user === null) return null;
    const header = request.headers[CSRF_HEADER];
    if (!SAFE_METHODS.has(request.method) && !csrfTokenMatches(token, typeof header === 'string' ? header : undefined)) throw csrfFailed();
    return user;
  }
}
