import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server.stop();
});

test('GET /_health answers 200 once the service accepts traffic', async () => {
  const response = await fetch(`${server.url}/_health`);
  assert.equal(response.status, 200);
  const { log_pending_messages: pending, log_partitions_owned: owned, ...body } = (await response.json()) as Record<string, unknown>;
  assert.deepEqual(body, { status: 'ok', ingestion: 'ok', event_store_writes: 'ok', event_store_lag_events: 0 });
  if (server.storeEnv.SIGHTLINE_NATS_URL) {
    // The NATS log's backlog, and the partitions the answering node consumes.
    assert.equal(typeof pending, 'number');
    assert.ok(Array.isArray(owned) && owned.every((p) => Number.isInteger(p)), `log_partitions_owned: ${JSON.stringify(owned)}`);
  } else {
    assert.deepEqual([pending, owned], [undefined, undefined], 'the local flush log has no backlog to show');
  }
});

test('GET /_ready reports both stores reachable', async () => {
  const response = await fetch(`${server.url}/_ready`);
  assert.equal(response.status, 200);
  const body = (await response.json()) as Record<string, string>;
  assert.equal(body.meta_store, 'ok');
  assert.equal(body.event_store, 'ok');
});

test('GET /metrics exposes Prometheus text with ingestion metrics', async () => {
  const response = await fetch(`${server.url}/metrics`);
  assert.equal(response.status, 200);
  const text = await response.text();
  assert.match(text, /sightline_events_ingested_total/);
  assert.match(text, /sightline_store_size_bytes\{store="events"\}/);
});

test('SIGTERM exits 0', async () => {
  const other = await startServer();
  assert.equal(await other.stop(), 0);
});
