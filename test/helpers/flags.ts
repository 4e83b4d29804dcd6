/**
 * Helpers for the feature-flag integration tests: flags made through the management API,
 * persons and groups made through /batch/, and evaluation requests.
 */
import assert from 'node:assert/strict';
import { ingest } from './api-fixtures.js';
import type { TestServer } from './server.js';

export async function createFlag(server: TestServer, flag: Record<string, unknown>): Promise<any> {
  const response = await server.api('/api/projects/@current/feature_flags/', { method: 'POST', body: flag });
  const body = await response.json();
  assert.equal(response.status, 201, JSON.stringify(body));
  return body;
}

export async function patchFlag(server: TestServer, id: number, patch: Record<string, unknown>): Promise<any> {
  const response = await server.api(`/api/projects/@current/feature_flags/${id}/`, { method: 'PATCH', body: patch });
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  return body;
}

/** A flag on for everyone (optionally only for people matching `properties`). */
export const everyone = (key: string, properties: unknown[] = [], extra: Record<string, unknown> = {}) => ({
  key,
  filters: { groups: [{ properties, rollout_percentage: 100 }], ...extra },
});

/** POSTs an evaluation request and returns the 200 JSON answer. */
export async function evaluate(server: TestServer, pathAndQuery: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const response = await server.post(pathAndQuery, body, headers);
  const text = await response.text();
  assert.equal(response.status, 200, `POST ${pathAndQuery} → ${response.status} ${text}`);
  return JSON.parse(text);
}

/** `featureFlags` of `/decide?v=3` for one user. */
export async function decideFlags(server: TestServer, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  return (await evaluate(server, '/decide?v=3', { api_key: server.projectKey, ...body }, headers)).featureFlags;
}

export const identify = (server: TestServer, distinctId: string, set: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  ingest(server, [{ event: '$identify', distinct_id: distinctId, properties: { $set: set, ...extra } }]);

export const groupIdentify = (server: TestServer, type: string, key: string, set: Record<string, unknown>) =>
  ingest(server, [{ event: '$groupidentify', distinct_id: `$${type}_${key}`, properties: { $group_type: type, $group_key: key, $group_set: set } }]);
