/**
 * EventsQuery end to end: select lists (plain expressions, `*`, `person`, aggregates that group),
 * where, properties, event, after/before, orderBy in PostHog's `x DESC` form, limit/offset with
 * hasMore, filterTestAccounts from the project setting, and 400s naming the field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectError, expectOk } from '../helpers/api-fixtures.js';
import { post } from '../helpers/events-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

const HOUR = 3_600_000;

describe('EventsQuery', () => {
  let server: TestServer;
  const now = Date.now();
  const at = (hoursAgo: number) => new Date(now - hoursAgo * HOUR).toISOString();

  before(async () => {
    server = await startServer({ env: { SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', SIGHTLINE_GEOIP: 'false' } });
    await post(server, [
      { event: '$pageview', distinct_id: 'alice', timestamp: at(1), properties: { $browser: 'Chrome', n: 1, $set: { email: 'alice@example.com' } } },
      { event: '$pageview', distinct_id: 'alice', timestamp: at(2), properties: { $browser: 'Firefox', n: 2 } },
      { event: '$pageview', distinct_id: 'bob', timestamp: at(3), properties: { $browser: 'Chrome', n: 3, $host: 'localhost' } },
      { event: 'signup', distinct_id: 'bob', timestamp: at(4), properties: { n: 4 } },
      { event: 'signup', distinct_id: 'carol', timestamp: at(48), properties: { n: 5 } },
    ]);
  });
  after(async () => {
    await server?.stop();
  });

  const events = (query: Record<string, unknown>) =>
    server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'EventsQuery', ...query }, refresh: 'force_blocking' } });

  test('plain columns, newest first, within the last 24 hours by default', async () => {
    const body = await expectOk(await events({ select: ['event', 'distinct_id', 'properties.n', 'timestamp'] }));
    assert.deepEqual(
      body.results.map((r: unknown[]) => r.slice(0, 3)),
      [
        ['$pageview', 'alice', '1'],
        ['$pageview', 'alice', '2'],
        ['$pageview', 'bob', '3'],
        ['signup', 'bob', '4'],
      ],
    );
    // As Python's isoformat (PostHog): six digits of fraction, none when it is zero (1 in 1,000 runs here).
    assert.match(body.results[0][3], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$/);
    assert.deepEqual(body.columns, ['event', 'distinct_id', 'properties.n', 'timestamp']);
    assert.deepEqual(body.types, ['String', 'String', 'String', "DateTime64(6, 'UTC')"]);
    assert.equal(body.hasMore, false);
    assert.equal(body.limit, 100);
    assert.equal(body.offset, 0);
    assert.equal(body.is_cached, false);
  });

  test('after "all", event, where, properties, orderBy ASC, limit/offset and hasMore', async () => {
    let body = await expectOk(await events({ select: ['properties.n'], after: 'all', event: 'signup', orderBy: ['timestamp ASC'] }));
    assert.deepEqual(body.results, [['5'], ['4']]);
    body = await expectOk(await events({ select: ['properties.n'], where: ["properties.$browser = 'Chrome'"], orderBy: ['toInt(properties.n) DESC'] }));
    assert.deepEqual(body.results, [['3'], ['1']]);
    body = await expectOk(await events({ select: ['properties.n'], properties: [{ type: 'event', key: '$browser', value: ['Firefox'], operator: 'exact' }] }));
    assert.deepEqual(body.results, [['2']]);
    body = await expectOk(await events({ select: ['properties.n'], after: 'all', limit: 2, offset: 1, orderBy: ['timestamp ASC'] }));
    assert.deepEqual(body.results, [['4'], ['3']]);
    assert.equal(body.hasMore, true);
    body = await expectOk(await events({ select: ['properties.n'], events: ['signup', '$pageview'], after: '-3h', before: new Date(now - 1.5 * HOUR).toISOString() }));
    assert.deepEqual(body.results, [['2']]);
  });

  test('an aggregating select groups by the rest, largest first', async () => {
    const body = await expectOk(await events({ select: ['event', 'count()', 'count(distinct distinct_id) as people'], after: 'all' }));
    assert.deepEqual(body.results, [
      ['$pageview', 3, 2],
      ['signup', 2, 2],
    ]);
    assert.deepEqual(body.columns, ['event', 'count()', 'count(distinct distinct_id) as people']);
    assert.deepEqual(body.types, ['String', 'UInt64', 'UInt64']);
  });

  test('`*`, `person` and person_display_name are objects', async () => {
    const body = await expectOk(await events({ select: ['*', 'person', 'person_display_name -- Person'], event: '$pageview', limit: 1 }));
    const [event, person, display] = body.results[0];
    assert.equal(event.event, '$pageview');
    assert.equal(event.distinct_id, 'alice');
    assert.equal(event.properties.$browser, 'Chrome');
    assert.match(event.uuid, /^[0-9a-f-]{36}$/);
    assert.match(event.timestamp, /\+00:00$/);
    assert.equal(person.distinct_id, 'alice');
    assert.equal(person.properties.email, 'alice@example.com');
    assert.match(person.uuid, /^[0-9a-f-]{36}$/);
    assert.deepEqual(display, { display_name: 'alice@example.com', id: person.uuid, distinct_id: 'alice' });
    assert.deepEqual(body.columns, ['*', 'person', 'person_display_name -- Person']);
  });

  test('filterTestAccounts applies the project’s test account filters', async () => {
    await expectOk(await server.api('/api/projects/@current/', { method: 'PATCH', body: { test_account_filters: [{ type: 'event', key: '$host', value: ['localhost'], operator: 'is_not' }] } }));
    const all = await expectOk(await events({ select: ['count()'], event: '$pageview' }));
    const filtered = await expectOk(await events({ select: ['count()'], event: '$pageview', filterTestAccounts: true }));
    assert.deepEqual(all.results, [[3]]);
    assert.deepEqual(filtered.results, [[2]]);
  });

  test('bad input is a 400 naming the field', async () => {
    await expectError(await events({}), 400, 'required', 'select');
    await expectError(await events({ select: 'event' }), 400, 'not_a_list', 'select');
    await expectError(await events({ select: ['nope'] }), 400, 'invalid_input', 'select');
    await expectError(await events({ select: ['event'], where: ['event ='] }), 400, 'invalid_input', 'where');
    await expectError(await events({ select: ['event'], after: 'yesterday-ish' }), 400, 'invalid_date', 'after');
    await expectError(await events({ select: ['event'], limit: -1 }), 400, 'invalid', 'limit');
    await expectError(await events({ select: ['event'], orderBy: ['nope DESC'] }), 400, 'invalid_input', 'orderBy');
    const response = await events({ select: ['event'], properties: [{ key: 'x', operator: 'regex', value: '(' }] });
    assert.equal(response.status, 400);
    assert.equal((await response.json()).attr, 'properties');
  });
});
