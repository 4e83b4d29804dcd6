/**
 * SIGHTLINE_DROP_BOT_EVENTS over HTTP: events whose properties name a bot are answered 200 like
 * any dropped event, not stored, and counted as `reason="bot"`; the others in the same batch are stored.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { metric, newUuid } from '../helpers/robustness.js';
import { startServer, type TestServer } from '../helpers/server.js';

const CHROME = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/121.0.0.0 Safari/537.36';
const BINGBOT = 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)';

let server: TestServer;

before(async () => {
  server = await startServer({ env: { SIGHTLINE_GEOIP: 'false', SIGHTLINE_DROP_BOT_EVENTS: 'true' } });
});

after(async () => {
  if (server) assert.equal(await server.stop(), 0);
});

test('bot events are dropped and counted; the rest of the batch is stored', async () => {
  const human = newUuid();
  const batch = [
    { uuid: human, event: '$pageview', distinct_id: 'visitor', properties: { $raw_user_agent: CHROME } },
    { uuid: newUuid(), event: '$pageview', distinct_id: 'crawler', properties: { $raw_user_agent: BINGBOT } },
    { uuid: newUuid(), event: '$pageview', distinct_id: 'let-through', properties: { $browser_type: 'bot' } },
  ];
  // Sent by a server SDK: its own User-Agent header must not make the humans' events bots.
  const response = await server.post('/batch/', { api_key: server.projectKey, batch }, { 'user-agent': 'posthog-node/5.70.0' });
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { status: 1 });

  const listed = await (await server.api('/api/projects/@current/events/')).json();
  assert.deepEqual(
    listed.results.map((e: { id: string }) => e.id),
    [human],
  );
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  assert.equal(metric(metrics, 'sightline_events_dropped_total', { reason: 'bot' }), 2);
});
