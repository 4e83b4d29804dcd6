/**
 * Where PostHog's events API sets the rule and Sightline follows it: the precision of time
 * bounds, `orderBy`, the CSV export's default size, and the extras of `/events/values/`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectError, expectOk } from '../helpers/api-fixtures.js';
import { labels, qs, startFixture, type Fixture } from '../helpers/events-fixtures.js';

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
