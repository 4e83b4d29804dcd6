/**
 * Reads larger than the event store may hold in memory at once go a part per query, each about
 * `pageBytes` (a sixteenth of DuckDB's memory limit; events/walk.ts): a CSV export completes
 * with every event once, newest first, stopping exactly at `limit`, and so does a long JSON page
 * of wide rows. Sorted in one query, 10,000 events of 4 KB ran out of a 64 MB limit.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { parseCsv, post } from '../helpers/events-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

const EVENTS = 10_000;
let server: TestServer;

before(async () => {
  server = await startServer({ env: { SIGHTLINE_DUCKDB_MEMORY_LIMIT: '64MB', SIGHTLINE_GEOIP: 'false', SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0' } });
  const now = Date.now();
  const filler = 'x'.repeat(4_000);
  for (let start = 0; start < EVENTS; start += 1_000) {
    await post(
      server,
      Array.from({ length: 1_000 }, (_, k) => ({
        event: 'big',
        distinct_id: `u-${(start + k) % 50}`,
        timestamp: new Date(now - (start + k) * 1000).toISOString(),
        properties: { i: start + k, filler },
      })),
    );
  }
});

after(async () => {
  assert.equal(await server.stop(), 0);
});

async function exported(limit: number): Promise<number[]> {
  const response = await server.api(`/api/projects/@current/events/?format=csv&limit=${limit}`);
  assert.equal(response.status, 200);
  const [header, ...rows] = parseCsv(await response.text());
  const i = header.indexOf('properties.i');
  assert.ok(i >= 0);
  assert.ok(rows.every((row) => row[header.indexOf('properties.filler')].length === 4_000));
  return rows.map((row) => Number(row[i]));
}

test('every event once, newest first, however many pages it takes', async () => {
  assert.deepEqual(await exported(EVENTS + 100), Array.from({ length: EVENTS }, (_, k) => k));
});

test('the export stops at its limit, inside a page', async () => {
  assert.deepEqual(await exported(4_321), Array.from({ length: 4_321 }, (_, k) => k));
});

test('a long JSON page of wide rows is read a part per query too', async () => {
  // Each row four times the filler (16 KB): 3,000 of them are 48 MB, most of the 64 MB limit.
  const wide = encodeURIComponent(JSON.stringify(['concat(properties.filler, properties.filler, properties.filler, properties.filler)', 'properties.i']));
  const response = await server.api(`/api/projects/@current/events/?select=${wide}&limit=3000`);
  assert.equal(response.status, 200);
  const body = await response.json();
  assert.deepEqual(body.results.map((row: unknown[]) => row[1]), Array.from({ length: 3_000 }, (_, k) => k));
  assert.ok(body.results.every((row: unknown[]) => (row[0] as string).length === 16_000));
  assert.ok(body.next, 'a next link to the rest');
});
