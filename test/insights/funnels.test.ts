import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { v7 as uuidv7 } from 'uuid';
import { startServer, type TestServer } from '../helpers/server.js';
import { expectError, expectOk } from '../helpers/api-fixtures.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;

describe('FunnelsQuery', () => {
  let server: TestServer;
  let run = 0;
  before(async () => {
    server = await startServer({ env: { SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', SIGHTLINE_GEOIP: 'false' } });
  });
  after(async () => {
    await server?.stop();
  });

  /** Event names unique to one test, so tests share the project without seeing each other. */
  const names = () => {
    const prefix = `t${run++}_`;
    return (name: string) => prefix + name;
  };

  async function send(events: Array<{ event: string; distinct_id: string; at: number; properties?: Record<string, unknown> }>) {
    const batch = events.map((e) => ({ uuid: uuidv7(), event: e.event, distinct_id: e.distinct_id, timestamp: new Date(e.at).toISOString(), properties: e.properties ?? {} }));
    const response = await server.post('/batch/', { api_key: server.projectKey, batch });
    assert.equal(response.status, 200, await response.text());
  }

  const query = (q: Record<string, unknown>) => server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'FunnelsQuery', ...q }, refresh: 'force_blocking' } });
  const series = (...events: string[]) => events.map((event) => ({ kind: 'EventsNode', event }));
  const range = (from: number, to: number) => ({ date_from: new Date(from).toISOString(), date_to: new Date(to).toISOString(), explicitDate: true });
  const counts = (body: any) => body.results.map((s: any) => s.count);

  const t0 = Date.UTC(2025, 2, 3, 12);

  test('vector: C outside the window measured from A, though only 5 days after B', async () => {
    const n = names();
    await send([
      { event: n('A'), distinct_id: 'v1', at: t0 },
      { event: n('B'), distinct_id: 'v1', at: t0 + 10 * DAY },
      { event: n('C'), distinct_id: 'v1', at: t0 + 15 * DAY },
    ]);
    const body = await expectOk(await query({ series: series(n('A'), n('B'), n('C')), dateRange: range(t0 - DAY, t0 + 30 * DAY) }));
    assert.deepEqual(counts(body), [1, 1, 0]);
    assert.equal(body.results[1].average_conversion_time, 10 * 86_400);
    assert.equal(body.results[1].median_conversion_time, 10 * 86_400);
    assert.equal(body.results[2].average_conversion_time, null);
    assert.deepEqual(Object.keys(body.results[0]).sort(), ['action_id', 'average_conversion_time', 'count', 'custom_name', 'median_conversion_time', 'name', 'order', 'people', 'type']);
  });

  test('vector: a step after date_to is not counted', async () => {
    const n = names();
    await send([
      { event: n('A'), distinct_id: 'v2', at: t0 },
      { event: n('B'), distinct_id: 'v2', at: t0 + DAY + HOUR },
    ]);
    const body = await expectOk(await query({ series: series(n('A'), n('B')), dateRange: { date_from: '2025-03-01', date_to: '2025-03-03' } }));
    assert.deepEqual(counts(body), [1, 0]);
  });
});
