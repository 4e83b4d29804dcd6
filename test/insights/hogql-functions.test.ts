/**
 * HogQL's array functions, lambdas, toTimeZone / toDateTime(x, tz) and argMax / argMin /
 * groupUniqArray, end to end through the query API, with exact expected values; bad input is a
 * 400 naming `query`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectError, expectOk } from '../helpers/api-fixtures.js';
import { post } from '../helpers/events-fixtures.js';
import { onClickHouse18 } from '../helpers/chdb.js';
import { startServer, type TestServer } from '../helpers/server.js';

describe('HogQL functions: arrays, lambdas, time zones, argMax', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ env: { SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', SIGHTLINE_GEOIP: 'false' } });
    // Paris leaves CET (UTC+1) for CEST (UTC+2) at 2024-03-31 01:00 UTC.
    await post(server, [
      { event: 'tz', distinct_id: 'alice', timestamp: '2024-03-31T00:30:00Z', properties: { n: 1, tags: ['a', 'b', 'a'] } },
      { event: 'tz', distinct_id: 'alice', timestamp: '2024-03-31T01:30:00Z', properties: { n: 2, tags: [] } },
      { event: 'tz', distinct_id: 'bob', timestamp: '2024-03-30T23:30:00Z', properties: { n: 3, tags: ['c', { k: 1 }] } },
    ]);
  });
  after(async () => {
    await server?.stop();
  });

  const hogql = (query: string) =>
    server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'HogQLQuery', query }, refresh: 'force_blocking' } });
  const rows = async (query: string) => (await expectOk(await hogql(query))).results;

  test('array literals and the array functions', async () => {
    assert.deepEqual(await rows('select [1, 2, 3], length([1, 2, 3]), has([1, 2, 3], 2), has([1, 2, 3], 5)'), [[[1, 2, 3], 3, true, false]]);
    assert.deepEqual(await rows("select indexOf(['a', 'b', 'c'], 'c'), indexOf(['a'], 'z'), arraySort([3, 1, 2]), arrayDistinct([2, 1, 2, 3, 1])"), [
      [3, 0, [1, 2, 3], [2, 1, 3]],
    ]);
    assert.deepEqual(await rows("select splitByChar(',', 'a,b,,c'), arrayMap(x -> x * 10, [1, 2]), arrayFilter(x -> x > 1, [1, 2, 3])"), [
      [['a', 'b', '', 'c'], [10, 20], [2, 3]],
    ]);
    assert.deepEqual(await rows("select arrayExists(x -> x = 'b', ['a', 'b']), arrayExists(x -> x = 'z', ['a']), arrayMap(s -> upper(s), splitByChar('-', 'x-y'))"), [
      [true, false, ['X', 'Y']],
    ]);
    // Nested lambdas see their own parameters and the outer ones.
    assert.deepEqual(await rows('select arrayMap(x -> arrayExists(y -> y = x + 1, [2, 3]), [1, 2, 3])'), [[[true, true, false]]]);
  });

  test('arrayJoin makes a row per element; JSONExtractArrayRaw reads properties', async () => {
    assert.deepEqual(await rows('select arrayJoin([3, 1, 2]) as v order by v'), [[1], [2], [3]]);
    if (onClickHouse18()) {
      // 18.16 has no JSONExtract functions: a clear 400 (docs/scale-out-cluster.md).
      await expectError(await hogql("select JSONExtractArrayRaw(properties, 'tags') from events"), 400, 'invalid_input', 'query');
      return;
    }
    assert.deepEqual(await rows("select toInt(properties.n) as n, JSONExtractArrayRaw(properties, 'tags') from events where event = 'tz' order by n"), [
      [1, ['"a"', '"b"', '"a"']],
      [2, []],
      [3, ['"c"', '{"k":1}']],
    ]);
    assert.deepEqual(
      await rows("select tag, count() from (select arrayJoin(JSONExtractArrayRaw(properties, 'tags')) as tag from events where event = 'tz') group by tag order by tag"),
      [
        ['"a"', 2],
        ['"b"', 1],
        ['"c"', 1],
        ['{"k":1}', 1],
      ],
    );
  });

  test('toTimeZone across the DST change: calendar functions read the given zone', async () => {
    assert.deepEqual(
      await rows(
        "select toInt(properties.n) as n, toHour(toTimeZone(timestamp, 'Europe/Paris')), toDate(toTimeZone(timestamp, 'Europe/Paris')), toHour(timestamp), toStartOfDay(toTimeZone(timestamp, 'America/New_York')) from events where event = 'tz' order by n",
      ).then((r) => r.map((row: unknown[]) => [row[0], row[1], row[2], row[3], new Date(String(row[4])).toISOString()])),
      [
        [1, 1, '2024-03-31', 0, '2024-03-30T04:00:00.000Z'],
        [2, 3, '2024-03-31', 1, '2024-03-30T04:00:00.000Z'],
        [3, 0, '2024-03-31', 23, '2024-03-30T04:00:00.000Z'],
      ],
    );
    // toDateTime(text, tz) reads the wall clock in that zone: 02:30 does not exist in Paris that night, 03:30 is UTC+2.
    const [[instant]] = await rows("select toDateTime('2024-03-31 03:30:00', 'Europe/Paris')");
    assert.equal(new Date(String(instant)).toISOString(), '2024-03-31T01:30:00.000Z');
  });

  test('argMax, argMin and groupUniqArray', async () => {
    assert.deepEqual(
      await rows("select distinct_id, argMax(toInt(properties.n), timestamp), argMin(toInt(properties.n), timestamp), arraySort(groupUniqArray(event)) from events where event = 'tz' group by distinct_id order by distinct_id"),
      [
        ['alice', 2, 1, ['tz']],
        ['bob', 3, 3, ['tz']],
      ],
    );
  });

  test('LIMIT n BY keeps the first n rows of each value, in ORDER BY order', async () => {
    assert.deepEqual(await rows("select distinct_id, toInt(properties.n) from events where event = 'tz' order by timestamp desc limit 1 by distinct_id"), [
      ['alice', 2],
      ['bob', 3],
    ]);
    assert.deepEqual(await rows("select distinct_id, toInt(properties.n) as n from events where event = 'tz' order by n limit 2 by distinct_id limit 1 offset 1"), [['alice', 2]]);
  });

  test('bad input is a 400 naming query', async () => {
    for (const query of [
      'select has([1])',
      'select arrayMap(1, [1])',
      'select arrayMap((x, y) -> x, [1])',
      'select x -> x',
      'select arrayMap(x -> x, 5)',
      'select length(x -> x)',
      "select toTimeZone(timestamp, event) from events",
      "select toTimeZone(timestamp, 'Mars/Olympus') from events",
      "select toDateTime('2024-01-01', 'Nowhere/Else')",
      "select splitByChar(',,', 'a')",
      'select event from events limit -1 by event',
      'select event from events limit 1 by',
      'select argMax(1)',
      'select [1, 2',
    ]) {
      await expectError(await hogql(query), 400, 'invalid_input', 'query');
    }
  });
});
