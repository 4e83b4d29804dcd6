/** Polls a deletion's status URL (from the 202) until it is finished (or, with `purged`, also compacted away), at most `timeoutMs`. */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server.js';

export async function waitForDeletion(server: TestServer, statusUrl: string, until: 'finished' | 'purged' = 'finished', timeoutMs = 20_000): Promise<any> {
  assert.ok(statusUrl.startsWith(server.url), statusUrl);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await server.api(statusUrl.slice(server.url.length));
    const body = await response.json();
    assert.equal(response.status, 200, JSON.stringify(body));
    if (body.status === until || body.status === 'purged') return body;
    assert.ok(Date.now() < deadline, `deletion not finished after ${timeoutMs} ms: ${JSON.stringify(body)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
