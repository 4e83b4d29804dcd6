/**
 * GET /api/projects/:id/events/ and friends on a real server, events ingested through /batch/:
 * every parameter alone and combined, every property operator and nested groups, keyset
 * pagination under concurrent ingestion, CSV, one event by uuid, property values, merged
 * persons, and tenancy/scope checks.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import { createTenant, expectError, expectOk, q } from '../helpers/api-fixtures.js';
import { CHAIN, DAY, HOUR, labels, parseCsv, post, qs, startFixture, type Fixture } from '../helpers/events-fixtures.js';

let f: Fixture;

before(async () => {
  f = await startFixture();
});
after(async () => {
  await f.server.stop();
});

const list = async (query = '') => expectOk(await f.events(query));
const only = async (query: string) => labels(await list(query));
/** Labels matching a property filter list (or group). */
const matching = (properties: unknown) => only(qs({ properties }));
const except = (...drop: string[]) => f.all.filter((n) => !drop.includes(n));

describe('list', () => {
  test('results are newest first with every field of a stored event', async () => {
    const body = await list();
    assert.equal(body.count, f.all.length);
    assert.equal(body.next, null);
    assert.equal(body.previous, null);
    assert.deepEqual(labels(body), f.all);
    const e5 = body.results.find((r: any) => r.properties.n === 'E5');
    assert.deepEqual(Object.keys(e5), ['id', 'distinct_id', 'properties', 'event', 'timestamp', 'person', 'elements', 'elements_chain']);
    assert.equal(e5.id, f.uuids.get('E5'));
    assert.equal(e5.distinct_id, 'dave');
    assert.equal(e5.event, '$autocapture');
    assert.match(e5.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/);
    assert.equal(Date.parse(e5.timestamp), f.now - 10 * DAY);
    assert.equal(e5.properties.formula, '=SUM(A1)');
    assert.equal(e5.elements_chain, CHAIN);
    assert.deepEqual(e5.elements, [
      { text: 'Buy "now"', tag_name: 'a', attr_class: ['btn', 'primary'], href: '/buy', attr_id: 'buy', nth_child: 2, nth_of_type: 1, attributes: { attr__href: '/buy' }, order: 0 },
      { text: null, tag_name: 'div', attr_class: ['row'], href: null, attr_id: null, nth_child: 1, nth_of_type: 1, attributes: {}, order: 1 },
    ]);
    assert.equal(e5.person.is_identified, false);
    assert.deepEqual(e5.person.distinct_ids, ['dave']);
    const e1 = body.results.find((r: any) => r.properties.n === 'E1');
    assert.deepEqual(e1.elements, []);
  });

  test('a person merged after the fact owns the anonymous events', async () => {
    const body = await list(qs({ distinct_id: 'anon-xyz' }));
    assert.deepEqual(labels(body), ['E6']);
    const person = body.results[0].person;
    assert.equal(person.is_identified, true);
    assert.deepEqual(person.distinct_ids, ['anon-xyz', 'erin']);
    assert.equal(person.properties.email, 'erin@example.com');
    // The person uuid, as HogQL sees it; person_id then selects both distinct ids' events.
    const ids = await list(qs({ select: ['person_id'], distinct_id: 'erin' }));
    const personId = ids.results[0][0];
    assert.deepEqual(await only(qs({ person_id: personId })), ['E8', 'E7', 'E6']);
    assert.deepEqual(await only(qs({ person_id: personId.toUpperCase().replace(/-/g, '') })), ['E8', 'E7', 'E6']);
    assert.deepEqual(await only(qs({ person_id: '00000000-0000-0000-0000-000000000000' })), []);
    assert.deepEqual(await matching([{ key: 'email', value: 'erin@example.com', type: 'person' }]), ['E8', 'E7', 'E6']);
  });

  test('each plain filter alone', async () => {
    assert.deepEqual(await only(qs({ event: '$pageview' })), ['E8', 'E1', 'E6', 'E2']);
    assert.deepEqual(await only(qs({ event: 'nothing' })), []);
    assert.deepEqual(await only(qs({ distinct_id: 'alice' })), ['E1', 'E4']);
    const iso = (ago: number) => new Date(f.now - ago).toISOString();
    assert.deepEqual(await only(qs({ after: iso(2.5 * HOUR) })), ['E8', 'E1', 'E7', 'E6']);
    assert.deepEqual(await only(qs({ before: iso(2.5 * HOUR) })), ['E2', 'E3', 'E4', 'E5']);
    // Bounds are exclusive, as in PostHog.
    assert.deepEqual(await only(qs({ after: iso(HOUR), before: iso(0.5 * HOUR) })), []);
    // Naive ISO text is UTC; offsets are honoured.
    const naive = new Date(f.now - 4 * DAY).toISOString().replace('Z', '');
    assert.deepEqual(await only(qs({ before: naive })), ['E4', 'E5']);
    const shifted = new Date(f.now - 4 * DAY + 2 * HOUR).toISOString().replace('Z', '+02:00');
    assert.deepEqual(await only(qs({ before: shifted })), ['E4', 'E5']);
  });

  test('relative dates', async () => {
    assert.deepEqual(await only('?after=-4h'), ['E8', 'E1', 'E7', 'E6', 'E2']);
    assert.deepEqual(await only('?before=-1d'), ['E3', 'E4', 'E5']);
    assert.deepEqual(await only('?after=-6d&before=-1d'), ['E3', 'E4']);
    assert.deepEqual(await only('?after=-1w'), except('E5'));
    assert.deepEqual(await only('?after=24h'), except('E3', 'E4', 'E5'));
  });

  test('filters combine', async () => {
    assert.deepEqual(await only(qs({ event: '$pageview', after: '-4h', properties: [{ key: '$browser', value: 'Chrome' }] })), ['E8', 'E1']);
    assert.deepEqual(await only(qs({ distinct_id: 'alice', before: '-1d', event: 'purchase' })), ['E4']);
    assert.deepEqual(await only(qs({ distinct_id: 'alice', event: '$pageview', where: ["properties.plan = 'pro'"], limit: 1 })), ['E1']);
  });

  test('every property operator', async () => {
    const cases: [unknown, string[]][] = [
      [[{ key: '$browser', value: 'Chrome' }], ['E8', 'E1', 'E5']],
      [[{ key: '$browser', value: 'chrome', operator: 'exact' }], []],
      [[{ key: '$browser', value: ['Safari', 'Edge'], operator: 'exact' }], ['E6', 'E3']],
      [[{ key: '$browser', value: 'Chrome', operator: 'is_not' }], except('E8', 'E1', 'E5')],
      [[{ key: '$browser', value: 'FIRE', operator: 'icontains' }], ['E2']],
      [[{ key: '$browser', value: 'e', operator: 'not_icontains' }], ['E7', 'E3', 'E4']],
      [[{ key: 'url', value: '^https://a\\.com/', operator: 'regex' }], ['E1']],
      [[{ key: '$browser', value: '^(Chrome|Edge)$', operator: 'not_regex' }], ['E7', 'E2', 'E3', 'E4']],
      [[{ key: 'price', value: 10, operator: 'gt' }], ['E2', 'E4']],
      [[{ key: 'price', value: '10', operator: 'gte' }], ['E1', 'E2', 'E4']],
      [[{ key: 'price', value: 10, operator: 'lt' }], ['E5']],
      [[{ key: 'price', value: 10, operator: 'lte' }], ['E1', 'E5']],
      [[{ key: 'currency', operator: 'is_set' }], ['E4']],
      [[{ key: 'price', operator: 'is_not_set' }], ['E8', 'E7', 'E6', 'E3']],
      [[{ key: 'signup_at', value: '2025-01-01', operator: 'is_date_before' }], ['E1']],
      [[{ key: 'signup_at', value: '-30d', operator: 'is_date_before' }], ['E1', 'E2']],
      [[{ key: 'signup_at', value: '2025-01-01', operator: 'is_date_after' }], ['E2']],
      [[{ key: 'is_first', value: 'true' }], ['E4']],
      [[{ key: 'odd key/~"x"', value: 'odd' }], ['E6']],
      [[{ key: 'properties.price > 20', type: 'hogql' }], ['E2', 'E4']],
      [[{ key: 'email', value: 'erin@example.com', operator: 'exact', type: 'person' }], ['E8', 'E7', 'E6']],
    ];
    for (const [filters, expected] of cases) assert.deepEqual(await matching(filters), expected, JSON.stringify(filters));
  });

  test('property groups: lists are ANDed, groups nest AND and OR', async () => {
    assert.deepEqual(await matching([{ key: '$browser', value: 'Chrome' }, { key: 'plan', value: 'pro' }]), ['E1']);
    assert.deepEqual(
      await matching({ type: 'OR', values: [{ key: 'plan', value: 'free' }, { key: 'currency', value: 'USD' }] }),
      ['E8', 'E2', 'E4'],
    );
    const nested = {
      type: 'AND',
      values: [
        { type: 'OR', values: [{ key: '$browser', value: 'Chrome' }, { key: '$browser', value: 'Safari' }] },
        { type: 'OR', values: [{ key: 'plan', value: 'pro' }, { type: 'AND', values: [{ key: 'formula', operator: 'is_set' }, { key: 'price', value: 5, operator: 'gt' }] }] },
      ],
    };
    assert.deepEqual(await matching(nested), ['E1', 'E3', 'E5']);
    assert.deepEqual(await matching({ type: 'OR', values: [] }), f.all);
  });

  test('limit and offset', async () => {
    const page = await list('?limit=2&offset=3');
    assert.deepEqual(labels(page), f.all.slice(3, 5));
    assert.equal(page.count, f.all.length);
    assert.ok(page.next && page.previous);
    assert.deepEqual(await only('?offset=100'), []);
  });

  test('bad parameters are 400 naming the parameter', async () => {
    const cases: [string, string][] = [
      ['?limit=0', 'limit'],
      ['?limit=abc', 'limit'],
      ['?limit=-1', 'limit'],
      ['?offset=-5', 'offset'],
      ['?format=xml', 'format'],
      ['?after=yesterday', 'after'],
      ['?before=2024-13-45', 'before'],
      ['?after=7', 'after'],
      ['?person_id=forty-two', 'person_id'],
      ['?cursor=bm9wZQ', 'cursor'],
      ['?properties=%7Bbad', 'properties'],
      [`?properties=${q([{ key: 'a', operator: 'nope', value: 1 }])}`, 'properties'],
      [`?properties=${q([{ key: 'a', operator: 'regex', value: '(' }])}`, 'properties'],
      ['?select=event', 'select'],
      [`?select=${q([1])}`, 'select'],
      ['?where=%5B', 'where'],
      [`?where=${q(['count() > 1'])}`, 'where'],
    ];
    for (const [query, attr] of cases) {
      const response = await f.events(query);
      assert.equal(response.status, 400, query);
      const body = await response.json();
      assert.equal(body.type, 'validation_error', query);
      assert.equal(body.attr, attr, `${query}: ${JSON.stringify(body)}`);
    }
    // Past the maximum the limit is clamped, as PostHog does (10,000 rows for JSON; CSV may ask for more).
    const clamped = await f.events('?limit=10001&offset=1');
    assert.equal(clamped.status, 200);
    const body = await clamped.json();
    assert.equal(new URL(body.previous).searchParams.get('limit'), '10000');
    assert.equal((await f.events('?limit=10001&format=csv')).status, 200);
  });
});

