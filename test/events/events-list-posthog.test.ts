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
    const shown = e1.timestamp.replace('+00:00', '');
    const [whole, fraction] = shown.split('.');
    const micros = (delta: number) => `${whole}.${String(Number(fraction) + delta).padStart(6, '0')}Z`;
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
