/**
 * What an idle server lets go (app.ts, util/idle-collect.ts): the person cache, the flush
 * records' arena and SQLite's page cache. Events after the release must land as before it: the
 * same persons (loaded from the store again), their properties merged, every event stored with
 * its properties (its record in the arena's new memory), the event store's mirror in step.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { assertMirrorMatches, capture, eventsByUuid, newUuid, personsByDistinctId, sleep, stopAndRead } from '../helpers/ingest.js';
import { startServer, type TestServer } from '../helpers/server.js';

const IDLE_LINE = 'idle: caches let go, heap compacted';
const count = (text: string) => text.split(IDLE_LINE).length - 1;

let server: TestServer;

before(async () => {
  server = await startServer({ env: { SIGHTLINE_GEOIP: 'false', SIGHTLINE_LOG_LEVEL: 'debug' } });
});
after(async () => {
  await server?.stop();
});

type Event = { event: string; distinct_id: string; uuid: string; properties: Record<string, unknown> };
const ev = (event: string, distinctId: string, properties: Record<string, unknown> = {}): Event => ({ event, distinct_id: distinctId, uuid: newUuid(), properties });

/** Sends, then waits until the event store holds the events (so the arena's slices are all back). */
async function sendAndStore(events: Event[]): Promise<void> {
  await capture(server, '/batch/', { api_key: server.projectKey, batch: events });
  const response = await server.api('/api/projects/@current/events/?limit=1');
  assert.equal(response.status, 200);
}

/** Waits for an idle release that starts after this call (2 s after the start, else 30 s after the last request). */
async function nextIdleRelease(): Promise<void> {
  const seen = count(server.output());
  const deadline = Date.now() + 45_000;
  while (count(server.output()) === seen) {
    assert.ok(Date.now() < deadline, 'no idle release within 45 s');
    await sleep(200);
  }
}

test('events after an idle release land on the same persons, with every property', { timeout: 120_000 }, async () => {
  const first = [
    ev('$pageview', 'anon-i1', { $set: { anon_prop: 'a' }, $set_once: { first_seen_as: 'anon' }, n: 1 }),
    ev('signed up', 'user-i1', { $set: { plan: 'free' }, n: 2 }),
    ev('$pageview', 'solo-i1', { $set: { visits: 1 }, n: 3 }),
  ];
  await sendAndStore(first);
  await nextIdleRelease();
  const second = [
    ev('$identify', 'user-i1', { $anon_distinct_id: 'anon-i1', $set: { plan: 'pro' }, $set_once: { first_seen_as: 'ignored' }, n: 4 }),
    ev('$pageview', 'solo-i1', { $set: { visits: 2 }, n: 5, big: 'x'.repeat(20_000) }),
  ];
  await sendAndStore(second);
  await nextIdleRelease();
  const third = [ev('after', 'anon-i1', { n: 6 }), ev('after', 'solo-i1', { $set_once: { visits: 99 }, n: 7 })];
  await sendAndStore(third);

  const snap = await stopAndRead(server);
  const byUuid = eventsByUuid(snap);
  for (const e of [...first, ...second, ...third]) {
    const stored = byUuid.get(e.uuid);
    assert.ok(stored, `event ${e.event} (n=${e.properties.n}) stored`);
    assert.equal(stored.properties.n, e.properties.n);
    if (e.properties.big) assert.equal(stored.properties.big, e.properties.big);
  }
  assert.equal(snap.events.length, 7);
  const persons = personsByDistinctId(snap);
  const user = persons.get('user-i1')!;
  assert.ok(user, 'user-i1 has a person');
  assert.equal(persons.get('anon-i1')?.uuid, user.uuid, 'the anonymous person was merged into the user');
  assert.deepEqual([...user.distinct_ids].sort(), ['anon-i1', 'user-i1']);
  assert.equal(user.properties.plan, 'pro');
  assert.equal(user.properties.anon_prop, 'a');
  assert.equal(user.properties.first_seen_as, 'anon');
  const solo = persons.get('solo-i1')!;
  assert.equal(solo.properties.visits, 2, '$set after the release updated the stored person; $set_once left it');
  assert.equal(snap.persons.length, 2);
  await assertMirrorMatches(server.dataDir, snap);
});
