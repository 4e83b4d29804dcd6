/**
 * Shared by the official-SDK tests (sdk-*.test.ts): the flags they configure and what those flags
 * must answer (computed here independently of src/flags), request counts from /metrics, the
 * events API with a fallback to the stores, and "every event the SDK sent is stored once".
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';

import type { TestServer } from './server.js';

// ---------------------------------------------------------------------------------------------
// Flags

export const BOOL_PAYLOAD = { color: 'blue' };
export const VARIANT_PAYLOADS: Record<string, unknown> = { control: { variant: 'control' }, test: { variant: 'test', n: 1 } };

/** The four flags every SDK test creates through the management API (PostHog's request shape). */
export const FLAG_DEFINITIONS = [
  {
    key: 'sdk-bool',
    name: 'Everyone, with a payload',
    active: true,
    filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: JSON.stringify(BOOL_PAYLOAD) } },
  },
  {
    key: 'sdk-half',
    name: 'Half of the users',
    active: true,
    filters: { groups: [{ properties: [], rollout_percentage: 50 }] },
  },
  {
    key: 'sdk-multi',
    name: 'Two variants with payloads',
    active: true,
    filters: {
      groups: [{ properties: [], rollout_percentage: 100 }],
      multivariate: { variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }] },
      payloads: Object.fromEntries(Object.entries(VARIANT_PAYLOADS).map(([k, v]) => [k, JSON.stringify(v)])),
    },
  },
  {
    key: 'sdk-targeted',
    name: 'Pro plan only',
    active: true,
    filters: { groups: [{ properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }], rollout_percentage: 100 }] },
  },
];
export const FLAG_KEYS = FLAG_DEFINITIONS.map((f) => f.key);

/** PostHog's bucketing hash (first 15 hex digits of sha1, scaled to [0, 1]). */
export function flagHash(key: string, distinctId: string, salt = ''): number {
  const hex = createHash('sha1').update(`${key}.${distinctId}${salt}`, 'utf8').digest('hex');
  return parseInt(hex.slice(0, 15), 16) / 0xfffffffffffffff;
}

export interface ExpectedFlags {
  values: Record<string, boolean | string>;
  payloads: Record<string, unknown>;
}

/** What FLAG_DEFINITIONS must answer for a user with (or without) a `plan` person property. */
export function expectedFlags(distinctId: string, plan?: string): ExpectedFlags {
  const variant = flagHash('sdk-multi', distinctId, 'variant') < 0.5 ? 'control' : 'test';
  return {
    values: {
      'sdk-bool': true,
      'sdk-half': flagHash('sdk-half', distinctId) <= 0.5,
      'sdk-multi': variant,
      'sdk-targeted': plan === 'pro',
    },
    payloads: { 'sdk-bool': BOOL_PAYLOAD, 'sdk-multi': VARIANT_PAYLOADS[variant] },
  };
}

/**
 * Creates FLAG_DEFINITIONS with the personal key. Returns null on success, else a precise
 * description of the failing request, so flag tests can fail with it while capture tests go on.
 */
