/**
 * Sign-in for the web app, at PostHog's paths: POST /api/login and /api/logout, the signed-in
 * user at /api/users/@me/ (also with a personal API key), and taking up an invite link at
 * /api/signup/.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKit } from '../http/auth.js';
import { apiRoute } from '../http/route.js';
import { errorResponses, level, object, patchBody, userBasic, uuid, dateTime, type JsonSchema } from '../http/schemas.js';
import { rejectCoercion } from '../http/strict-body.js';
import { clearSessionCookies, setSessionCookies } from './cookies.js';
import { fromOwnPage, servedOverHttps } from './origin.js';
import { MAX_PASSWORD_LENGTH } from './passwords.js';
import { SESSION_SECONDS, type SessionService, type SignedIn } from './service.js';
import { foreignOrigin, type SessionAuth } from './session-auth.js';

const password = { type: 'string', minLength: 1, maxLength: MAX_PASSWORD_LENGTH };
const inviteToken = { type: 'string', minLength: 1, maxLength: 200 };
const success = object({ success: { type: 'boolean' } });

const meSchema = object({
  ...(userBasic.properties as Record<string, JsonSchema>),
  date_joined: dateTime,
  has_password: { type: 'boolean' },
  organizations: { type: 'array', items: object({ id: uuid, name: { type: 'string' }, membership_level: level }) },
});

type PublicRoute = { Body: Record<string, string | undefined> };

export interface SessionRouteDeps {
  api: ApiKit;
  sessions: SessionService;
  /** Reads the session of a request (the one ApiAccess was given). */
  sessionAuth: SessionAuth;
}

export async function registerSessionRoutes(app: FastifyInstance, { api, sessions, sessionAuth }: SessionRouteDeps): Promise<void> {
  const { publicUrl } = api;

  /** Routes that open or close a session: JSON from our own pages only (no sign-in forced on a user from elsewhere). */
  function publicRoute(url: string, summary: string, body: JsonSchema, response: Record<number, JsonSchema>, handler: (request: FastifyRequest<PublicRoute>, reply: FastifyReply) => Promise<unknown>) {
    app.post<PublicRoute>(url, {
      schema: { tags: ['sessions'], summary, body, response: { ...response, ...errorResponses } },
      onRequest: async (request) => {
        if (!fromOwnPage(request, publicUrl)) throw foreignOrigin();
      },
      preValidation: rejectCoercion(body),
      handler,
    });
  }

  const startSession = (request: FastifyRequest, reply: FastifyReply, signedIn: SignedIn) =>
    setSessionCookies(reply, { session: signedIn.sessionToken, csrf: signedIn.csrfToken }, servedOverHttps(request, publicUrl), SESSION_SECONDS);

  publicRoute(
    '/api/login',
    'Sign in with e-mail and password; sets the session cookie and the CSRF cookie',
    object({ email: { type: 'string', minLength: 1, maxLength: 254 }, password }),
    { 200: success },
    async (request, reply) => {
      const signedIn = await sessions.signIn(request.body.email!, request.body.password!, request.ip);
      startSession(request, reply, signedIn);
      return { success: true };
    },
  );

  app.post('/api/logout', {
    schema: { tags: ['sessions'], summary: 'End the browser session (needs X-CSRFToken)', response: { 200: success, ...errorResponses } },
    handler: async (request, reply) => {
      const token = sessionAuth.tokenOf(request);
      if (token !== null && (await sessionAuth.userOf(request))) await sessions.signOut(token);
      clearSessionCookies(reply, servedOverHttps(request, publicUrl));
      return { success: true };
    },
  });

  publicRoute(
    '/api/signup/invite',
    'What an invite link is for: its e-mail, organization and whether that e-mail has an account',
    object({ invite_token: inviteToken }),
    { 200: object({ target_email: { type: 'string' }, organization_name: { type: 'string' }, level, existing_user: { type: 'boolean' } }) },
    async (request) => sessions.invitePreview(request.body.invite_token!),
  );

  publicRoute(
    '/api/signup',
    'Take up an invite link: a new account sets its password, an existing one gives it; signs in',
    object({ invite_token: inviteToken, first_name: { type: 'string', maxLength: 150 }, password }, ['first_name']),
    { 201: meSchema },
    async (request, reply) => {
      const body = request.body;
      const joined = await sessions.acceptInvite(body.invite_token!, { firstName: body.first_name, password: body.password! }, request.ip);
      startSession(request, reply, joined);
      return reply.code(201).send(await sessions.profile(joined.user));
    },
  );

  const base = { scope: 'user', tag: 'users', url: '/api/users/@me/' };

  apiRoute(app, api, {
    ...base,
    method: 'GET',
    summary: 'The signed-in user (or the personal API key’s) with their organizations',
    response: { 200: meSchema },
    handler: async (_request, principal) => sessions.profile(principal.user),
  });

  apiRoute<{ Body: { first_name?: string; last_name?: string; password?: string; current_password?: string } }>(app, api, {
    ...base,
    method: 'PATCH',
    summary: 'Change your name, or your password (current_password is required when one is set; your other sessions end)',
    body: patchBody({ first_name: { type: 'string', maxLength: 150 }, last_name: { type: 'string', maxLength: 150 }, password, current_password: password }),
    response: { 200: meSchema },
    handler: async (request, principal) => {
      const body = request.body ?? {};
      if (body.password !== undefined) {
        const keepSession = principal.key === null ? sessionAuth.tokenOf(request) : null;
        await sessions.changePassword(principal.user, { current: body.current_password, next: body.password }, keepSession);
      }
      return sessions.profile(await sessions.rename(principal.user, { first_name: body.first_name, last_name: body.last_name }));
    },
  });
}