describe('retrieve', () => {
  test('one event by uuid, with its person', async () => {
    const event = await expectOk(await f.events(`${f.uuids.get('E6')}/`));
    assert.equal(event.properties.n, 'E6');
    assert.deepEqual(event.person.distinct_ids, ['anon-xyz', 'erin']);
    const upper = await expectOk(await f.events(`${f.uuids.get('E6')!.toUpperCase()}/`));
    assert.equal(upper.id, event.id);
  });

  test('unknown is 404, malformed is 400 Invalid UUID', async () => {
    const missing = await expectError(await f.events(`${uuidv7()}/`), 404, 'not_found');
    assert.match(missing.detail, /No events exist for event UUID/);
    const bad = await expectError(await f.events('not-a-uuid/'), 400, 'invalid');
    assert.equal(bad.type, 'validation_error');
    assert.equal(bad.detail, 'Invalid UUID');
  });

  test('as CSV', async () => {
    const response = await f.events(`${f.uuids.get('E3')}/?format=csv`);
    assert.equal(response.status, 200);
    const [header, row] = parseCsv(await response.text());
    assert.equal(row[header.indexOf('properties.note')], 'Hello, "World"\nline 2');
  });
});

describe('values', () => {
  const values = async (query: string) => expectOk(await f.server.api(`/api/projects/${f.projectId}/events/values/${query}`));

  test('distinct values, most frequent first, stringified', async () => {
    assert.deepEqual(await values('?key=$browser'), [{ name: 'Chrome' }, { name: 'Edge' }, { name: 'Firefox' }, { name: 'Safari' }]);
    // Last 7 days (E5, ten days old, is not looked at)...
    assert.deepEqual(await values('?key=price'), [{ name: '10' }, { name: '25.5' }, { name: '99' }]);
    // ...unless they hold no value at all.
    assert.deepEqual(await values('?key=formula'), [{ name: '=SUM(A1)' }]);
    assert.deepEqual(await values('?key=is_first'), [{ name: 'true' }]);
    assert.deepEqual(await values('?key=tags'), [{ name: 'x' }, { name: 'y' }]);
    assert.deepEqual(await values('?key=missing'), []);
  });

  test('event_name (repeatable), value substring, limit', async () => {
    assert.deepEqual(await values('?key=$browser&event_name=signup'), [{ name: 'Safari' }]);
    assert.deepEqual(await values('?key=$browser&event_name=signup&event_name=purchase&event_name=$pageview'), [
      { name: 'Chrome' },
      { name: 'Edge' },
      { name: 'Firefox' },
      { name: 'Safari' },
    ]);
    assert.deepEqual(await values('?key=$browser&value=R'), [{ name: 'Chrome' }, { name: 'Firefox' }, { name: 'Safari' }]);
    assert.deepEqual(await values(`?key=$browser&value=${q('%')}`), []);
    assert.deepEqual(await values('?key=$browser&limit=1'), [{ name: 'Chrome' }]);
  });

  test('key is required; limit is bounded', async () => {
    await expectError(await f.server.api(`/api/projects/${f.projectId}/events/values/`), 400, 'required', 'key');
    await expectError(await f.server.api(`/api/projects/${f.projectId}/events/values/?key=x&limit=101`), 400, 'invalid_input', 'limit');
  });
});

