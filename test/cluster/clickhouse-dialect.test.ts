/**
 * The ClickHouse printer against the embedded mode, answer for answer: the same events go to a
 * server on DuckDB and to one with events in ClickHouse, and many HogQL queries (strings with
 * escapes and non-ASCII text, numbers, JSON, dates in time zones, aggregates, joins, subqueries,
 * unions, casts) and insights (trends, stickiness, the events query) must give the same rows on
 * both, or be refused with a 400 on ClickHouse where
 * docs/scale-out-cluster.md says so. It runs on ClickHouse 26.7 in process
 * (SIGHTLINE_TEST_EVENT_STORE=chdb, scripts/test-chdb.sh) and on the cluster's 18.16 servers
 * (SIGHTLINE_TEST_EVENT_STORE=clickhouse, scripts/test-cluster.sh): the same printed SQL on both.
 * The property values are drawn by fast-check with a fixed seed, plus hand-picked edge cases.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { expectOk, json } from '../helpers/api-fixtures.js';
import { onClickHouse } from '../helpers/chdb.js';
import { post } from '../helpers/events-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

const skip = onClickHouse() ? false : 'runs with SIGHTLINE_TEST_EVENT_STORE=chdb or clickhouse';

const HOUR = 3_600_000;
/** Around Paris's change to summer time (2024-03-31 01:00 UTC), and a month and a year apart. */
const BASE = Date.UTC(2024, 2, 30, 20, 0, 0);

const EDGE_STRINGS = ['', ' padded ', 'café', 'ÉTÉ', '日本語', '🙂 emoji', "it's", 'back\\slash', 'ends with \\', 'quote "inside"', 'tab\there', 'line\nbreak', 'percent % and _', 'a/b/', '123', '1.5e3', 'true', 'null'];
const EDGE_NUMBERS = [0, 1, -1, 7, -7, 0.1, 2.5, -2.5, 1e-7, 123456789, 2 ** 53 - 1, 1e20, -0.5, 1.25, 0.49999999999999994, 1e15];

function fixedEvents(): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [];
  const users = ['alice', 'bob', 'carol', 'dave', 'erin'];
  const strings = fc.sample(fc.string({ unit: 'binary', maxLength: 8 }), { numRuns: 12, seed: 27 });
  const numbers = fc.sample(fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true })), { numRuns: 12, seed: 28 });
  const allStrings = [...EDGE_STRINGS, ...strings];
  const allNumbers = [...EDGE_NUMBERS, ...numbers.map((n) => (Object.is(n, -0) ? 0 : n))];
  const count = Math.max(allStrings.length, allNumbers.length) + 6;
  for (let i = 0; i < count; i++) {
    const properties: Record<string, unknown> = { i, s: allStrings[i % allStrings.length], n: allNumbers[i % allNumbers.length] };
    if (i % 3 === 0) properties.b = i % 2 === 0;
    if (i % 4 === 1) properties.z = null;
    if (i % 5 === 2) properties.o = { k: `v${i % 3}`, deep: { x: i } };
    if (i % 5 === 3) properties.arr = [`t${i % 2}`, 't9'];
    if (i % 6 === 4) properties.d = new Date(BASE + i * 7 * HOUR).toISOString();
    if (i % 7 === 5) properties.ns = String(i * 10);
    properties.$current_url = i % 2 === 0 ? `https://example.com/p${i % 4}/` : `https://example.com/p${i % 4}`;
    events.push({
      uuid: randomUUID(),
      event: ['$pageview', 'signup', 'purchase', '$autocapture'][i % 4],
      distinct_id: users[i % users.length],
      // Hours apart over ~3 days, across the DST change, some a month or a year away.
      timestamp: new Date(BASE + i * 2 * HOUR + (i % 9 === 0 ? 31 * 24 * HOUR : 0) + (i % 13 === 0 ? 366 * 24 * HOUR : 0) + i * 1234).toISOString(),
      properties,
    });
  }
  return events;
}

