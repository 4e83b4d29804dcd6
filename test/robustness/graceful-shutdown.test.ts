/**
 * SIGTERM opens a drain window: the server keeps accepting and serving, answers with
 * `Connection: close` and reports `draining` on /_ready, and closes its listener only once
 * requests have stopped. Closing it at once reset connections the kernel had already accepted.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, type TestServer } from '../helpers/server.js';

/** One request on a connection of its own; resolves with the status and headers, or the error code. */
function request(server: TestServer, method: string, path: string, body?: unknown): Promise<{ status?: number; connection?: string; text?: string; error?: string }> {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      { host: '127.0.0.1', port: server.port, method, path, agent: false, headers: payload ? { 'content-type': 'application/json' } : {} },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode, connection: response.headers.connection, text }));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    req.end(payload);
  });
}

describe('graceful shutdown', () => {
  test('SIGTERM drains: new connections are served with Connection: close, nothing is reset', async () => {
    // A drain window long enough to be seen on a loaded machine; it ends 150 ms after the load stops.
    const server = await startServer({ env: { SIGHTLINE_SHUTDOWN_DRAIN_MS: '10000', SIGHTLINE_SHUTDOWN_TIMEOUT_MS: '30000' } });
    const batch = (i: number) => ({ api_key: server.projectKey, batch: [{ event: 'drain', distinct_id: `d${i}` }] });
    const outcomes: string[] = [];
    let running = true;
    // Steady traffic on fresh connections into the drain window, stopping as a load balancer
    // does once /_ready says draining. (A client that keeps connecting while the listener
    // closes can always be reset by the kernel: that moment is what the drain exists to avoid.)
    const load = (async () => {
      for (let i = 0; running; i++) {
        const answer = await request(server, 'POST', '/batch/', batch(i));
        outcomes.push(answer.error ?? String(answer.status));
        if (answer.error === 'ECONNREFUSED') break;
      }
    })();
    await sleep(200);

    const exit = server.stop();
    let draining = false;
    const giveUp = performance.now() + 9_000;
    while (!draining && performance.now() < giveUp) {
      const ready = await request(server, 'GET', '/_ready');
      draining = ready.status === 503 && JSON.parse(ready.text ?? '{}').status === 'draining';
    }
    assert.ok(draining, '/_ready reports draining after SIGTERM');

    const served = await request(server, 'POST', '/batch/', batch(-1));
    assert.equal(served.status, 200, `a request on a new connection during the drain: ${JSON.stringify(served)}`);
    assert.equal(served.connection, 'close');
    running = false;
    await load;

    assert.equal(await exit, 0);
    const counts = Object.fromEntries([...new Set(outcomes)].map((key) => [key, outcomes.filter((o) => o === key).length]));
    for (const outcome of outcomes) assert.ok(['200', '503', 'ECONNREFUSED'].includes(outcome), `outcome ${outcome} in ${JSON.stringify(counts)}`);
  });
});
