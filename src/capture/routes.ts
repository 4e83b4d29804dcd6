/**
 * The public capture surface: /capture, /batch, /e, /i/v0/e, /track, /engage (GET and POST,
 * with or without trailing slash, any query string). Bodies arrive raw, whatever their
 * content type, and are decoded by capture/decode.ts.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BufferFullError } from '../ingestion/buffer.js';
import { decodeCapture } from './decode.js';
import { normalizeEvent } from './normalize.js';
import type { PendingEvent } from '../ingestion/plan/plan.js';
import { clientIp } from '../util/ip.js';
import { numericId } from '../util/numeric-id.js';
import type { AppContext } from '../app-context.js';
import type { Project } from '../store/types.js';
import { personalKeyOwner } from '../http/auth.js';
import { ApiError, invalidPersonalKey, invalidProject, invalidProjectKey, serviceUnavailable } from '../kernel/errors.js';
import { withRawBodies } from '../http/raw-body.js';

export const CAPTURE_PATHS = ['/capture', '/batch', '/e', '/i/v0/e', '/track', '/engage'];

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

export async function registerCaptureRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  // Raw bytes for every content type: posthog-js sends gzip as text/plain without a header.
  await withRawBodies(app, ctx.config.bodyLimitBytes, (scope) => {
    for (const path of CAPTURE_PATHS) {
      scope.route({
        method: ['GET', 'POST'],
        url: path,
        handler: async (request, reply) => {
          await capture(request, ctx);
          return reply.code(200).send({ status: 1 });
        },
      });
    }
  });
}

async function capture(request: FastifyRequest, ctx: AppContext): Promise<void> {
  const query = request.query as Record<string, string | undefined>;
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const decoded = decodeCapture({
    path: request.url.split('?')[0],
    query,
    contentType: header(request, 'content-type'),
    contentEncoding: header(request, 'content-encoding'),
    body,
    maxDecodedBytes: ctx.config.decodedLimitBytes,
  });
  if (!decoded.token) {
    throw new ApiError(401, 'authentication_error', 'invalid_api_key', 'API key not provided. You can find your project API key in Sightline project settings.', undefined);
  }
  const project = (await ctx.projects.byToken(decoded.token)) ?? (await projectOfPersonalKey(ctx, decoded.token, decoded.projectId));

  const now = new Date();
  const ip = clientIp(request.socket.remoteAddress, header(request, 'x-forwarded-for'), ctx.config.trustProxy);
  const pending: PendingEvent[] = [];
  for (const raw of decoded.events) {
    const outcome = normalizeEvent(raw, { sentAt: decoded.sentAt, now, ip, maxEventBytes: ctx.config.maxEventBytes, payloadBytes: decoded.payloadBytes, dropBots: ctx.config.dropBotEvents });
    if (outcome.ok) pending.push({ projectId: project.id, anonymizeIps: project.anonymize_ips, event: outcome.value });
    else ctx.metrics.eventsDropped.inc({ reason: outcome.reason });
  }
  if (decoded.droppedNonObjects) ctx.metrics.eventsDropped.inc({ reason: 'not_an_object' }, decoded.droppedNonObjects);

  try {
    await ctx.buffer.submit(pending);
  } catch (error) {
    // Not stored: a 503 makes every SDK retry, and uuids make the retry safe.
    const reason = error instanceof BufferFullError ? error.message : 'events could not be stored right now';
    throw serviceUnavailable(`Ingestion is temporarily unavailable (${reason}); please retry.`);
  }
}

/**
 * Capture with a personal API key as the token, as PostHog's older capture allowed (spec §7):
 * `project_id` names the project, which must belong to an organization of the key's owner.
 * Without a `project_id` the token is taken for an unknown project key. Only unrestricted keys
 * (no scopes, or `*`) may write events: a key limited to, say, `query:read` must not.
 */
async function projectOfPersonalKey(ctx: AppContext, token: string, rawProjectId: unknown): Promise<Project> {
  if (rawProjectId === undefined || rawProjectId === null || rawProjectId === '') throw invalidProjectKey();
  const projectId = typeof rawProjectId === 'number' ? rawProjectId : typeof rawProjectId === 'string' ? numericId(rawProjectId) : null;
  if (projectId === null || !Number.isSafeInteger(projectId) || projectId <= 0) throw invalidProject('Invalid Project ID.');
  const owner = await personalKeyOwner(ctx, token);
  if (!owner) throw invalidPersonalKey();
  const scopes = owner.key.scopes;
  if (scopes !== null && !scopes.includes('*')) throw invalidPersonalKey('Capture needs a personal API key without scopes (or with *).');
  const tenancy = ctx.stores.meta.tenancy;
  const project = await tenancy.getProject(projectId);
  if (!project || !(await tenancy.getMembership(project.organization_id, owner.user.id))) {
    throw invalidProject(`No project ${projectId} that this personal API key may write to.`);
  }
  return project;
}