describe('csv', () => {
  test('header, one row per event, RFC 4180 quoting, formulas neutralised', async () => {
    for (const init of [{ query: '?format=csv' }, { query: '', headers: { accept: 'text/csv' } }]) {
      const response = await f.server.api(`/api/projects/${f.projectId}/events/${init.query}`, { headers: init.headers });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type')!, /^text\/csv/);
      const rows = parseCsv(await response.text());
      const [header, ...body] = rows;
      assert.deepEqual(header.slice(0, 6), ['id', 'event', 'distinct_id', 'timestamp', 'person_id', 'elements_chain']);
      assert.equal(header[header.length - 1], 'properties');
      assert.equal(body.length, f.all.length);
      const column = (name: string) => header.indexOf(name);
      const byLabel = new Map(body.map((row) => [row[column('properties.n')], row]));
      assert.deepEqual(body.map((row) => row[column('properties.n')]), f.all);
      assert.equal(byLabel.get('E3')![column('properties.note')], 'Hello, "World"\nline 2');
      assert.equal(byLabel.get('E5')![column('properties.formula')], "'=SUM(A1)");
      assert.equal(byLabel.get('E5')![column('elements_chain')], CHAIN);
      assert.equal(byLabel.get('E4')![column('properties.tags')], '["x","y"]');
      assert.equal(byLabel.get('E4')![column('properties.price')], '99');
      assert.equal(byLabel.get('E6')![column('person_id')], byLabel.get('E8')![column('person_id')]);
    }
  });

  test('the property columns are those of the rows exported', async () => {
    const response = await f.events(`?format=csv&limit=3`);
    const [header, ...rows] = parseCsv(await response.text());
    assert.equal(rows.length, 3);
    assert.ok(header.includes('properties.url'));
    assert.ok(!header.includes('properties.currency'));
  });
});

