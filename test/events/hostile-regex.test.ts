/**
 * The events API's regex filters run in DuckDB's RE2, which matches in linear time: patterns
 * that make a backtracking engine run for hours answer like any other filter, and what RE2
 * cannot run in linear time (backreferences, lookarounds) is refused up front with a 400.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { expectError, expectOk, ingest } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

const EVENTS = 2_000;
let server: TestServer;

before(async () => {
  server = await startServer();
  const events = Array.from({ length: EVENTS }, (_, i) => ({
    event: 'signup',
    distinct_id: `user-${i}`,
    // 40 `a`s and a `!` take a backtracking `^(a+)+$` 2^40 steps; every tenth event matches.
    properties: { name: i % 10 === 0 ? 'a'.repeat(40) : 'a'.repeat(40) + '!' },
  }));
  for (let i = 0; i < events.length; i += 500) await ingest(server, events.slice(i, i + 500));
});

after(async () => {
  await server?.stop();
});

const list = (properties: unknown) =>
  server.api(`/api/projects/@current/events/?limit=1&properties=${encodeURIComponent(JSON.stringify(properties))}`);

describe('regex filters on events', () => {
  it('answer a catastrophic-backtracking pattern over every event like any other filter', async () => {
    const body = await expectOk(await list([{ key: 'name', operator: 'regex', value: '^(a+)+$' }]));
    assert.equal(body.count, EVENTS / 10);
    const negated = await expectOk(await list([{ key: 'name', operator: 'not_regex', value: '^(a|aa)+$' }]));
    assert.equal(negated.count, EVENTS - EVENTS / 10);
  });

  it('refuse what has no linear-time match with a clear 400', async () => {
    const error = await expectError(await list([{ key: 'name', operator: 'regex', value: '^(a+)+\\1$' }]), 400, 'invalid_input', 'properties');
    assert.match(error.detail, /\\1/);
  });
});
