/** A browser session over plain HTTP: sign in, then send the cookies (and the CSRF header when asked). */
import assert from 'node:assert/strict';
import type { TestServer } from './server.js';

export const OWNER_EMAIL = 'owner@sightline.test';
export const OWNER_PASSWORD = 'correct horse battery staple';

export interface Session {
  /** The Cookie header to send. */
  cookie: string;
  csrf: string;
  /** The raw Set-Cookie lines of the sign-in. */
  setCookies: string[];
}

/** The response of POST /api/login. */
export function login(server: TestServer, email: string, password: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ email, password }) });
}

/** The session cookies of a Set-Cookie answer (sign-in or sign-up). */
export function sessionOf(response: Response): Session {
  const setCookies = response.headers.getSetCookie();
  const value = (name: string) => {
    const line = setCookies.find((c) => c.startsWith(`${name}=`));
    assert.ok(line, `${name} cookie in ${JSON.stringify(setCookies)}`);
    return line.split(';')[0].slice(name.length + 1);
  };
  const session = value('sightline_session');
  const csrf = value('sightline_csrftoken');
  return { cookie: `sightline_session=${session}; sightline_csrftoken=${csrf}`, csrf, setCookies };
}

export async function signIn(server: TestServer, email = OWNER_EMAIL, password = OWNER_PASSWORD): Promise<Session> {
  const response = await login(server, email, password);
  assert.equal(response.status, 200, await response.clone().text());
  return sessionOf(response);
}

/** An /api/ request made with a session: the CSRF header unless `csrf: false`, never a personal key. */
export function withSession(
  server: TestServer,
  session: Session,
  pathAndQuery: string,
  init: { method?: string; body?: unknown; csrf?: boolean; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { cookie: session.cookie, ...init.headers };
  if (init.csrf !== false) headers['x-csrftoken'] = session.csrf;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  return fetch(server.url + pathAndQuery, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
}
