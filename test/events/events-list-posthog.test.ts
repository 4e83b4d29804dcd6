/**
 * Where PostHog's events API sets the rule and Sightline follows it: the precision of time
 * bounds, `orderBy`, the CSV export's default size, and the extras of `/events/values/`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectError, expectOk } from '../helpers/api-fixtures.js';
import { labels, parseCsv, qs, startFixture, type Fixture } from '../helpers/events-fixtures.js';

let f: Fixture;

before(async () => {
  f = await startFixture();
});
after(async () => {
  await f.server.stop();
});

const list = async (params: Record<string, unknown>) => expectOk(await f.events(qs(params)));

describe('time bounds compare at the precision timestamps are shown with', () => {
  test('a bound one microsecond after an event keeps it; one microsecond before drops it', async () => {
    const [e1] = (await list({ event: '$pageview', limit: 1, where: ["properties.n = 'E1'"] })).results;
    // Shown with six decimals, stored to the millisecond: the last three digits are zeros.
    assert.match(e1.timestamp, /\.\d{3}000\+00:00$/);
    const stored = Date.parse(e1.timestamp) * 1000;
    const micros = (delta: number) => {
      const at = stored + delta;
      return `${new Date(Math.floor(at / 1000)).toISOString().slice(0, 23)}${String(((at % 1000) + 1000) % 1000).padStart(3, '0')}Z`;
    };
    assert.deepEqual(labels(await list({ before: micros(1), after: micros(-1) })), ['E1']);
    assert.deepEqual(labels(await list({ before: micros(0), after: micros(-1) })), []);
    assert.deepEqual(labels(await list({ before: micros(1), after: micros(0) })), []);
  });
});

describe('orderBy', () => {
  const byPrice = ['E4', 'E2', 'E1'];

  test('a list of HogQL expressions, `-` for descending, pages by offset', async () => {
    assert.deepEqual(labels(await list({ orderBy: ['timestamp'] })), [...f.all].reverse());
    assert.deepEqual(labels(await list({ orderBy: ['-timestamp'] })), f.all);
    const priced = await list({ orderBy: ['-toFloat(properties.price)'], where: ['properties.price IS NOT NULL'], event: '$pageview' });
    assert.deepEqual(labels(priced), ['E2', 'E1']);
    const first = await list({ orderBy: ['-toFloat(properties.price)', 'event'], where: ["event IN ('$pageview', 'purchase')", 'properties.price IS NOT NULL'], limit: 2 });
    assert.deepEqual(labels(first), byPrice.slice(0, 2));
    assert.equal(first.count, 3);
    const url = new URL(first.next);
    assert.equal(url.searchParams.get('offset'), '2');
    assert.equal(url.searchParams.get('cursor'), null);
    const second = await expectOk(await f.server.api(first.next.slice(f.server.url.length)));
    assert.deepEqual(labels(second), byPrice.slice(2));
    assert.equal(second.next, null);
  });

  test('orders select rows and aggregated groups too', async () => {
    const rows = await list({ select: ['event', 'distinct_id'], orderBy: ['event', '-distinct_id'], limit: 3 });
    assert.deepEqual(rows.results, [
      ['$autocapture', 'dave'],
      ['$identify', 'erin'],
      ['$pageview', 'erin'],
    ]);
    const groups = await list({ select: ['event', 'count() AS c'], orderBy: ['event'] });
    assert.deepEqual(
      groups.results.map((row: unknown[]) => row[0]),
      ['$autocapture', '$identify', '$pageview', 'purchase', 'signup'],
    );
    const byCount = await list({ select: ['event', 'count() AS c'], orderBy: ['-count()', 'event'], limit: 2 });
    assert.deepEqual(byCount.results, [
      ['$pageview', 4],
      ['$autocapture', 1],
    ]);
  });

  test('CSV follows the order', async () => {
    const response = await f.events(qs({ format: 'csv', select: ['event'], orderBy: ['event'], where: ["event LIKE 's%'"] }));
    assert.equal(await response.text(), 'event\r\nsignup\r\n');
    const [header, ...rows] = parseCsv(await (await f.events(qs({ format: 'csv', orderBy: ['timestamp'] }))).text());
    const n = header.indexOf('properties.n');
    assert.deepEqual(rows.map((row) => row[n]), [...f.all].reverse());
  });

  test('bad expressions are 400 on orderBy; a cursor only continues the default order', async () => {
    await expectError(await f.events(qs({ orderBy: ['nope'] })), 400, 'invalid_input', 'orderBy');
    await expectError(await f.events(qs({ orderBy: 'timestamp' })), 400, 'invalid_input', 'orderBy');
    await expectError(await f.events(qs({ orderBy: ['count()'] })), 400, 'invalid_input', 'orderBy');
    const first = await list({ limit: 1 });
    const cursor = new URL(first.next).searchParams.get('cursor');
    await expectError(await f.events(qs({ orderBy: ['timestamp'], cursor })), 400, 'invalid_input', 'cursor');
  });
});

describe('CSV export size', () => {
  test("3,500 rows unless limit says otherwise, as in PostHog; a Link header says where the rest starts", async () => {
    const created = await expectOk(await f.server.api('/api/projects/', { method: 'POST', body: { name: 'csv-size' } }), 201);
    const now = Date.now();
    const batch = Array.from({ length: 3_600 }, (_, i) => ({ event: 'row', distinct_id: `c-${i % 10}`, timestamp: new Date(now - i * 1000).toISOString(), properties: { i } }));
    await expectOk(await f.server.post('/batch/', { api_key: created.api_token, batch }));
    const path = `/api/projects/${created.id}/events/`;

    const standard = await f.server.api(`${path}?format=csv`);
    const [header, ...rows] = parseCsv(await standard.text());
    assert.equal(rows.length, 3_500);
    const next = /^<([^>]+)>; rel="next"$/.exec(standard.headers.get('link') ?? '');
    assert.ok(next, `a Link header: ${standard.headers.get('link')}`);
    const rest = await f.server.api(next![1].slice(f.server.url.length));
    assert.equal(rest.headers.get('link'), null);
    const [, ...restRows] = parseCsv(await rest.text());
    assert.equal(restRows.length, 100);
    const i = header.indexOf('properties.i');
    assert.deepEqual([rows[0][i], rows[3_499][i], restRows[0][i], restRows[99][i]], ['0', '3499', '3500', '3599']);

    const everything = await f.server.api(`${path}?format=csv&limit=1000000`);
    assert.equal(parseCsv(await everything.text()).length, 3_601);
    assert.equal(everything.headers.get('link'), null);
  });
});

describe('/events/values/ extras', () => {
  const values = (query: string) => f.server.api(`/api/projects/${f.projectId}/events/values/${query}`);

  test('key=custom_event lists the event names other than PostHog core events', async () => {
    const response = await values('?key=custom_event');
    assert.deepEqual(await expectOk(response), [{ name: 'purchase' }, { name: 'signup' }]);
  });

  test('is_column reads a column of the event instead of a property', async () => {
    assert.deepEqual(await expectOk(await values('?key=event&is_column=true')), [
      { name: '$pageview' },
      { name: '$identify' },
      { name: 'purchase' },
      { name: 'signup' },
    ]);
    assert.deepEqual(await expectOk(await values('?key=distinct_id&is_column=1&value=ER')), [{ name: 'erin' }]);
    await expectError(await values('?key=properties&is_column=true'), 400, 'invalid_input', 'key');
    await expectError(await values('?key=event&is_column=maybe'), 400, 'invalid_input', 'is_column');
  });

  test('answers carry Cache-Control: max-age=10', async () => {
    assert.equal((await values('?key=$browser')).headers.get('cache-control'), 'max-age=10');
    assert.equal((await values('?key=custom_event')).headers.get('cache-control'), 'max-age=10');
  });
});
