/**
 * A person's data export (docs/persons.md, "Export"): the person and every one of their events
 * (all distinct ids, merged ones too), as JSON or CSV; nobody else's events.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { expectError, expectOk, ingest } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
const BASE = '/api/projects/@current/persons/';

before(async () => {
  server = await startServer();
  await ingest(server, [
    { event: 'anon_view', distinct_id: 'anon-1', properties: { n: 0 } },
    { event: '$identify', distinct_id: 'dana', properties: { $anon_distinct_id: 'anon-1', $set: { email: 'dana@example.com' } } },
    ...Array.from({ length: 1500 }, (_, i) => ({ event: 'clicked', distinct_id: 'dana', properties: { n: i + 1, note: i === 7 ? '=cmd, "quoted"' : 'x' } })),
    { event: 'clicked', distinct_id: 'someone-else' },
  ]);
});
after(async () => {
  await server.stop();
});

test('JSON: the person and every event of theirs, newest first', async () => {
  const [dana] = (await expectOk(await server.api(`${BASE}?distinct_id=dana`))).results;
  const response = await server.api(`${BASE}${dana.id}/export/`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type')!, /application\/json/);
  assert.match(response.headers.get('content-disposition')!, /attachment; filename="person-\d+\.json"/);
  const body = await response.json();
  assert.equal(body.person.uuid, dana.uuid);
  assert.equal(body.person.properties.email, 'dana@example.com');
  assert.equal(body.events.length, 1502);
  assert.deepEqual(new Set(body.events.map((e: any) => e.distinct_id)), new Set(['dana', 'anon-1']));
  const timestamps = body.events.map((e: any) => e.timestamp);
  assert.deepEqual(timestamps, [...timestamps].sort().reverse());
  assert.equal(new Set(body.events.map((e: any) => e.id)).size, 1502);
});

test('CSV: the person line, then the events with properties flattened', async () => {
  const [dana] = (await expectOk(await server.api(`${BASE}?distinct_id=dana`))).results;
  const response = await server.api(`${BASE}${dana.uuid}/export/?format=csv`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type')!, /text\/csv/);
  const text = await response.text();
  const [personPart, eventsPart] = text.split('\r\n\r\n');
  const personLines = personPart.split('\r\n');
  assert.equal(personLines[0], 'person_id,uuid,name,distinct_ids,created_at,is_identified,properties');
  assert.ok(personLines[1].startsWith(`${dana.id},${dana.uuid},dana@example.com,`));
  const eventLines = eventsPart.split('\r\n').filter(Boolean);
  assert.ok(eventLines[0].startsWith('id,event,distinct_id,timestamp,person_id'));
  assert.equal(eventLines.length, 1 + 1502);
  assert.ok(text.includes(`"'=cmd, ""quoted"""`), 'cells are quoted and guarded against formulas');
  assert.ok(!text.includes('someone-else'));
});

test('unknown person 404, bad format 400', async () => {
  await expectError(await server.api(`${BASE}999999/export/`), 404, 'not_found');
  const [dana] = (await expectOk(await server.api(`${BASE}?distinct_id=dana`))).results;
  const response = await server.api(`${BASE}${dana.id}/export/?format=xml`);
  assert.equal(response.status, 400);
});