/** Each query: its rows must match the embedded mode's exactly, in order (every query orders fully). */
const SAME: string[] = [
  // Strings
  'select i, s, length(s), lower(s), upper(s), concat(s, \'|\', event) from (select toInt(properties.i) as i, properties.s as s, event from events) order by i',
  "select toInt(properties.i) as i, replaceAll(properties.s, 'a', 'A'), trim(properties.s), empty(properties.s), notEmpty(properties.s) from events order by i",
  "select toInt(properties.i) as i, properties.s like '%a%', properties.s ilike '%É%', properties.s not like '%\\\\%', properties.s in ('café', '123', 'nope') from events order by i",
  "select toInt(properties.i) as i, match(properties.s, '^[a-z]+$'), extract(properties.s, '([0-9]+)'), replaceRegexpAll(properties.s, '[aeiou]', '*') from events order by i",
  // Numbers and casts
  'select toInt(properties.i) as i, properties.n, toFloat(properties.n), toInt(properties.n), toString(properties.n) from events order by i',
  'select toInt(properties.i) as i, toFloat(properties.n) * 2, toFloat(properties.n) / 4, toInt(properties.i) % 3, -toInt(properties.i) % 3, round(toFloat(properties.n)), round(toFloat(properties.n), 2), round(toFloat(properties.n), -2), abs(toFloat(properties.n)) from events order by i',
  'select toInt(properties.i) as i, toInt(properties.ns) + 1, toFloat(properties.ns), properties.b, properties.z, isNull(properties.z), isNull(properties.missing) from events order by i',
  'select toInt(properties.i) as i, toString(toInt(properties.i) * 1.5), toString(toInt(properties.i) > 3), toString(timestamp) from events order by i',
  "select toInt(properties.i) as i, toDateTime(properties.d), toDate(properties.d), toDateTime('2024-03-31 01:30:00') from events order by i",
  // JSON
  "select toInt(properties.i) as i, properties.o, properties.o.k, properties.o.deep.x, properties.arr from events order by i",
  "select toInt(properties.i) as i, JSONExtractString(properties, 's'), JSONExtractInt(properties, 'i'), JSONExtractFloat(properties, 'n'), JSONExtractBool(properties, 'b'), JSONHas(properties, 'z'), JSONHas(properties, 'missing'), JSONExtractRaw(properties, 'o', 'k') from events order by i",
  // Dates and time zones
  'select toInt(properties.i) as i, timestamp, toStartOfHour(timestamp), toStartOfDay(timestamp), toStartOfWeek(timestamp), toStartOfWeek(timestamp, 1), toStartOfMonth(timestamp), toDate(timestamp) from events order by i',
  "select toInt(properties.i) as i, toStartOfDay(toTimeZone(timestamp, 'Europe/Paris')), toDate(toTimeZone(timestamp, 'America/New_York')), toStartOfHour(toTimeZone(timestamp, 'Asia/Kathmandu')) from events order by i",
  "select toInt(properties.i) as i, dateDiff('day', toDateTime('2024-03-01 00:00:00'), timestamp), dateDiff('hour', toDateTime('2024-03-30 00:00:00'), timestamp), dateDiff('month', toDateTime('2023-12-31 23:00:00'), timestamp), dateDiff('week', toDateTime('2024-01-01 00:00:00'), timestamp) from events order by i",
  "select toInt(properties.i) as i, dateTrunc('hour', timestamp), dateTrunc('day', timestamp), dateTrunc('week', timestamp), dateTrunc('month', timestamp), dateTrunc('quarter', timestamp), dateTrunc('year', timestamp) from events order by i",
  'select toInt(properties.i) as i, toYear(timestamp), toQuarter(timestamp), toMonth(timestamp), toDayOfMonth(timestamp), toHour(timestamp), toMinute(timestamp), toSecond(timestamp), toDayOfWeek(timestamp), toDayOfYear(timestamp), toUnixTimestamp(timestamp) from events order by i',
  "select toInt(properties.i) as i, toStartOfMinute(timestamp), toStartOfQuarter(timestamp), toStartOfYear(timestamp), toHour(toTimeZone(timestamp, 'Europe/Paris')), toDayOfWeek(toTimeZone(timestamp, 'Pacific/Auckland')) from events order by i",
  // The hour clocks go back over (New York 2025-11-02, Paris 2024-10-27): one instant per wall time, whichever half it is in.
  "select toStartOfHour(toTimeZone(toDateTime('2025-11-02 05:10:00'), 'America/New_York')), toStartOfHour(toTimeZone(toDateTime('2025-11-02 06:10:00'), 'America/New_York')), dateTrunc('hour', toTimeZone(toDateTime('2024-10-27 00:30:00'), 'Europe/Paris')), dateTrunc('hour', toTimeZone(toDateTime('2024-10-27 01:30:00'), 'Europe/Paris')), toStartOfMinute(toTimeZone(toDateTime('2025-11-02 05:10:30'), 'America/New_York')), dateTrunc('second', toTimeZone(toDateTime('2025-11-02 05:10:30'), 'America/New_York')) from events where toInt(properties.i) = 0",
  "select toInt(properties.i) as i, timestamp + interval 1 day, timestamp - interval 2 hour, timestamp + interval 1 month, toDate(timestamp) + interval 3 day, timestamp > toDateTime('2024-03-31 00:00:00') from events order by i",
  // Aggregates
  'select event, count(), count(distinct distinct_id), countIf(toInt(properties.i) > 10), min(timestamp), max(timestamp) from events group by event order by event',
  'select distinct_id, median(toInt(properties.i)), quantile(0.9)(toInt(properties.i)), uniq(event), uniqExact(event) from events group by distinct_id order by distinct_id',
  'select distinct_id, sum(toInt(properties.i)), avg(toInt(properties.i)), sumIf(toInt(properties.i), event = \'signup\'), min(properties.s), max(properties.s) from events group by distinct_id order by distinct_id',
  'select distinct_id, argMax(toInt(properties.i), timestamp), argMin(toInt(properties.i), timestamp), arraySort(groupUniqArray(event)), arraySort(groupArray(toInt(properties.i))) from events group by distinct_id order by distinct_id',
  'select toStartOfDay(timestamp) as day, count() from events group by day having count() > 1 order by day',
  'select event, count() as c from events group by event order by c desc, event limit 2 offset 1',
  'select distinct event from events order by event',
  'select distinct_id, event, count() from events group by distinct_id, event order by distinct_id, event limit 1 by distinct_id',
  // Subqueries, joins, unions, CTEs
  'select d, c from (select distinct_id as d, count() as c from events group by distinct_id) where c > 4 order by d',
  "select e.distinct_id, e.event, s.c from events e join (select distinct_id, count() as c from events where event = 'signup' group by distinct_id) s on s.distinct_id = e.distinct_id where e.event = 'purchase' order by e.distinct_id, toInt(e.properties.i)",
  "select e.distinct_id, s.c from events e left join (select distinct_id, count() as c from events where event = 'nothing' group by distinct_id) s on s.distinct_id = e.distinct_id where e.event = 'signup' order by e.distinct_id, toInt(e.properties.i)",
  "select distinct_id from events where distinct_id in (select distinct_id from events where event = 'purchase') and event = 'signup' order by distinct_id",
  "select x from (select event as x from events where event = 'signup' union all select distinct_id as x from events where distinct_id = 'bob') order by x",
  "select x from (select event as x from events union distinct select event as x from events) order by x",
  "with buyers as (select distinct_id from events where event = 'purchase') select count() from events where distinct_id in (select distinct_id from buyers)",
  'select count() from (select distinct_id, count() as c from events group by distinct_id)',
  // Persons
  'select distinct_id, person.properties.email, person.properties.plan from events where event = \'signup\' order by distinct_id, toInt(properties.i)',
  'select person.properties.plan as plan, count() from events group by plan order by plan',
  // Conditionals
  "select toInt(properties.i) as i, if(toInt(properties.i) > 5, 'big', 'small'), multiIf(event = 'signup', 1, event = 'purchase', 2, 0), coalesce(properties.z, properties.s), ifNull(properties.z, 'none'), isNotNull(properties.o), case when properties.b = 'true' then 'yes' else 'no' end from events order by i",
];

