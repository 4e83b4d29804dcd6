/**
 * Reading a /decide or /flags request: raw bodies in every encoding the SDKs use (decoded by
 * the capture decoder), the project token, and the request fields of PostHog's flags service
 * (`rust/feature-flags/src/flags/flag_request.rs` in github.com/PostHog/posthog).
 */
import { isPlainObject } from '../../kernel/json.js';
import type { JsonObject } from '../../kernel/json.js';
import type { FastifyRequest } from 'fastify';
import type { FlagRequest } from '../evaluation/index.js';
import { decodeCapture } from '../../capture/decode.js';
import type { GeoLookup, GeoProperties } from '../../geoip/geoip.js';
import type { Project } from '../../store/types.js';
import { clientIp } from '../../util/ip.js';
import { ApiError, invalidPayload, invalidProjectKey, validationError } from '../../kernel/errors.js';
import { asBuffer } from '../../util/bytes.js';

const MAX_DISTINCT_ID_LENGTH = 200;

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** Query parameters with the first value of repeated ones. */
export function queryOf(request: FastifyRequest): Record<string, string | undefined> {
  const query: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries((request.query ?? {}) as Record<string, unknown>)) {
    query[name] = Array.isArray(value) ? String(value[0]) : String(value);
  }
  return query;
}

/** What answering a /decide or /flags POST needs of the HTTP request: plain data, so a worker thread can answer it. */
export interface FlagHttpRequest {
  path: string;
  query: Record<string, string | undefined>;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  /** GeoIP's answer for the client's address, looked up here: flag threads have no GeoIP database. */
  location: GeoProperties | null;
  body: Uint8Array;
}

export function flagHttpRequest(request: FastifyRequest, geo: GeoLookup | null): FlagHttpRequest {
  // As PostHog's /decide does (`get_ip_address` in `posthog/utils.py`), X-Forwarded-For names the
  // address used for GeoIP, proxy or not: a client can only change its own location, which it
  // could also do with person_properties.
  const ip = clientIp(request.socket.remoteAddress, header(request, 'x-forwarded-for'), true);
  return {
    path: request.url.split('?')[0],
    query: queryOf(request),
    contentType: header(request, 'content-type'),
    contentEncoding: header(request, 'content-encoding'),
    location: ip && geo ? geo.lookup(ip) : null,
    body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
  };
}

/** 401 for a missing or unknown project token. */
export async function projectForToken(projects: ProjectLookup, token: string | null | undefined): Promise<Project> {
  if (!token) {
    throw new ApiError(401, 'authentication_error', 'invalid_api_key', 'API key not provided. You can find your project API key in Sightline project settings.', undefined);
  }
  const project = await projects.byToken(token);
  if (!project) throw invalidProjectKey();
  return project;
}

export interface ProjectLookup {
  byToken(token: string): Promise<Project | null>;
}

export async function readFlagRequest(
  input: FlagHttpRequest,
  projects: ProjectLookup,
  maxDecodedBytes: number,
): Promise<{ project: Project; flags: FlagRequest }> {
  const decoded = decodeCapture({
    path: input.path,
    query: input.query,
    contentType: input.contentType,
    contentEncoding: input.contentEncoding,
    body: asBuffer(input.body),
    maxDecodedBytes,
  });
  const body = decoded.events.length === 1 ? decoded.events[0] : null;
  if (!body) throw invalidPayload('expected one JSON object');
  const project = await projectForToken(projects, decoded.token ?? input.query.token);
  return { project, flags: parseFlagRequest(body, input.location) };
}

const text = (value: unknown): string | null =>
  typeof value === 'string' && value !== '' ? value : typeof value === 'number' && Number.isFinite(value) ? String(value) : null;

const object = (value: unknown): JsonObject => (isPlainObject(value) ? value : {});

const truthy = (value: unknown) => value === true || value === 'true';

export function parseFlagRequest(body: JsonObject, location: GeoProperties | null): FlagRequest {
  const distinctId = text(body.distinct_id) ?? text(body.$distinct_id);
  if (distinctId === null) throw validationError('Decide requires a distinct_id.', 'distinct_id', 'missing_distinct_id');

  const groups: Record<string, string> = {};
  for (const [name, key] of Object.entries(object(body.groups ?? body.$groups))) {
    const value = text(key);
    if (value !== null) groups[name] = value;
  }
  const groupProperties: Record<string, JsonObject> = {};
  for (const [name, properties] of Object.entries(object(body.group_properties ?? body.$group_properties))) {
    if (isPlainObject(properties)) groupProperties[name] = properties;
  }
  const keys = body.flag_keys_to_evaluate ?? body.flag_keys;
  const personProperties = object(body.person_properties ?? body.$properties);
  return {
    distinctId: distinctId.slice(0, MAX_DISTINCT_ID_LENGTH),
    groups,
    personProperties,
    groupProperties,
    anonDistinctId: text(body.$anon_distinct_id),
    deviceId: text(body.$device_id) ?? text(personProperties.$device_id),
    geoipDisable: truthy(body.geoip_disable),
    disableFlags: truthy(body.disable_flags),
    flagKeys: Array.isArray(keys) ? keys.filter((key): key is string => typeof key === 'string') : null,
    location,
  };
}
