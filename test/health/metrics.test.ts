/**
 * Observability: /metrics (Prometheus text) counts requests by route and status,
 * events ingested and dropped by reason, times flushes in a histogram, and reports the
 * ingestion buffer's depth and the stores' sizes. Each is checked by moving it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { metric, newUuid, request, waitFor } from '../helpers/robustness.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;

before(async () => {
  server = await startServer({ env: { SIGHTLINE_GEOIP: 'false' } });
});

after(async () => {
  if (server) assert.equal(await server.stop(), 0);
});

async function scrape(): Promise<string> {
  const reply = await request(server, 'GET', '/metrics');
  assert.equal(reply.status, 200);
  assert.match(reply.headers.get('content-type') ?? '', /^text\/plain/);
  return reply.text;
}

const capture = (path: string, body: unknown) => request(server, 'POST', path, { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

test('requests are counted by method, route (the pattern, not the URL) and status', async () => {
  const before = await scrape();
  const count = (text: string, labels: Record<string, string>) => metric(text, 'sightline_http_requests_total', labels);
  assert.equal((await capture('/capture/', { api_key: server.projectKey, event: 'm', distinct_id: 'd' })).status, 200);
  assert.equal((await capture('/batch/', { api_key: server.projectKey, batch: [{ event: 'm', distinct_id: 'd' }] })).status, 200);
  assert.equal((await capture('/batch/', { api_key: 'phc_wrong', batch: [{ event: 'm', distinct_id: 'd' }] })).status, 401);
  assert.equal((await capture('/batch/', '{not json')).status, 400);
  assert.equal((await request(server, 'GET', '/api/projects/12345/', { headers: { authorization: `Bearer ${server.personalKey}` } })).status, 404);
  assert.equal((await request(server, 'GET', '/no/such/route')).status, 404);
  const after = await scrape();
  const delta = (labels: Record<string, string>) => count(after, labels) - count(before, labels);
  assert.equal(delta({ method: 'POST', route: '/capture', status: '200' }), 1);
  assert.equal(delta({ method: 'POST', route: '/batch', status: '200' }), 1);
  assert.equal(delta({ method: 'POST', route: '/batch', status: '401' }), 1);
  assert.equal(delta({ method: 'POST', route: '/batch', status: '400' }), 1);
  assert.equal(delta({ method: 'GET', route: '/api/projects/:id/', status: '404' }), 1, 'the route pattern, not the project id');
  assert.equal(delta({ route: 'unmatched', status: '404' }), 1);
  assert.match(after, /# TYPE sightline_http_requests_total counter/);
});

test('events ingested, and events dropped by reason', async () => {
  const before = await scrape();
  const batch = [
    { event: 'kept', distinct_id: 'd1', uuid: newUuid() },
    { event: 'kept', distinct_id: 'd2', uuid: newUuid() },
    { distinct_id: 'd3', properties: { nameless: true } },
    { event: 'no-distinct-id', properties: {} },
    { event: '', distinct_id: 'd4' },
  ];
  assert.equal((await capture('/batch/', { api_key: server.projectKey, batch })).status, 200, 'invalid events are dropped silently');
  // A resent event (same uuid) is dropped as a duplicate, not stored twice.
  assert.equal((await capture('/capture/', { api_key: server.projectKey, ...batch[0] })).status, 200);
  const after = await scrape();
  const delta = (name: string, labels: Record<string, string> = {}) => metric(after, name, labels) - metric(before, name, labels);
  assert.equal(delta('sightline_events_ingested_total'), 2);
  assert.equal(delta('sightline_events_dropped_total', { reason: 'missing_event_name' }), 2);
  assert.equal(delta('sightline_events_dropped_total', { reason: 'missing_distinct_id' }), 1);
  assert.ok(delta('sightline_events_dropped_total') >= 4, `dropped in all: ${delta('sightline_events_dropped_total')}`);
  assert.match(after, /# TYPE sightline_events_dropped_total counter/);
});

test('flush latency histogram, buffer depth and store sizes', async () => {
  const before = await scrape();
  for (let i = 0; i < 3; i++) {
    const batch = Array.from({ length: 200 }, (_, j) => ({ event: 'sized', distinct_id: `u${j % 20}`, properties: { i, j, text: 'x'.repeat(500) } }));
    assert.equal((await capture('/batch/', { api_key: server.projectKey, batch })).status, 200);
  }
  const after = await scrape();
  const flushes = metric(after, 'sightline_flush_duration_seconds_count') - metric(before, 'sightline_flush_duration_seconds_count');
  assert.ok(flushes >= 1, 'each acknowledged batch went through a timed flush');
  assert.ok(metric(after, 'sightline_flush_duration_seconds_sum') > metric(before, 'sightline_flush_duration_seconds_sum'));
  assert.match(after, /# TYPE sightline_flush_duration_seconds histogram/);
  // Cumulative buckets: non-decreasing, and +Inf holds every observation.
  const buckets = [...after.matchAll(/^sightline_flush_duration_seconds_bucket\{le="([^"]+)"\} (\d+)/gm)].map((m) => [m[1], Number(m[2])] as const);
  assert.ok(buckets.length >= 5, 'histogram buckets');
  for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i][1] >= buckets[i - 1][1], `bucket ${buckets[i][0]} < ${buckets[i - 1][0]}`);
  assert.deepEqual(buckets.at(-1), ['+Inf', metric(after, 'sightline_flush_duration_seconds_count')]);

  // Nothing is waiting once every request has been answered.
  assert.match(after, /^sightline_ingest_buffer_events 0$/m);
  assert.ok(metric(after, 'sightline_store_size_bytes', { store: 'meta' }) > 0, 'meta store size');
  // The event store's file is made by its first write (store/duckdb/threaded.ts), which the feed
  // may hold back for a few seconds to fill a row group.
  await waitFor('an events store size', async () => metric(await scrape(), 'sightline_store_size_bytes', { store: 'events' }) > 0, 20_000, 200);
  assert.equal(metric(after, 'sightline_flush_failures_total'), 0);
  // Standard process metrics ride along (RSS is what the soak benchmark watches).
  assert.ok(metric(after, 'process_resident_memory_bytes') > 0);
});
