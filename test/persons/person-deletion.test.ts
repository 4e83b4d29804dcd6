/**
 * Person deletion that really deletes (docs/persons.md, "Deletion"): after the 202's deletion has
 * finished, the events API, /flags, the persons API and the event store hold nothing of the
 * person; a later event of the same distinct id makes a new person; the activity log says who
 * deleted whom without personal data; bulk_delete's limits. The race with ingestion and a SIGKILL
 * is in person-deletion-crash.test.ts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { expectError, expectOk, ingest, q } from '../helpers/api-fixtures.js';
import { createFlag, everyone, evaluate } from '../helpers/flags.js';
import { assertMirrorMatches, stopAndRead } from '../helpers/ingest.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { waitForDeletion } from './deletion-helpers.js';

let server: TestServer;
const BASE = '/api/projects/@current/persons/';
const MARKER = 'victim-marker-7f3a9c1e';
/** The file's bytes are searched only where the events live in this server's DuckDB file (not on ClickHouse). */
const EVENTS_IN_OWN_FILE = !['clickhouse', 'chdb'].includes(process.env.SIGHTLINE_TEST_EVENT_STORE ?? '');
let victimDeletion = '';

before(async () => {
  server = await startServer({ env: { SIGHTLINE_DELETION_COMPACTION_DELAY_SECONDS: '0' } });
  await ingest(server, [
    { event: '$identify', distinct_id: 'victim', properties: { $anon_distinct_id: 'victim-anon', $set: { email: 'victim@example.com', secret: MARKER } } },
    ...Array.from({ length: 40 }, (_, i) => ({ event: 'clicked', distinct_id: i % 2 ? 'victim' : 'victim-anon', properties: { marker: MARKER, i } })),
    ...Array.from({ length: 10 }, (_, i) => ({ event: 'clicked', distinct_id: 'bystander', properties: { i, $set: { email: 'by@example.com' } } })),
  ]);
  await createFlag(server, everyone('victim-flag', [{ key: 'email', value: 'victim@example.com', type: 'person' }]));
});
after(async () => {
  if (server.process.exitCode === null) await server.stop();
});

const events = async (query: string) => (await expectOk(await server.api(`/api/projects/@current/events/?${query}`))).results;
const flagFor = async (distinctId: string) => (await evaluate(server, '/flags/?v=2', { token: server.projectKey, distinct_id: distinctId })).flags['victim-flag']?.enabled;

test('DELETE ?delete_events=true erases the person and their events everywhere; a later event makes a new person', async () => {
  if (EVENTS_IN_OWN_FILE) {
    // First, that the search of the file's bytes used at the end can see the marker at all.
    await server.stop();
    assert.equal(fs.readFileSync(path.join(server.dataDir, 'events.duckdb')).includes(Buffer.from(MARKER)), true, 'the marker is not readable in the file');
    server = await startServer({ dataDir: server.dataDir, projectKey: server.projectKey, personalKey: server.personalKey, env: { SIGHTLINE_DELETION_COMPACTION_DELAY_SECONDS: '0' } });
  }
  const [victim] = (await expectOk(await server.api(`${BASE}?distinct_id=victim`))).results;
  assert.equal(await flagFor('victim'), true);
  assert.equal((await events('distinct_id=victim')).length, 21);

  const response = await server.api(`${BASE}${victim.id}/?delete_events=true`, { method: 'DELETE' });
  const body = await expectOk(response, 202);
  assert.equal(body.person_uuid, victim.uuid);
  assert.equal(body.delete_events, true);
  assert.equal(response.headers.get('location'), body.status_url);
  victimDeletion = body.status_url;
  const finished = await waitForDeletion(server, body.status_url);
  assert.ok(['finished', 'purged'].includes(finished.status));
  assert.ok(finished.finished_at >= finished.requested_at);

  await expectError(await server.api(`${BASE}${victim.id}/`), 404, 'not_found');
  await expectError(await server.api(`${BASE}${victim.uuid}/`), 404, 'not_found');
  assert.deepEqual((await expectOk(await server.api(`${BASE}?search=victim`))).results, []);
  assert.deepEqual(await events('distinct_id=victim'), []);
  assert.deepEqual(await events('distinct_id=victim-anon'), []);
  assert.deepEqual(await events(`person_id=${victim.uuid}`), []);
  assert.deepEqual(await events(`properties=${q([{ key: 'marker', value: MARKER, type: 'event' }])}`), []);
  const values = await expectOk(await server.api('/api/projects/@current/events/values/?key=marker'));
  assert.deepEqual(values, []);
  assert.equal(await flagFor('victim'), false);
  assert.equal((await events('distinct_id=bystander')).length, 10, "others' events stay");

  // Deleting again is a 404; the deletion's status stays readable.
  await expectError(await server.api(`${BASE}${victim.uuid}/`, { method: 'DELETE' }), 404, 'not_found');

  // The same distinct id later: a new person, with a new integer id and none of the old properties.
  await ingest(server, [{ event: 'came_back', distinct_id: 'victim', properties: { $set: { plan: 'free' } } }]);
  const [reborn] = (await expectOk(await server.api(`${BASE}?distinct_id=victim`))).results;
  assert.notEqual(reborn.id, victim.id);
  assert.deepEqual(reborn.distinct_ids, ['victim']);
  assert.equal(reborn.properties.secret, undefined);
  assert.equal(reborn.properties.plan, 'free');
  assert.deepEqual((await events('distinct_id=victim')).map((e: any) => e.event), ['came_back']);
});