export async function createFlags(server: TestServer): Promise<string | null> {
  for (const flag of FLAG_DEFINITIONS) {
    const response = await server.api('/api/projects/@current/feature_flags/', { method: 'POST', body: flag });
    const text = await response.text();
    if (response.status !== 201 && response.status !== 200) {
      return `POST /api/projects/@current/feature_flags/ ${JSON.stringify(flag)} → expected 201, got ${response.status} ${text.slice(0, 300)}`;
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Metrics and polling

export interface RequestCount {
  method: string;
  route: string;
  status: string;
  count: number;
}

/** Every node's /metrics text, one after another (each process counts only what it served). */
async function metricsOfEveryNode(server: TestServer): Promise<string> {
  const texts = await Promise.all(server.nodeUrls.map(async (url) => (await fetch(`${url}/metrics`)).text()));
  return texts.join('\n');
}

/** Every `sightline_http_requests_total` series from /metrics (a series per node when there are two). */
export async function requestCounts(server: TestServer): Promise<RequestCount[]> {
  const text = await metricsOfEveryNode(server);
  const out: RequestCount[] = [];
  for (const line of text.split('\n')) {
    const match = /^sightline_http_requests_total\{([^}]*)\} (\S+)$/.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries([...match[1].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    out.push({ method: labels.method, route: labels.route, status: labels.status, count: Number(match[2]) });
  }
  return out;
}

export async function countRequests(server: TestServer, match: (c: RequestCount) => boolean): Promise<number> {
  return (await requestCounts(server)).filter(match).reduce((sum, c) => sum + c.count, 0);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `probe` every `intervalMs` until it returns a truthy value; fails with `message` on timeout. */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  message: string | (() => string | Promise<string>),
  timeoutMs = 8000,
  intervalMs = 50,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms: ${typeof message === 'string' ? message : await message()}`);
    await sleep(intervalMs);
  }
}

// ---------------------------------------------------------------------------------------------
// What was sent, what was stored

/** One event as an SDK put it on the wire (distinct_id top-level for node, in properties for js). */
export interface SentEvent {
  uuid: string;
  event: string;
  distinct_id: string;
  timestamp?: string;
  properties: Record<string, any>;
}

/** Minimal stored-event shape shared by the events API rows and readStores(). */
export interface StoredRow {
  uuid: string;
  event: string;
  distinct_id: string;
  timestamp: string;
  properties: Record<string, any>;
  elements_chain: string;
}

export function toSent(raw: Record<string, any>): SentEvent {
  const properties = raw.properties ?? {};
  // posthog-node reports its queued messages, where the timestamp is still a Date.
  const timestamp = raw.timestamp instanceof Date ? raw.timestamp.toISOString() : raw.timestamp;
  return { uuid: String(raw.uuid), event: raw.event, distinct_id: String(raw.distinct_id ?? properties.distinct_id), timestamp, properties };
}

/** A captured request body (gzip, base64 form, or JSON) → its events. */
export function decodeCaptureBody(body: Buffer): Record<string, any>[] {
  let bytes = body;
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = gunzipSync(bytes);
  let text = bytes.toString('utf8');
  if (/^(data|compression|ver)=/.test(text)) {
    const data = new URLSearchParams(text).get('data') ?? '';
    const decoded = Buffer.from(data, 'base64');
    text = (decoded[0] === 0x1f && decoded[1] === 0x8b ? gunzipSync(decoded) : decoded).toString('utf8');
  }
  const parsed = JSON.parse(text);
  if (Array.isArray(parsed)) return parsed;
  return Array.isArray(parsed.batch) ? parsed.batch : [parsed];
}

/**
 * Events through `GET /api/projects/@current/events/` (all pages), or null while that route does
 * not exist yet (404 from the router), so callers fall back to the stores.
 */
export async function eventsViaApi(server: TestServer): Promise<StoredRow[] | null> {
  let path = '/api/projects/@current/events/?limit=1000&after=2000-01-01T00:00:00Z';
  const rows: StoredRow[] = [];
  for (let page = 0; page < 100; page++) {
    const response = await server.api(path);
    const text = await response.text();
    if (response.status === 404 && page === 0 && text.includes('Not found: GET')) return null;
    assert.equal(response.status, 200, `GET ${path} → ${response.status} ${text.slice(0, 300)}`);
    const body = JSON.parse(text);
    assert.ok(Array.isArray(body.results), `GET ${path}: no results array in ${text.slice(0, 300)}`);
    for (const r of body.results) {
      rows.push({
        uuid: r.id,
        event: r.event,
        distinct_id: r.distinct_id,
        timestamp: r.timestamp,
        properties: typeof r.properties === 'string' ? JSON.parse(r.properties) : r.properties,
        elements_chain: r.elements_chain ?? '',
      });
    }
    if (!body.next) return rows;
    const next = new URL(body.next, server.url);
    path = next.pathname + next.search;
  }
  assert.fail('events API: more than 100 pages');
}

/** How many events named `event` the events API lists, or null while that route does not exist. */
export async function storedCount(server: TestServer, event: string): Promise<number | null> {
  const path = `/api/projects/@current/events/?event=${encodeURIComponent(event)}&limit=100&after=2000-01-01T00:00:00Z`;
  const response = await server.api(path);
  const text = await response.text();
  if (response.status === 404 && text.includes('Not found: GET')) return null;
  assert.equal(response.status, 200, `GET ${path} → ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text).results.length;
}

/**
 * Waits until events sent without a visible response (sendBeacon from a leaving page) are
 * stored: each of `names` listed by the events API, or, while that API is missing, until the
 * ingested-events counter has been still for half a second. Counting HTTP answers instead would
 * race: a leaving page aborts its in-flight XHRs, and an aborted request is never answered.
 */
export async function waitForStored(server: TestServer, names: string[], diagnostics: () => string): Promise<void> {
  if ((await storedCount(server, names[0])) !== null) {
    await waitFor(
      async () => {
        for (const name of names) if (((await storedCount(server, name)) ?? 0) < 1) return false;
        return true;
      },
      () => `not all of ${JSON.stringify(names)} were stored; ${diagnostics()}`,
    );
    return;
  }
  const ingested = async () => [...(await metricsOfEveryNode(server)).matchAll(/^sightline_events_ingested_total (\S+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
  let last = await ingested();
  let stillSince = Date.now();
  await waitFor(
    async () => {
      const now = await ingested();
      if (now !== last) [last, stillSince] = [now, Date.now()];
      return Date.now() - stillSince >= 500;
    },
    'ingestion never went quiet',
  );
}

/**
 * Every sent event is stored exactly once with its name, distinct id and (within `toleranceMs`,
 * for clock-skew correction) its timestamp; no uuid is stored twice. Returns stored rows by uuid.
 */
export function assertStoredOnce(stored: StoredRow[], sent: SentEvent[], where: string, toleranceMs = 2000): Map<string, StoredRow> {
  const byUuid = new Map<string, StoredRow>();
  const counts = new Map<string, number>();
  for (const row of stored) {
    counts.set(row.uuid, (counts.get(row.uuid) ?? 0) + 1);
    byUuid.set(row.uuid, row);
  }
  const twice = [...counts].filter(([, n]) => n > 1);
  assert.deepEqual(twice, [], `${where}: uuids stored more than once (uuid, times)`);
  const missing = sent.filter((e) => !byUuid.has(e.uuid));
  assert.deepEqual(missing.map((e) => `${e.event} ${e.uuid}`), [], `${where}: sent events not stored`);
  for (const e of sent) {
    const row = byUuid.get(e.uuid)!;
    assert.equal(row.event, e.event, `${where}: event name of ${e.uuid}`);
    assert.equal(row.distinct_id, e.distinct_id, `${where}: distinct_id of ${e.event} ${e.uuid}`);
    if (e.timestamp) {
      const delta = Math.abs(Date.parse(row.timestamp) - Date.parse(e.timestamp));
      assert.ok(delta <= toleranceMs, `${where}: ${e.event} ${e.uuid} sent with timestamp ${e.timestamp}, stored ${row.timestamp}`);
    }
  }
  return byUuid;
}