/**
 * The same answers on 26.7 only: 18.16 cuts characters outside the Basic Multilingual Plane
 * (emoji) wrongly in substringUTF8 (docs/scale-out-cluster.md).
 */
const SAME_ON_CURRENT_SERVERS: string[] = [
  'select i, substring(s, 2, 3), substring(s, 2), substring(s, 0, 2) from (select toInt(properties.i) as i, properties.s as s from events) order by i',
];
const on1816 = process.env.SIGHTLINE_TEST_EVENT_STORE === 'clickhouse';

/** Window functions and JSONExtract, which 18.16 lacks: refused there (a 400), the same answers on 26.7. */
const NEEDS_CURRENT_SERVER: string[] = [
  'select event, count() over (partition by event) from events order by event, toInt(properties.i)',
  "select toInt(properties.i) as i, JSONExtractArrayRaw(properties, 'arr') from events order by i",
  'select event, row_number() over (order by timestamp, toInt(properties.i)) from events order by timestamp, toInt(properties.i)',
];

/** Not runnable on the ClickHouse printer on any server; refused with a 400. */
const REFUSED: string[] = ["select substring(event, 1, toInt(properties.i)) from events"];

const RANGE = { date_from: '2024-03-29', date_to: '2024-04-03' };
const WIDE = { date_from: '2024-01-01', date_to: '2025-06-01' };
/** Insights: the same results on both servers. */
const INSIGHTS: Record<string, unknown>[] = [
  { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }, { kind: 'EventsNode', event: null }], interval: 'day', dateRange: RANGE },
  { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: null, math: 'dau' }], interval: 'hour', dateRange: { date_from: '2024-03-30', date_to: '2024-03-31' } },
  { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: null, math: 'sum', math_property: 'i' }, { kind: 'EventsNode', event: null, math: 'avg', math_property: 'n' }], interval: 'week', dateRange: WIDE },
  { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: null, math: 'max', math_property: 'i' }], interval: 'month', dateRange: WIDE, trendsFilter: { display: 'ActionsBarValue' } },
  { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: null, properties: [{ key: 'i', value: 10, operator: 'gt', type: 'event' }] }], interval: 'day', dateRange: RANGE },
  { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: null, properties: [{ key: 's', value: 'a', operator: 'icontains', type: 'event' }, { key: 'b', operator: 'is_set', type: 'event' }] }], interval: 'day', dateRange: RANGE },
  { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: null }], interval: 'day', dateRange: RANGE, properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }] },
  { kind: 'StickinessQuery', series: [{ kind: 'EventsNode', event: null }, { kind: 'EventsNode', event: 'signup' }], interval: 'day', dateRange: RANGE },
  { kind: 'EventsQuery', select: ['event', 'distinct_id', 'properties.s', 'timestamp'], where: ["properties.i > 5"], orderBy: ['timestamp DESC'], after: '2024-01-01', before: '2025-12-31' },
  // A join on a range (returns after the cohort's start): an inner join's other conditions are printed in WHERE.
  { kind: 'RetentionQuery', dateRange: RANGE, retentionFilter: { period: 'Day', totalIntervals: 4, retentionType: 'retention_first_time', targetEntity: { id: '$pageview', type: 'events' }, returningEntity: { id: 'signup', type: 'events' } } },
];

