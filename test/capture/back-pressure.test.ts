import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
before(async () => {
  // One pending event fills the buffer, and it waits a second for its flush.
  server = await startServer({ env: { SIGHTLINE_MAX_PENDING_EVENTS: '1', SIGHTLINE_FLUSH_INTERVAL_MS: '1000' } });
});
after(() => server.stop());

test('a full ingestion buffer answers 503 with Retry-After, in the API error shape; the retry is stored', async () => {
  const event = (id: string) => ({ api_key: server.projectKey, event: 'clicked', distinct_id: id });
  const first = server.post('/capture/', event('first'));
  await new Promise((resolve) => setTimeout(resolve, 100));
  const refused = await server.post('/capture/', event('second'));
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get('retry-after'), '1');
  const body = (await refused.json()) as Record<string, unknown>;
  assert.equal(body.type, 'server_error');
  assert.equal(body.code, 'service_unavailable');
  assert.match(String(body.detail), /buffer is full/);
  assert.equal((await first).status, 200);
  const retried = await server.post('/capture/', event('second'));
  assert.equal(retried.status, 200);
});
