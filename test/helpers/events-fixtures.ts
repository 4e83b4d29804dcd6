/**
 * The events-API fixture: a server without the per-key rate limit and a small set of events
 * with known uuids, timestamps relative to the start of the run, persons (one merged after the
 * fact) and an autocapture chain. Each event carries its label in `properties.n`.
 */
import assert from 'node:assert/strict';
import { v7 as uuidv7 } from 'uuid';
import { expectOk, q } from './api-fixtures.js';
import { startServer, type TestServer } from './server.js';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

export interface FixtureEvent {
  n: string;
  event: string;
  distinct_id: string;
  ago: number;
  properties?: Record<string, unknown>;
  elements_chain?: string;
}

export const CHAIN = 'a.btn.primary:attr__href="/buy"attr_id="buy"href="/buy"nth-child="2"nth-of-type="1"text="Buy \\"now\\"";div.row:nth-child="1"nth-of-type="1"';

export const FIXTURE: FixtureEvent[] = [
  { n: 'E1', event: '$pageview', distinct_id: 'alice', ago: 1 * HOUR, properties: { $browser: 'Chrome', price: 10, plan: 'pro', url: 'https://a.com/x', signup_at: '2024-01-01T00:00:00Z' } },
  { n: 'E2', event: '$pageview', distinct_id: 'bob', ago: 3 * HOUR, properties: { $browser: 'Firefox', price: 25.5, plan: 'free', signup_at: '2025-06-01T00:00:00Z' } },
  { n: 'E3', event: 'signup', distinct_id: 'carol', ago: 30 * HOUR, properties: { $browser: 'Safari', plan: 'pro', note: 'Hello, "World"\nline 2' } },
  { n: 'E4', event: 'purchase', distinct_id: 'alice', ago: 5 * DAY, properties: { price: 99, currency: 'USD', is_first: true, tags: ['x', 'y'] } },
  { n: 'E5', event: '$autocapture', distinct_id: 'dave', ago: 10 * DAY, properties: { $browser: 'Chrome', formula: '=SUM(A1)', price: '7' }, elements_chain: CHAIN },
  { n: 'E6', event: '$pageview', distinct_id: 'anon-xyz', ago: 2 * HOUR, properties: { $browser: 'Edge', 'odd key/~"x"': 'odd' } },
  { n: 'E8', event: '$pageview', distinct_id: 'erin', ago: 0.5 * HOUR, properties: { $browser: 'Chrome', plan: 'free' } },
];
/** Identifies erin and merges the earlier anonymous events into her (a later batch). */
export const IDENTIFY: FixtureEvent = { n: 'E7', event: '$identify', distinct_id: 'erin', ago: 1.5 * HOUR, properties: { $anon_distinct_id: 'anon-xyz', $set: { email: 'erin@example.com' } } };

export interface Fixture {
  server: TestServer;
  projectId: number;
  now: number;
  /** label → uuid */
  uuids: Map<string, string>;
  /** Labels of every fixture event, newest first. */
  all: string[];
  /** GET on the project's events route; `query` is appended as is. */
  events(query?: string, key?: string): Promise<Response>;
}

export const toBatchEvent = (e: FixtureEvent, now: number, uuid: string) => ({
  uuid,
  event: e.event,
  distinct_id: e.distinct_id,
  timestamp: new Date(now - e.ago).toISOString(),
  properties: { n: e.n, ...e.properties },
  ...(e.elements_chain && { elements_chain: e.elements_chain }),
});

export async function post(server: TestServer, batch: unknown[], apiKey = server.projectKey): Promise<void> {
  await expectOk(await server.post('/batch/', { api_key: apiKey, batch }));
}

export async function startFixture(): Promise<Fixture> {
  const server = await startServer({ env: { SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', SIGHTLINE_GEOIP: 'false' } });
  const now = Date.now();
  const uuids = new Map([...FIXTURE, IDENTIFY].map((e) => [e.n, uuidv7()]));
  // The first value seen decides a property's type: price is Numeric. A partitioned log (NATS)
  // processes one batch's distinct ids in any order, so the string price comes in a later batch,
  // after a read (which waits until what was captured is processed).
  const later = (e: FixtureEvent) => typeof e.properties?.price === 'string';
  await post(server, FIXTURE.filter((e) => !later(e)).map((e) => toBatchEvent(e, now, uuids.get(e.n)!)));
  await expectOk(await server.api('/api/projects/@current/'));
  await post(server, [...FIXTURE.filter(later), IDENTIFY].map((e) => toBatchEvent(e, now, uuids.get(e.n)!)));
  const project = await expectOk(await server.api('/api/projects/@current/'));
  const all = [...FIXTURE, IDENTIFY].sort((a, b) => a.ago - b.ago).map((e) => e.n);
  return {
    server,
    projectId: project.id,
    now,
    uuids,
    all,
    events: (query = '', key) => server.api(`/api/projects/${project.id}/events/${query}`, { key }),
  };
}

/** Labels of a result page, in order. */
export const labels = (body: any): string[] => body.results.map((r: any) => r.properties.n);

/** `?name=<JSON or text>&…` from an object, values encoded as the API expects. */
export const qs = (params: Record<string, unknown>) =>
  `?${Object.entries(params)
    .map(([k, v]) => `${k}=${q(v)}`)
    .join('&')}`;

/** Minimal RFC 4180 reader for checking exports. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(cell), (cell = '');
    else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell), rows.push(row), (row = []), (cell = ''), i++;
    } else cell += c;
  }
  assert.equal(cell + row.join(''), '', 'the last line ends with CRLF');
  return rows;
}
