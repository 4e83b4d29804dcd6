/**
 * What one capture request does: decode the body, find its project, normalise each event (a bad
 * one is dropped and counted, never failing the others), and hand the events to ingestion, which
 * answers once they are durable.
 */
import type { ApiAccess } from '../http/auth.js';
import { ApiError, invalidPersonalKey, invalidProject, invalidProjectKey, payloadTooLarge, serviceUnavailable } from '../kernel/errors.js';
import type { Metrics } from '../kernel/metrics.js';
import type { PendingEvent } from '../ingestion/plan/plan.js';
import { createHash } from 'node:crypto';
import { BufferFullError } from '../ingestion/buffer.js';
import { EventTooLargeError, LogUnavailableError } from '../ingestion/log/types.js';

/** A full buffer or a lagging event store clears within seconds: SDKs are asked to retry after one. */
const CAPTURE_RETRY_AFTER_SECONDS = 1;
import type { Project, TenancyStore } from '../store/types.js';
import { numericId } from '../util/numeric-id.js';
import { decodeCapture } from './decode.js';
import { normalizeEvent } from './normalize.js';
import type { CaptureInput } from './types.js';

export interface CaptureSettings {
  decodedLimitBytes: number;
  maxEventBytes: number;
  dropBotEvents: boolean;
}

export interface CaptureDeps {
  settings: CaptureSettings;
  projects: { byToken(token: string): Promise<Project | null> };
  access: Pick<ApiAccess, 'personalKeyOwner'>;
  tenancy: Pick<TenancyStore, 'getProject' | 'getMembership'>;
  metrics: Pick<Metrics, 'eventsDropped'>;
  /** Resolves once the events are durable; `batchId` is the same for a client's retry of the batch. */
  submit(events: PendingEvent[], batchId: string): Promise<void>;
}

/** A capture request as the HTTP layer saw it. */
export type CaptureRequest = Omit<CaptureInput, 'maxDecodedBytes'> & { ip: string | null };

const PERSONAL_KEY_PREFIX = 'phx_';

function invalidUuid(raw: unknown, index: number, count: number): ApiError {
  const value = (raw as { uuid?: unknown }).uuid;
  const which = count > 1 ? `Event ${index} of the batch has` : 'The event has';
  const shown = JSON.stringify(value) ?? String(value);
  return new ApiError(400, 'validation_error', 'invalid_payload', `${which} an invalid uuid: ${shown.slice(0, 100)} is not a UUID.`, count > 1 ? `batch__${index}__uuid` : 'uuid');
}

/** The batch's identity: its project and event uuids, which an SDK's retry sends again unchanged. */
function batchIdOf(events: PendingEvent[]): string {
  const hash = createHash('sha256');
  for (const { projectId, event } of events) hash.update(`${projectId}:${event.uuid};`);
  return hash.digest('base64url');
}

export class Capture {
  constructor(private readonly deps: CaptureDeps) {}

  async accept(request: CaptureRequest): Promise<void> {
    const { settings, metrics } = this.deps;
    const { ip, ...input } = request;
    const decoded = decodeCapture({ ...input, maxDecodedBytes: settings.decodedLimitBytes });
    if (!decoded.token) {
      const detail = decoded.tokenNotText
        ? 'API key must be a non-empty text (the project API key, phc_…).'
        : 'API key not provided. You can find your project API key in Sightline project settings.';
      throw new ApiError(401, 'authentication_error', 'invalid_api_key', detail, undefined);
    }
    const project = (await this.deps.projects.byToken(decoded.token)) ?? (await this.projectOfPersonalKey(decoded.token, decoded.projectId));

    const now = new Date();
    const pending: PendingEvent[] = [];
    for (const [index, raw] of decoded.events.entries()) {
      const outcome = normalizeEvent(raw, { sentAt: decoded.sentAt, now, ip, maxEventBytes: settings.maxEventBytes, payloadBytes: decoded.payloadBytes, dropBots: settings.dropBotEvents });
      if (outcome.ok) pending.push({ projectId: project.id, anonymizeIps: project.anonymize_ips, event: outcome.value });
      // As PostHog: an unreadable uuid fails the whole request, so the client learns of it.
      else if (outcome.reason === 'invalid_uuid') throw invalidUuid(raw, index, decoded.events.length);
      else metrics.eventsDropped.inc({ reason: outcome.reason });
    }
    if (decoded.droppedNonObjects) metrics.eventsDropped.inc({ reason: 'not_an_object' }, decoded.droppedNonObjects);

    try {
      await this.deps.submit(pending, batchIdOf(pending));
    } catch (error) {
      if (error instanceof EventTooLargeError) throw payloadTooLarge(`Not stored: ${error.message} (the server's SIGHTLINE_MAX_EVENT_BYTES should stay below the NATS servers' max_payload).`);
      // Not stored: a 503 makes every SDK retry, and uuids make the retry safe.
      const reason = error instanceof BufferFullError || error instanceof LogUnavailableError ? error.message : 'events could not be stored right now';
      throw serviceUnavailable(`Ingestion is temporarily unavailable (${reason}); please retry.`, CAPTURE_RETRY_AFTER_SECONDS);
    }
  }

  /**
   * Capture with a personal API key as the token, as PostHog's older capture allowed
   * (`posthog/api/capture.py`; docs/api.md, "Capture with a personal API key"):
   * `project_id` names the project, which must belong to an organization of the key's owner.
   * Without a `project_id` the token is taken for an unknown project key. Only unrestricted keys
   * (no scopes, or `*`) may write events: a key limited to, say, `query:read` must not.
   */
  private async projectOfPersonalKey(token: string, rawProjectId: unknown): Promise<Project> {
    if (rawProjectId === undefined || rawProjectId === null || rawProjectId === '') {
      if (!token.startsWith(PERSONAL_KEY_PREFIX)) throw invalidProjectKey();
      if (!(await this.deps.access.personalKeyOwner(token))) throw invalidPersonalKey();
      throw invalidProject('A personal API key needs project_id, the id of the project to write to.');
    }
    const projectId = typeof rawProjectId === 'number' ? rawProjectId : typeof rawProjectId === 'string' ? numericId(rawProjectId) : null;
    if (projectId === null || !Number.isSafeInteger(projectId) || projectId <= 0) throw invalidProject('Invalid Project ID.');
    const owner = await this.deps.access.personalKeyOwner(token);
    if (!owner) throw invalidPersonalKey();
    const scopes = owner.key.scopes;
    if (scopes !== null && !scopes.includes('*')) throw invalidPersonalKey('Capture needs a personal API key without scopes (or with *).');
    const project = await this.deps.tenancy.getProject(projectId);
    if (!project || !(await this.deps.tenancy.getMembership(project.organization_id, owner.user.id))) {
      throw invalidProject(`No project ${projectId} that this personal API key may write to.`);
    }
    return project;
  }
}