/** Insights whose statements use window functions: refused on 18.16 (a 400), the same answers on 26.7. */
const INSIGHTS_NEEDING_WINDOWS: Record<string, unknown>[] = [
  { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: null }], interval: 'day', dateRange: RANGE, breakdownFilter: { breakdown: '$current_url', breakdown_type: 'event' } },
  { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: null }], interval: 'day', dateRange: RANGE, breakdownFilter: { breakdown: 'plan', breakdown_type: 'person' } },
  { kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: null }], interval: 'day', dateRange: RANGE },
  { kind: 'PathsQuery', dateRange: RANGE, pathsFilter: { includeEventTypes: ['custom_event', '$pageview'] } },
  { kind: 'FunnelsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }, { kind: 'EventsNode', event: 'signup' }], dateRange: RANGE },
];

describe('ClickHouse printer answers as the embedded mode does', { skip }, () => {
  let clickhouse: TestServer;
  let embedded: TestServer;
  const env = { SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', SIGHTLINE_GEOIP: 'false' };

  before(async () => {
    [clickhouse, embedded] = await Promise.all([startServer({ env }), startServer({ env: { ...env, SIGHTLINE_CLICKHOUSE_URL: '' } })]);
    const events = fixedEvents();
    const identify = [
      { event: '$identify', distinct_id: 'alice', timestamp: new Date(BASE).toISOString(), properties: { $set: { email: 'alice@example.com', plan: 'pro' } } },
      { event: '$identify', distinct_id: 'bob', timestamp: new Date(BASE).toISOString(), properties: { $set: { email: 'bob@example.com', plan: 'free' } } },
    ].map((e) => ({ ...e, uuid: randomUUID() }));
    for (const server of [clickhouse, embedded]) {
      await post(server, identify);
      await post(server, events);
    }
  });
  after(async () => {
    await Promise.all([clickhouse?.stop(), embedded?.stop()]);
  });

  const hogql = (server: TestServer, query: string) =>
    server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'HogQLQuery', query }, refresh: 'force_blocking' } });

  test('the servers hold the same events', async () => {
    const count = 'select count(), sum(toInt(properties.i)) from events';
    const [a, b] = await Promise.all([hogql(clickhouse, count), hogql(embedded, count)]);
    assert.deepEqual((await expectOk(a)).results, (await expectOk(b)).results);
  });

  for (const query of [...SAME, ...SAME_ON_CURRENT_SERVERS, ...(on1816 ? [] : NEEDS_CURRENT_SERVER)]) {
    const known = on1816 && SAME_ON_CURRENT_SERVERS.includes(query) && 'differs on 18.16 (a bug of that server)';
    test(query, { skip: known }, async () => {
      const [onClickHouseServer, onEmbedded] = await Promise.all([hogql(clickhouse, query), hogql(embedded, query)]);
      const expected = await expectOk(onEmbedded);
      const actual = await expectOk(onClickHouseServer);
      assert.deepEqual(actual.types, expected.types);
      assert.deepEqual(normalize(actual.results), normalize(expected.results));
      assert.ok(expected.results.length > 0, 'the query must have rows to compare');
    });
  }

  const insight = (server: TestServer, query: unknown) => server.api('/api/projects/@current/query/', { method: 'POST', body: { query, refresh: 'force_blocking' } });
  for (const query of [...INSIGHTS, ...(on1816 ? [] : INSIGHTS_NEEDING_WINDOWS)]) {
    test(`insight: ${JSON.stringify(query)}`, async () => {
      const [onClickHouseServer, onEmbedded] = await Promise.all([insight(clickhouse, query), insight(embedded, query)]);
      const expected = await expectOk(onEmbedded);
      const actual = await expectOk(onClickHouseServer);
      assert.deepEqual(normalize(actual.results), normalize(expected.results));
    });
  }

  // Random text and numbers as constants: the same answers as the embedded mode (its engine is the reference).
  const answer = async (server: TestServer, query: string) => {
    const response = await hogql(server, query);
    const body = await json(response);
    return { status: response.status, results: response.status === 200 ? normalize(body.results) : body.code };
  };
  const hogqlString = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

  test('random strings: length, case, substrings, comparisons, concatenation', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 12 }), fc.string({ unit: 'grapheme-ascii', maxLength: 3 }), async (text, part) => {
        const [s, p] = [hogqlString(text), hogqlString(part)];
        const query = `select length(${s}), lower(${s}), upper(${s}), concat(${s}, ${p}), ${s} like concat('%', ${p}, '%'), ${s} < ${p}, replaceAll(${s}, ${p}, '_'), trim(${s}), empty(${s})`;
        const [a, b] = await Promise.all([answer(clickhouse, query), answer(embedded, query)]);
        assert.deepEqual(a, b, query);
      }),
      { numRuns: 60, seed: 29 },
    );
  });

  test('random numbers: round to any digits, as text, integer and float arithmetic', async () => {
    const halves = fc.integer({ min: -2000, max: 2000 }).map((n) => n / 2);
    const number = fc.oneof(halves, fc.double({ min: -1e9, max: 1e9, noNaN: true, noDefaultInfinity: true }), fc.integer({ min: -1e6, max: 1e6 }).map((n) => n / 1000));
    await fc.assert(
      fc.asyncProperty(number, fc.integer({ min: -3, max: 5 }), async (x, digits) => {
        // Read through a row, as values are: 18.16 refuses some if()s over a constant Nullable (docs/scale-out-cluster.md).
        const n = `toFloat(if(event = '', '', ${hogqlString(String(Object.is(x, -0) ? 0 : x))}))`;
        const query = `select round(${n}), round(${n}, ${digits}), toString(round(${n})), toInt(${n}), ${n} * 3, ${n} / 7, abs(${n}), toString(toInt(${n})) from events where event = 'signup' limit 1`;
        const [a, b] = await Promise.all([answer(clickhouse, query), answer(embedded, query)]);
        assert.deepEqual(a, b, query);
      }),
      { numRuns: 80, seed: 30 },
    );
  });

  for (const query of on1816 ? INSIGHTS_NEEDING_WINDOWS : []) {
    test(`refused insight: ${JSON.stringify(query)}`, async () => {
      const response = await insight(clickhouse, query);
      const body = await json(response);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.match(body.detail, /cannot run on this event store's ClickHouse/);
      await expectOk(await insight(embedded, query));
    });
  }

  for (const query of [...REFUSED, ...(on1816 ? NEEDS_CURRENT_SERVER : [])]) {
    test(`refused: ${query}`, async () => {
      const response = await hogql(clickhouse, query);
      const body = await json(response);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.match(body.detail, /cannot run on this event store's ClickHouse/);
      await expectOk(await hogql(embedded, query));
    });
  }
});

/** Floats to 12 significant digits (the engines sum in different orders); everything else as is. */
function normalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalize);
  if (typeof value === 'number' && !Number.isInteger(value)) return Number(value.toPrecision(12));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v)]));
  return value;
}
