/**
 * What the insight kinds' integration tests share: a server without the per-key rate limit,
 * events sent with explicit uuids and times, a query helper, and the generated persons of the
 * property tests (some anonymous ids merged into an identified person after the fact), around
 * DST changes of two zones.
 */

import fc from 'fast-check';
import { v7 as uuidv7 } from 'uuid';
import { expectOk } from './api-fixtures.js';
import { startServer, type TestServer } from './server.js';
import type { RefEvent } from '../unit/insights/reference/funnels.js';

export const startInsightsServer = () => startServer({ env: { SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', SIGHTLINE_GEOIP: 'false' } });

export interface SentEvent {
  uuid: string;
  event: string;
  distinct_id: string;
  timestamp: string;
  properties: Record<string, unknown>;
}

export const eventAt = (event: string, distinctId: string, at: number, properties: Record<string, unknown> = {}): SentEvent => ({
  uuid: uuidv7(),
  event,
  distinct_id: distinctId,
  timestamp: new Date(at).toISOString(),
  properties,
});

/** Ingests through /batch/ (answered after the commit, so queries right after see the events). */
export async function sendEvents(server: TestServer, batch: SentEvent[]): Promise<void> {
  if (batch.length > 0) await expectOk(await server.post('/batch/', { api_key: server.projectKey, batch }));
}

/** POST /query/ of one kind, computed afresh. */
export const queryOf = (server: TestServer, kind: string) => (q: Record<string, unknown>) =>
  server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind, ...q }, refresh: 'force_blocking' } });

export const setTimeZone = async (server: TestServer, timezone: string) => expectOk(await server.api('/api/projects/@current/', { method: 'PATCH', body: { timezone } }));

/** A moment next to each zone's DST change (UTC has none: a plain day). */
export const DST_MOMENTS = { 'Europe/Paris': Date.UTC(2025, 2, 30, 1), 'America/New_York': Date.UTC(2025, 10, 2, 6), UTC: Date.UTC(2025, 5, 1, 0) } as const;
export type Zone = keyof typeof DST_MOMENTS;
export const arbZone = fc.constantFrom<Zone>('UTC', 'Europe/Paris', 'America/New_York');

export type CaseOf<A> = A extends fc.Arbitrary<infer T> ? T : never;

/**
 * Up to `persons` identified ids `<prefix>u<i>` and as many anonymous ones `<prefix>anon<i>`;
 * `merged[i]` says anon i was merged into u i by an `$identify` sent after the other events.
 */
export function generatedPersons(prefix: string, persons: number, merged: boolean[]) {
  return {
    distinct: (who: number) => (who % 2 === 0 ? `${prefix}u${(who / 2) % persons}` : `${prefix}anon${((who - 1) / 2) % persons}`),
    personOf(id: string) {
      const anon = /anon(\d+)$/.exec(id);
      return anon && merged[Number(anon[1])] ? `${prefix}u${anon[1]}` : id;
    },
    identifies: (at: number) => merged.slice(0, persons).flatMap((m, i) => (m ? [eventAt('$identify', `${prefix}u${i}`, at, { $anon_distinct_id: `${prefix}anon${i}` })] : [])),
  };
}

/** The sent events as the reference implementations read them: persons after merges. */
export const asReferenceEvents = (sent: SentEvent[], personOf: (id: string) => string): RefEvent[] =>
  sent.map((e) => ({ uuid: e.uuid, event: e.event, person: personOf(e.distinct_id), ts: Date.parse(e.timestamp), properties: e.properties }));

/** fast-check hides a failing case's message behind its own; print it first. */
export const reportingFailures = <T>(check: (c: T) => Promise<void>) => async (c: T) => {
  try {
    await check(c);
  } catch (error) {
    console.error(String((error as Error).message).slice(0, 2000));
    throw error;
  }
};

