/**
 * HogQLQuery end to end: whole SELECT statements over events, persons, person_distinct_ids and
 * groups, PostHog's row limits and response shape, 400s naming `query`, and tenant isolation
 * that no statement can escape (subqueries, unions, joins, CTEs, lazy person joins).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTenant, expectError, expectOk, type Tenant } from '../helpers/api-fixtures.js';
import { post } from '../helpers/events-fixtures.js';
import { onClickHouse18 } from '../helpers/chdb.js';
import { startServer, type TestServer } from '../helpers/server.js';

const DAY = 86_400_000;

describe('HogQLQuery', () => {
  let server: TestServer;
  let other: Tenant;
  const now = Date.now();
  const at = (daysAgo: number) => new Date(now - daysAgo * DAY).toISOString();

  before(async () => {
    server = await startServer({ env: { SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', SIGHTLINE_GEOIP: 'false' } });
    other = await createTenant(server, 'rival');
    // Ours: 3 pageviews by alice and bob in the last week, one old signup, 120 ticks.
    await post(server, [
      { event: '$pageview', distinct_id: 'alice', timestamp: at(1), properties: { $browser: 'Chrome', plan: 'pro', amount: 10, nested: { a: 'x' } } },
      { event: '$pageview', distinct_id: 'alice', timestamp: at(2), properties: { $browser: 'Firefox', amount: 5 } },
      { event: '$pageview', distinct_id: 'bob', timestamp: at(3), properties: { $browser: 'Chrome', amount: 1, $set: { email: 'bob@example.com' } } },
      { event: 'signup', distinct_id: 'bob', timestamp: at(20), properties: { plan: 'free' } },
      { event: 'long', distinct_id: 'alice', timestamp: at(30), properties: { text: `${'a'.repeat(50_000)}!` } },
      ...Array.from({ length: 120 }, (_, i) => ({ event: 'tick', distinct_id: `t${i % 7}`, timestamp: at(0.5), properties: { i } })),
    ]);
    // Theirs: events, a person and a property name ours has too; none may ever show up.
    await post(
      server,
      [
        { event: '$pageview', distinct_id: 'alice', timestamp: at(1), properties: { $browser: 'Chrome', secret: 'theirs', $set: { email: 'spy@rival.test' } } },
        { event: 'rival_only', distinct_id: 'mallory', timestamp: at(1), properties: { secret: 'theirs' } },
      ],
      other.projectKey,
    );
  });
  after(async () => {
    await server?.stop();
  });

  const hogql = (query: string, extra: Record<string, unknown> = {}) =>
    server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'HogQLQuery', query, ...extra }, refresh: 'force_blocking' } });
  const rows = async (query: string) => (await expectOk(await hogql(query))).results;

  test('count by event, with now() - interval, count(distinct) and PostHog’s shape', async () => {
    const body = await expectOk(
      await hogql('select event, count() as c, count(distinct distinct_id) as people from events where timestamp > now() - interval 7 day group by event order by c desc'),
    );
    assert.deepEqual(body.results, [
      ['tick', 120, 7],
      ['$pageview', 3, 2],
    ]);
    assert.deepEqual(body.columns, ['event', 'c', 'people']);
    assert.deepEqual(body.types, [
      ['event', 'String'],
      ['c', 'UInt64'],
      ['people', 'UInt64'],
    ]);
    assert.equal(body.hasMore, false);
    assert.equal(body.limit, 100);
    assert.equal(body.offset, 0);
    assert.match(body.hogql, /LIMIT 101$/);
    assert.equal(body.timezone, 'UTC');
    assert.equal(body.is_cached, false);
  });

  test('no LIMIT answers 100 rows and hasMore; an explicit LIMIT is kept and capped at 50,000', async () => {
    let body = await expectOk(await hogql("select properties.i from events where event = 'tick' order by toInt(properties.i)"));
    assert.equal(body.results.length, 100);
    assert.equal(body.hasMore, true);
    assert.equal(body.results[99][0], '99');
    body = await expectOk(await hogql("select toInt(properties.i) as i from events where event = 'tick' order by i limit 5 offset 10"));
    assert.deepEqual(body.results, [[10], [11], [12], [13], [14]]);
    assert.equal(body.hasMore, null);
    assert.equal(body.limit, null);
    body = await expectOk(await hogql("select 1 from events limit 1000000"));
    assert.equal(body.results.length, 125);
    body = await expectOk(await hogql("select i from (select toInt(properties.i) as i from events where event = 'tick') order by i limit 2, 3"));
    assert.deepEqual(body.results, [[2], [3], [4]]);
  });

  test('multiIf, if, CASE, JSONExtract*, match, like, coalesce and property access', async () => {
    const results = await rows(`
      select distinct_id,
             multiIf(properties.$browser = 'Chrome', 'c', properties.$browser = 'Firefox', 'f', 'other') as b,
             case when toFloat(properties.amount) > 4 then 'big' else 'small' end as size,
             JSONExtractString(properties, 'nested', 'a') as na,
             JSONExtractInt(properties, 'amount') as amount,
             JSONHas(properties, 'plan') as has_plan,
             match(properties.$browser, '^Ch.*e$') as chrome,
             properties.$browser ilike 'fire%' as fox,
             coalesce(properties.plan, 'none') as plan
      from events where event = '$pageview' order by timestamp desc`);
    assert.deepEqual(results, [
      ['alice', 'c', 'big', 'x', 10, true, true, false, 'pro'],
      ['alice', 'f', 'big', '', 5, false, false, true, 'none'],
      ['bob', 'c', 'small', '', 1, false, true, false, 'none'],
    ]);
  });

  test('dates: toStartOfDay, dateDiff, toDate, datetimes in the project zone, dateTrunc', async () => {
    const results = await rows("select timestamp, toStartOfDay(timestamp), dateDiff('day', timestamp, now()), dateTrunc('month', timestamp) from events where event = 'signup'");
    const [ts, day, diff, month] = results[0];
    assert.equal(ts, new Date(now - 20 * DAY).toISOString().replace('Z', '').replace(/(\.\d{3})$/, '$1000') + '+00:00');
    assert.match(day, /T00:00:00\+00:00$/);
    assert.ok(diff === 20 || diff === 21, String(diff));
    assert.match(month, /-01T00:00:00\+00:00$/);
  });

  test('subqueries, IN (SELECT …), WITH, UNION ALL, JOINs, HAVING and window functions', async () => {
    assert.deepEqual(await rows("select count() from (select distinct_id from events where event = '$pageview' group by distinct_id)"), [[2]]);
    assert.deepEqual(await rows("select count() from events where distinct_id in (select distinct_id from events where event = 'signup')"), [[2]]);
    assert.deepEqual(await rows("with pv as (select distinct_id, count() as n from events where event = '$pageview' group by distinct_id) select distinct_id, n from pv order by n desc"), [
      ['alice', 2],
      ['bob', 1],
    ]);
    assert.deepEqual(await rows("select event from events where event = 'signup' union all select event from events where event = 'signup'"), [['signup'], ['signup']]);
    assert.deepEqual(await rows("select event, count() as c from events group by event having c > 3"), [['tick', 120]]);
    // ClickHouse 18.16 (the local cluster) takes one join per SELECT, and the person lookup is one
    // already; it has no window functions (docs/scale-out-cluster.md).
    if (!onClickHouse18()) {
      const joined = await rows(
        "select e.distinct_id, p.properties.email from events e join persons p on p.id = e.person_id where e.event = 'signup'",
      );
      assert.deepEqual(joined, [['bob', 'bob@example.com']]);
      assert.deepEqual(
        await rows("select distinct_id, row_number() over (partition by distinct_id order by timestamp) as n from events where event = '$pageview' order by distinct_id, n"),
        [
          ['alice', 1],
          ['alice', 2],
          ['bob', 1],
        ],
      );
    }
    assert.deepEqual(await rows("select person.properties.email from events where event = 'signup'"), [['bob@example.com']]);
    assert.deepEqual(await rows('select count() from person_distinct_ids'), [[9]]);
    assert.deepEqual(await rows("select quantile(0.5)(toFloat(properties.amount)), median(toFloat(properties.amount)) from events where event = '$pageview'"), [[5, 5]]);
  });

  test('the functions give ClickHouse’s values on the event store', async () => {
    const checks: Array<[string, unknown]> = [
      ["countIf(event = 'tick')", 120],
      ["sumIf(toInt(properties.amount), event = '$pageview')", 16],
      ["avgIf(toFloat(properties.amount), event = '$pageview')", 16 / 3],
      ["uniqExact(event)", 3],
      ["quantiles(0, 1)(toFloat(properties.amount))", [1, 10]],
      ["length(groupArray(properties.plan))", 2],
      ["toYear(toDateTime('2024-03-05 10:20:30'))", 2024],
      ["toMonth(toDateTime('2024-03-05 10:20:30'))", 3],
      ["toDayOfWeek(toDateTime('2024-03-10 10:20:30'))", 7],
      ["toHour(toDateTime('2024-03-05 10:20:30'))", 10],
      ["toUnixTimestamp(toDateTime('2024-01-01 00:00:00'))", 1704067200],
      ["dateAdd('day', 1, toDateTime('2024-01-31 00:00:00'))", '2024-02-01T00:00:00+00:00'],
      ["toDateTime('2024-03-31 00:00:00') - interval 1 month", '2024-02-29T00:00:00+00:00'],
      ["toDate('2024-03-01') - interval 1 day", '2024-02-29'],
      ["toStartOfYear(toDateTime('2024-03-05 10:20:30'))", '2024-01-01'],
      ["dateTrunc('week', toDateTime('2024-03-10 10:20:30'))", '2024-03-04T00:00:00+00:00'],
      ["substring('abcdef', 2, 3)", 'bcd'],
      ["replaceAll('a-b-c', '-', '+')", 'a+b+c'],
      ["extract('utm_source=news&x=1', 'utm_source=([^&]+)')", 'news'],
      ["extract('abc123', '[0-9]+')", '123'],
      ["replaceRegexpAll('a1b22c', '[0-9]+', '#')", 'a#b#c'],
      ["JSONExtractFloat('{\"a\": 1.5}', 'a')", 1.5],
      ["JSONExtractBool('{\"a\": true}', 'a')", true],
      ["JSONExtractRaw('{\"a\": {\"b\": 1}}', 'a')", '{"b":1}'],
      ["JSONExtractString('not json', 'a')", ''],
      ["ifNull(NULL, 'x')", 'x'],
      ["isNull(NULL)", true],
      ["if(1 = 1, 'y', 'n')", 'y'],
      ["1 between 0 and 2", true],
    ];
    // Aggregates over the table, and the rest as any() of a constant: one row.
    const [values] = await rows(`select ${checks.map(([expr]) => (/If\(|uniqExact|quantiles|groupArray/.test(expr) ? expr : `any(${expr})`)).join(', ')} from events where event != 'long'`);
    checks.forEach(([expr, expected], i) => {
      if (typeof expected === 'number' && !Number.isInteger(expected)) assert.ok(Math.abs((values[i] as number) - expected) < 1e-9, expr);
      else assert.deepEqual(values[i], expected, expr);
    });
  });

  test('{filters} takes the node’s properties and date range; {name} and {variables.x} take values', async () => {
    const filtered = await expectOk(
      await hogql('select count() from events where {filters}', {
        filters: { properties: [{ type: 'event', key: '$browser', value: 'Chrome', operator: 'exact' }], dateRange: { date_from: '-7d' } },
      }),
    );
    assert.deepEqual(filtered.results, [[2]]);
    const old = await expectOk(await hogql("select count() from events e where {filters} and e.event = 'signup'", { filters: { dateRange: { date_from: '-30d', date_to: '-10d' } } }));
    assert.deepEqual(old.results, [[1]]);
    assert.deepEqual((await expectOk(await hogql('select count() from events where {filters}'))).results, [[125]]);
    const values = await expectOk(
      await hogql("select {n} + 1, {name}, {variables.plan} from events where properties.plan = {variables.plan} limit 1", {
        values: { n: 41, name: "x' or 1=1 --" },
        variables: { v1: { variableId: 'v1', code_name: 'plan', value: 'pro' } },
      }),
    );
    assert.deepEqual(values.results, [[42, "x' or 1=1 --", 'pro']]);
    await expectError(await hogql('select {missing}'), 400, 'invalid_input', 'query');
    await expectError(await hogql('select {n}', { values: { n: { nested: true } } }), 400, 'invalid_input', 'query');
    await expectError(await hogql('select {filters}'), 400, 'invalid_input', 'query');
    await expectError(await hogql('select 1', { filters: { properties: 'x' } }), 400, 'not_a_list', 'filters.properties');
  });

  test('another project’s rows are unreachable, whatever the statement says', async () => {
    const hostile = [
      "select count() from events where properties.secret = 'theirs' or 1 = 1 and properties.secret = 'theirs'",
      "select count() from events where event = 'rival_only'",
      "select count() from (select * from events) where event = 'rival_only'",
      "select count() from events where event = 'rival_only' union all select count() from events where event = 'rival_only'",
      "with x as (select * from events where event = 'rival_only') select count() from x",
      "select count() from events a join events b on a.distinct_id = b.distinct_id where b.event = 'rival_only' or a.event = 'rival_only'",
      "select count() from events a full join events b on a.uuid = b.uuid where a.event = 'rival_only' or b.event = 'rival_only'",
      "select count() from persons where properties.email = 'spy@rival.test'",
      "select count() from events where person.properties.email = 'spy@rival.test'",
      "select count() from person_distinct_ids where distinct_id = 'mallory'",
      "select (select count() from events where event = 'rival_only')",
      "select count() from events where event in (select event from events where event = 'rival_only')",
    ];
    for (const query of hostile) {
      const results = await rows(query);
      assert.ok(
        results.every((row: unknown[]) => row.every((v) => v === 0)) || results.length === 0,
        `${query} → ${JSON.stringify(results)}`,
      );
    }
    // Physical names other than the four tables, and the project column, are not there at all.
    for (const query of ['select * from sync_state', 'select project_id from events', 'select * from main.events', 'select * from duckdb_tables()', 'select * from events; drop table events']) {
      await expectError(await hogql(query), 400, 'invalid_input', 'query');
    }
    // The rival sees its own.
    const theirs = await server.api(`/api/projects/${other.projectId}/query/`, {
      method: 'POST',
      key: other.ownerKey,
      body: { query: { kind: 'HogQLQuery', query: "select count() from events where event = 'rival_only'" } },
    });
    assert.deepEqual((await expectOk(theirs)).results, [[1]]);
  });

  test('bad statements are 400s naming query, never 500s', async () => {
    const bad = [
      'select',
      'select from events',
      'select nope from events',
      'select count( from events',
      'select * from nowhere',
      "select match(event, '(') from events",
      'select sum(count()) from events',
      'select row_number() from events',
      'select 1 union select 2',
      'select event, count() from events',
      "select toDate('not a date')",
      'select interval 1 fortnight',
      "select JSONExtractString(properties, event) from events",
      'select 1 limit -1',
      'select * from events limit 1e3',
      `select ${'('.repeat(200)}1${')'.repeat(200)}`,
      'select ' + Array.from({ length: 2000 }, () => '1').join(' + '),
      "select quantile(2)(1)",
      'select {filters}',
      'select { oops',
    ];
    for (const query of bad) {
      const response = await hogql(query);
      const body = await response.json();
      assert.equal(response.status, 400, `${query.slice(0, 60)} → ${response.status} ${JSON.stringify(body)}`);
      assert.equal(body.attr, 'query', query.slice(0, 60));
    }
    await expectError(await hogql(''), 400, 'required', 'query');
    await expectError(await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'HogQLQuery', query: 42 } } }), 400, 'required', 'query');
  });

  test('a hostile regex in match() does not hold up other requests', { timeout: 60_000 }, async () => {
    // Patterns that backtracking engines take exponential time over on 50,000 'a's and a '!':
    // RE2 (DuckDB's regexp) runs in linear time, so they are a scan like any other.
    const slow = hogql("select countIf(match(properties.text, '(a+)+$')), countIf(match(properties.text, '^(a|aa)*$')), countIf(match(properties.text, '(a*)*b')) from events where event = 'long'");
    const started = Date.now();
    const quick = await expectOk(await hogql('select 41 + 1'));
    assert.deepEqual(quick.results, [[42]]);
    assert.ok(Date.now() - started < 10_000);
    const body = await expectOk(await slow);
    assert.deepEqual(body.results, [[0, 0, 0]]);
    assert.ok(Date.now() - started < 20_000, `${Date.now() - started} ms`);
  });
});
