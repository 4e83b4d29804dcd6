/**
 * Data retention (SIGHTLINE_RETENTION_DAYS): a restart with retention on deletes the events
 * older than the period in every project, keeps the newer ones and the persons, forgets the
 * deleted events' uuids (a retry of one is stored again) and counts what it deleted.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createTenant } from '../helpers/api-fixtures.js';
import { metric, newUuid, waitFor } from '../helpers/robustness.js';
import { startServer, type TestServer } from '../helpers/server.js';

const DAY = 24 * 60 * 60 * 1000;
const servers: TestServer[] = [];

after(async () => {
  for (const server of servers) if (server.process.exitCode === null) await server.stop();
});

const start = async (options: Parameters<typeof startServer>[0]) => {
  const server = await startServer({ ...options, env: { SIGHTLINE_GEOIP: 'false', ...options?.env } });
  servers.push(server);
  return server;
};

const event = (uuid: string, name: string, daysAgo: number, properties: Record<string, unknown> = {}) => ({
  uuid,
  event: name,
  distinct_id: 'retained-user',
  timestamp: new Date(Date.now() - daysAgo * DAY).toISOString(),
  properties,
});

async function send(server: TestServer, projectKey: string, batch: unknown[]): Promise<void> {
  const response = await server.post('/batch/', { api_key: projectKey, batch });
  assert.equal(response.status, 200, await response.text());
}

/** Every stored event's (name, uuid) in a project, oldest included. */
async function stored(server: TestServer, key: string): Promise<{ event: string; id: string; person: any }[]> {
  const response = await server.api('/api/projects/@current/events/?after=2000-01-01&limit=100', { key });
  assert.equal(response.status, 200);
  return (await response.json()).results;
}

test('events older than the retention period are deleted at start-up, with their uuids; newer events and persons stay', async () => {
  const first = await start({});
  const other = await createTenant(first, 'retention-other');
  const old = newUuid();
  const ancient = newUuid();
  const recent = newUuid();
  const otherOld = newUuid();
  await send(first, first.projectKey, [
    event(old, 'old-event', 40, { $set: { plan: 'pro' } }),
    event(ancient, 'ancient-event', 400),
    event(recent, 'recent-event', 1),
  ]);
  await send(first, other.projectKey, [event(otherOld, 'other-old-event', 31)]);
  assert.equal((await stored(first, first.personalKey)).length, 3);
  assert.equal(await first.stop(), 0);

  const server = await start({
    dataDir: first.dataDir,
    projectKey: first.projectKey,
    personalKey: first.personalKey,
    env: { SIGHTLINE_RETENTION_DAYS: '30' },
  });
  await waitFor('the retention pass', async () => metric(await (await fetch(`${server.url}/metrics`)).text(), 'sightline_events_expired_total') === 3);
  assert.deepEqual(
    (await stored(server, server.personalKey)).map((e) => [e.event, e.id]),
    [['recent-event', recent]],
  );
  assert.deepEqual(await stored(server, other.ownerKey), []);
  assert.match(server.output(), /retention: deleted events older than the retention period/);

  // The deleted event's uuid is forgotten: sent again (now recent), it is stored; the kept
  // event's uuid still de-duplicates.
  await send(server, server.projectKey, [event(old, 'old-event-again', 0), event(recent, 'recent-event', 1)]);
  const events = await stored(server, server.personalKey);
  assert.deepEqual(
    events.map((e) => [e.event, e.id]),
    [
      ['old-event-again', old],
      ['recent-event', recent],
    ],
  );
  // The person the deleted event updated is kept, with its properties.
  assert.equal(events[0].person.properties.plan, 'pro');
  assert.equal(await server.stop(), 0);
});

test('SIGTERM during a pass stops it cleanly; the next start finishes the deletion', async () => {
  const first = await start({});
  const old = Array.from({ length: 30 }, () => Array.from({ length: 1000 }, (_, i) => event(newUuid(), 'old-bulk', 45 + (i % 10))));
  for (const batch of old) await send(first, first.projectKey, batch);
  assert.equal(await first.stop(), 0);

  const keys = { dataDir: first.dataDir, projectKey: first.projectKey, personalKey: first.personalKey, env: { SIGHTLINE_RETENTION_DAYS: '30' } };
  const interrupted = await start(keys);
  // The pass starts as the server does; stopping at once lands in it or just after it.
  assert.equal(await interrupted.stop(), 0);
  assert.match(interrupted.output(), /stopped cleanly/);

  const server = await start(keys);
  await waitFor('every old event deleted', async () => (await stored(server, server.personalKey)).length === 0);
  assert.equal(await server.stop(), 0);
});

test('a running server deletes events that arrived already too old at its next pass, and the events list count drops with them', async () => {
  const server = await start({ env: { SIGHTLINE_RETENTION_DAYS: '30', SIGHTLINE_RETENTION_INTERVAL_SECONDS: '2' } });
  const expired = async () => metric(await (await fetch(`${server.url}/metrics`)).text(), 'sightline_events_expired_total');
  const page = async () => {
    const response = await server.api('/api/projects/@current/events/?limit=10');
    assert.equal(response.status, 200);
    return (await response.json()) as { count: number; results: { event: string }[] };
  };
  await send(server, server.projectKey, [event(newUuid(), 'recent-event', 1)]);
  assert.equal((await page()).count, 1);

  // Counts are kept per filter and grown by later flushes, so the list must count the old event
  // before a pass deletes it: a pass may come in between, then the next old event is tried.
  let countedBefore: number | null = null;
  for (let attempt = 0; attempt < 5 && countedBefore === null; attempt++) {
    const before = await expired();
    await send(server, server.projectKey, [event(newUuid(), 'late-old-event', 45)]);
    const counted = (await page()).count;
    if (counted === 2 && (await expired()) === before) countedBefore = before;
    else await waitFor('a pass', async () => (await expired()) > before);
  }
  assert.notEqual(countedBefore, null, 'the list counted an old event before a pass deleted it');
  await waitFor('the next pass', async () => (await expired()) > countedBefore!);

  const after = await page();
  assert.deepEqual(after.results.map((e) => e.event), ['recent-event']);
  assert.equal(after.count, 1, 'the count forgets the deleted event');
  assert.equal(await server.stop(), 0);
});