describe('a walk under concurrent ingestion', () => {
  test('every event exactly once, ties broken by uuid', async () => {
    const created = await expectOk(await f.server.api('/api/projects/', { method: 'POST', body: { name: 'walk' } }), 201);
    const now = Date.now();
    const batch = (count: number, start: number, spread: number) =>
      Array.from({ length: count }, (_, i) => ({
        uuid: uuidv7(),
        event: 'walk',
        distinct_id: `w-${i % 7}`,
        // Every fifth event shares one timestamp: the cursor must break ties.
        timestamp: new Date(i % 5 === 0 ? now - 3 * HOUR : now - Math.floor(Math.random() * spread) - start).toISOString(),
        properties: { i },
      }));
    const original = batch(600, HOUR, 5 * DAY);
    await post(f.server, original, created.api_token);
    const path = `/api/projects/${created.id}/events/?limit=37`;

    const first = await expectOk(await f.server.api(path));
    assert.equal(first.count, 600);
    const seen: string[] = first.results.map((r: any) => r.id);
    const pages = [first];
    let next: string | null = first.next;
    let arrivals = 0;
    while (next) {
      // New events — newer, older and at the tied timestamp — arrive while the walk goes on.
      const writing = post(f.server, batch(25, 0, 6 * DAY), created.api_token);
      const page = await expectOk(await f.server.api(next.slice(f.server.url.length)));
      await writing;
      arrivals += 25;
      pages.push(page);
      seen.push(...page.results.map((r: any) => r.id));
      next = page.next;
    }
    assert.equal(new Set(seen).size, seen.length, 'no event twice');
    const seenSet = new Set(seen);
    for (const event of original) assert.ok(seenSet.has(event.uuid), 'every original event');
    assert.ok(arrivals > 0);

    // Newest first throughout, uuid descending within one timestamp.
    for (const page of pages) assert.equal(page.results.length <= 37, true);
    const keys = pages.flatMap((p) => p.results.map((r: any) => [r.timestamp, r.id]));
    for (let i = 1; i < keys.length; i++) assert.ok(keys[i - 1][0] > keys[i][0] || (keys[i - 1][0] === keys[i][0] && keys[i - 1][1] > keys[i][1]));

  });

  test('previous goes back a page; links keep the other parameters', async () => {
    const follow = async (url: string) => expectOk(await f.server.api(url.slice(f.server.url.length)));
    const first = await list('?limit=2&event=$pageview');
    const second = await follow(first.next);
    assert.deepEqual([...labels(first), ...labels(second)], ['E8', 'E1', 'E6', 'E2']);
    assert.equal(second.next, null);
    assert.equal(second.count, 4);
    const back = await follow(second.previous);
    assert.deepEqual(labels(back), ['E8', 'E1']);
    assert.equal(back.previous, null);
    assert.deepEqual(labels(await follow(back.next)), ['E6', 'E2']);
    const url = new URL(first.next);
    assert.equal(url.searchParams.get('event'), '$pageview');
    assert.equal(url.searchParams.get('limit'), '2');
    assert.equal(url.searchParams.get('offset'), null);
    // From an offset page, next continues right after it and previous returns above it.
    const middle = await list('?limit=2&offset=2');
    assert.deepEqual(labels(await follow(middle.next)), f.all.slice(4, 6));
    assert.deepEqual(labels(await follow(middle.previous)), f.all.slice(0, 2));
  });
});

