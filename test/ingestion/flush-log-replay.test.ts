/**
 * The flush log is where an acknowledged flush is durable; the metadata store applies it
 * without an fsync of its own. A power cut can therefore take the metadata store's newest
 * commits away while the log (synced before every answer) still has them. Simulated here: the
 * metadata database is swapped for a consistent copy taken before the last acknowledged
 * batches, then the service restarts and must replay those flushes into it (persons, merges,
 * uuids) so that nothing acknowledged is missing and a retry is not stored twice.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { backup, DatabaseSync } from '@photostructure/sqlite';

import { REPLAY_MESSAGE } from '../../src/ingestion/buffer.js';
import { assertMirrorMatches, capture, newUuid, personsByDistinctId, stopAndRead } from '../helpers/ingest.js';
import { startServer } from '../helpers/server.js';

const event = (name: string, distinctId: string, properties: Record<string, unknown> = {}) => ({
  event: name,
  distinct_id: distinctId,
  uuid: newUuid(),
  properties,
});

test('flushes the metadata store lost are replayed from the flush log at start-up', async () => {
  const first = await startServer();
  const before = [event('signed_up', 'anon-1', { $set: { plan: 'free' } }), event('$pageview', 'user-2')];
  await capture(first, '/batch/', { api_key: first.projectKey, batch: before });

  // A consistent copy of the metadata store as it is now (SQLite's online backup).
  const copy = path.join(first.dataDir, 'meta-copy.sqlite');
  const live = new DatabaseSync(path.join(first.dataDir, 'meta.sqlite'), { readOnly: true });
  await backup(live, copy);
  live.close();

  // Acknowledged after the copy: a merge, property changes, a new person.
  const after = [
    event('$identify', 'user-1', { $anon_distinct_id: 'anon-1', $set: { plan: 'pro', email: 'one@example.com' } }),
    event('$pageview', 'user-3', { $set_once: { first_page: '/pricing' } }),
  ];
  await capture(first, '/batch/', { api_key: first.projectKey, batch: after });
  await first.kill();

  // The power cut: the metadata store comes back without the commits after the copy.
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(path.join(first.dataDir, `meta.sqlite${suffix}`), { force: true });
  fs.renameSync(copy, path.join(first.dataDir, 'meta.sqlite'));

  const second = await startServer({ dataDir: first.dataDir, projectKey: first.projectKey, personalKey: first.personalKey });
  assert.match(second.output(), new RegExp(REPLAY_MESSAGE));
  // The SDK retries the second batch (say its answer was lost): already stored, so dropped.
  await capture(second, '/batch/', { api_key: second.projectKey, batch: after });
  const stored = await stopAndRead(second);

  assert.deepEqual(stored.events.map((e) => e.uuid).sort(), [...before, ...after].map((e) => e.uuid).sort(), 'every event once');
  const persons = personsByDistinctId(stored);
  const merged = persons.get('user-1');
  assert.ok(merged, 'the merge was replayed');
  assert.equal(persons.get('anon-1')?.uuid, merged.uuid);
  assert.deepEqual([merged.properties.plan, merged.properties.email, merged.is_identified], ['pro', 'one@example.com', true]);
  assert.equal(persons.get('user-3')?.properties.first_page, '/pricing');
  assert.ok(stored.eventDefinitions.some((d) => d.name === '$identify'), 'definitions were replayed');
  await assertMirrorMatches(first.dataDir, stored);
  assert.deepEqual(fs.readdirSync(path.join(first.dataDir, 'flush-log')), [], 'a clean stop leaves no log segment behind');
});