test('the activity log records who deleted which person, with no personal data', async () => {
  const log = await expectOk(await server.api(`${BASE}activity/`));
  assert.equal(log.count, 1);
  const [entry] = log.results;
  assert.equal(entry.activity, 'deleted');
  assert.equal(entry.scope, 'Person');
  assert.equal(typeof entry.user.id, 'number');
  assert.equal(entry.detail.delete_events, true);
  assert.ok(!Number.isNaN(Date.parse(entry.created_at)));
  const text = JSON.stringify(log);
  for (const pii of ['victim', 'example.com', MARKER]) assert.ok(!text.includes(pii), `activity log carries ${pii}`);
  const one = await expectOk(await server.api(`${BASE}${entry.item_id}/activity/`));
  assert.equal(one.count, 1);
});

test('bulk_delete: by ids or distinct ids, at most 1000, and bad input is a 400', async () => {
  await ingest(server, ['b1', 'b2', 'b3'].map((id) => ({ event: 'x', distinct_id: id })));
  const persons = (await expectOk(await server.api(`${BASE}?search=b1`))).results.concat((await expectOk(await server.api(`${BASE}?search=b2`))).results);
  await expectError(await server.api(`${BASE}bulk_delete/`, { method: 'POST', body: {} }), 400, 'required', 'ids');
  await expectError(await server.api(`${BASE}bulk_delete/`, { method: 'POST', body: { ids: Array.from({ length: 1001 }, (_, i) => i + 1) } }), 400, 'max_length', 'ids');
  await expectError(await server.api(`${BASE}bulk_delete/`, { method: 'POST', body: { distinct_ids: Array.from({ length: 1001 }, (_, i) => `d${i}`) } }), 400, 'max_length', 'distinct_ids');
  await expectError(await server.api(`${BASE}bulk_delete/`, { method: 'POST', body: { ids: ['nope'] } }), 400, 'invalid_input', 'ids');
  await expectError(await server.api(`${BASE}bulk_delete/`, { method: 'POST', body: { ids: [1], delete_events: 'maybe' } }), 400, 'invalid_input', 'delete_events');

  const byIds = await expectOk(await server.api(`${BASE}bulk_delete/`, { method: 'POST', body: { ids: [persons[0].id, persons[1].uuid], delete_events: true } }), 202);
  assert.equal(byIds.deletions.length, 2);
  const byDistinct = await expectOk(await server.api(`${BASE}bulk_delete/`, { method: 'POST', body: { distinct_ids: ['b3', 'no-such-id'] } }), 202);
  assert.equal(byDistinct.deletions.length, 1);
  assert.equal(byDistinct.deletions[0].delete_events, false);
  for (const d of [...byIds.deletions, ...byDistinct.deletions]) await waitForDeletion(server, d.status_url);
  for (const id of ['b1', 'b2', 'b3']) assert.deepEqual((await expectOk(await server.api(`${BASE}?distinct_id=${id}`))).results, []);
  assert.deepEqual(await events('distinct_id=b1'), []);
  assert.equal((await events('distinct_id=b3')).length, 1, 'without delete_events the events stay');
  await expectError(await server.api(`${BASE}deletions/999999/`), 404, 'not_found');
});

test('after the compaction, the stores (and the DuckDB file) hold none of the deleted events', async () => {
  const purged = await waitForDeletion(server, victimDeletion, 'purged');
  assert.ok(purged.purged_at >= purged.finished_at);
  const stored = await stopAndRead(server);
  assert.equal(stored.events.filter((e) => JSON.stringify(e).includes(MARKER)).length, 0);
  assert.equal(stored.persons.filter((p) => JSON.stringify(p).includes(MARKER)).length, 0);
  await assertMirrorMatches(server.dataDir, stored);
  if (!EVENTS_IN_OWN_FILE) return;
  // The file's bytes: a delete and a checkpoint leave the rows in freed blocks; the compaction
  // rewrote the file.
  const file = fs.readFileSync(path.join(server.dataDir, 'events.duckdb'));
  assert.equal(file.includes(Buffer.from(MARKER)), false, 'the marker is still in events.duckdb');
});