describe('csv export of 20,000 rows', () => {
  test('streamed in chunks, every row present', async () => {
    const created = await expectOk(await f.server.api('/api/projects/', { method: 'POST', body: { name: 'bulk' } }), 201);
    const now = Date.now();
    for (let start = 0; start < 20_000; start += 5_000) {
      const batch = Array.from({ length: 5_000 }, (_, k) => ({
        event: 'bulk',
        distinct_id: `b-${(start + k) % 100}`,
        timestamp: new Date(now - (start + k) * 1000).toISOString(),
        // The oldest row alone has a key: it comes long after the chunk that sets the header.
        properties: { i: start + k, text: `row, "${start + k}"`, ...(start + k === 19_999 && { late: 'yes' }) },
      }));
      await post(f.server, batch, created.api_token);
    }
    const response = await f.server.api(`/api/projects/${created.id}/events/?format=csv&limit=20000`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-length'), null, 'streamed, not buffered');
    let chunks = 0;
    let text = '';
    const decoder = new TextDecoder();
    const reader = response.body!.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      chunks += 1;
      text += decoder.decode(read.value, { stream: true });
    }
    assert.ok(chunks > 1);
    const [header, ...rows] = parseCsv(text);
    assert.equal(rows.length, 20_000);
    const i = header.indexOf('properties.i');
    assert.deepEqual(rows.slice(0, 3).map((row) => row[i]), ['0', '1', '2']);
    assert.equal(rows[19_999][i], '19999');
    assert.equal(rows[123][header.indexOf('properties.text')], 'row, "123"');
    assert.ok(!header.includes('properties.late'));
    assert.equal(rows[19_999][header.length - 1], '{"late":"yes"}');
    assert.equal(rows[19_998][header.length - 1], '');
  });
});

describe('tenancy and scopes', () => {
  test("another organization's project is 404 on every route", async () => {
    const other = await createTenant(f.server, 'events-other');
    for (const path of ['events/', `events/${f.uuids.get('E1')}/`, 'events/values/?key=$browser']) {
      await expectError(await f.server.api(`/api/projects/${f.projectId}/${path}`, { key: other.ownerKey }), 404, 'not_found');
      await expectError(await f.server.api(`/api/projects/${other.projectId}/${path}`), 404, 'not_found');
    }
    // Their own project works and holds none of ours.
    const theirs = await expectOk(await f.server.api(`/api/projects/${other.projectId}/events/`, { key: other.ownerKey }));
    assert.equal(theirs.count, 0);
  });

  test('query:read is required', async () => {
    const make = async (scopes: string[]) =>
      (await expectOk(await f.server.api('/api/personal_api_keys/', { method: 'POST', body: { label: scopes.join(), scopes } }), 201)).value;
    const flagsOnly = await make(['feature_flag:read']);
    await expectError(await f.events('', flagsOnly), 403, 'permission_denied');
    const reader = await make(['query:read']);
    assert.equal((await f.events('', reader)).status, 200);
    await expectError(await f.events('', 'phx_nope'), 401, 'invalid_personal_api_key');
  });
});
