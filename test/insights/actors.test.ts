/**
 * ActorsQuery without a source: persons as rows, `person` and `person_display_name` objects,
 * search over e-mail and distinct ids, paging; the persons behind a trend's point and behind a
 * funnel's steps, a retention row, a stickiness point, a lifecycle point and a path; and 400s for bad select lists or a source whose kind cannot list its persons.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { referenceGroupsPerBucket } from '../unit/insights/reference/trends.js';
import { referenceSteps } from '../unit/insights/reference/funnels.js';
import { eventAt, sendEvents } from '../helpers/insights.js';
import { resolveDateRange } from '../../src/insights/time/index.js';
import { expectError, expectOk } from '../helpers/api-fixtures.js';
import { post } from '../helpers/events-fixtures.js';
import { onClickHouse18 } from '../helpers/chdb.js';
import { startServer, type TestServer } from '../helpers/server.js';

// Funnels chain their steps with as-of joins, lifecycle and paths use window functions: the ClickHouse 18.16 of the local cluster has neither (docs/scale-out-cluster.md).
const needsAsOfJoins = onClickHouse18() && 'funnels need as-of joins, which ClickHouse 18.16 lacks';
const needsWindowFunctions = onClickHouse18() && 'lifecycle and paths need window functions, which ClickHouse 18.16 lacks';

describe('ActorsQuery', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', SIGHTLINE_GEOIP: 'false' } });
    await post(server, [
      { event: 'a', distinct_id: 'anon-1', timestamp: '2025-03-01T10:00:00Z', properties: {} },
      { event: '$identify', distinct_id: 'alice', timestamp: '2025-03-01T10:01:00Z', properties: { $anon_distinct_id: 'anon-1', $set: { email: 'alice@example.com' } } },
      { event: 'a', distinct_id: 'bob', timestamp: '2025-03-02T10:00:00Z', properties: { $set: { name: 'Bob' } } },
      { event: 'a', distinct_id: 'carol', timestamp: '2025-03-03T10:00:00Z', properties: {} },
    ]);
  });
  after(async () => {
    await server?.stop();
  });

  const actors = (query: Record<string, unknown>) => server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'ActorsQuery', ...query } } });

  test('lists persons with their distinct ids, display names and chosen columns', async () => {
    const body = await expectOk(await actors({ select: ['person', 'person_display_name', 'properties.email'], orderBy: ['properties.email DESC'] }));
    assert.equal(body.results.length, 3);
    const alice = body.results.find((r: any[]) => r[2] === 'alice@example.com');
    assert.deepEqual(alice[0].distinct_ids, ['alice', 'anon-1']);
    assert.equal(alice[0].properties.email, 'alice@example.com');
    assert.equal(alice[1].display_name, 'alice@example.com');
    const bob = body.results.find((r: any[]) => r[0].distinct_ids.includes('bob'));
    assert.equal(bob[1].display_name, 'Bob');
    const carol = body.results.find((r: any[]) => r[0].distinct_ids.includes('carol'));
    assert.equal(carol[1].display_name, 'carol');
    assert.deepEqual(body.columns, ['person', 'person_display_name', 'properties.email']);
    assert.deepEqual(body.types, ['Tuple', 'Tuple', 'String']);
    assert.equal(body.hasMore, false);
    // Ordered by the person column: by e-mail, as PostHog orders it (persons without one last, as NULLs sort).
    const byPerson = await expectOk(await actors({ select: ['properties.email'], orderBy: ['person ASC'], limit: 1 }));
    assert.deepEqual(byPerson.results, [['alice@example.com']]);
  });

  test('search, limit and offset', async () => {
    let body = await expectOk(await actors({ select: ['properties.email'], search: 'ALICE@' }));
    assert.deepEqual(body.results, [['alice@example.com']]);
    body = await expectOk(await actors({ select: ['person_display_name'], search: 'anon-1' }));
    assert.equal(body.results[0][0].display_name, 'alice@example.com');
    // As PostHog's: any part of a distinct id or of the id, in any case.
    body = await expectOk(await actors({ select: ['person_display_name'], search: 'NON-' }));
    assert.deepEqual(body.results.map((r: any[]) => r[0].display_name), ['alice@example.com']);
    const [[bobId]] = (await expectOk(await actors({ select: ['id'], search: 'bob' }))).results;
    body = await expectOk(await actors({ select: ['id'], search: String(bobId).slice(4, 16).toUpperCase() }));
    assert.deepEqual(body.results, [[bobId]]);
    body = await expectOk(await actors({ select: ['id'], limit: 2 }));
    assert.equal(body.results.length, 2);
    assert.equal(body.hasMore, true);
    const rest = await expectOk(await actors({ select: ['id'], limit: 2, offset: 2 }));
    assert.equal(rest.results.length, 1);
    assert.equal(rest.hasMore, false);
  });

  test('an InsightActorsQuery source lists the persons behind a trend’s point, as many as its DAU', async () => {
    const trend = {
      kind: 'TrendsQuery',
      series: [{ kind: 'EventsNode', event: 'a', math: 'dau' }],
      interval: 'day',
      dateRange: { date_from: '2025-03-01', date_to: '2025-03-03' },
    };
    const answer = await expectOk(await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: trend } }));
    const [series] = answer.results;
    for (const [i, day] of series.days.entries()) {
      const body = await expectOk(await actors({ select: ['person'], source: { kind: 'InsightActorsQuery', source: trend, day, series: 0 } }));
      assert.equal(body.results.length, series.data[i], day);
    }
    const first = await expectOk(await actors({ select: ['person'], source: { kind: 'InsightActorsQuery', source: trend, day: series.days[0] } }));
    assert.deepEqual(first.results[0][0].distinct_ids, ['alice', 'anon-1']);
    const all = await expectOk(await actors({ select: ['id'], source: { kind: 'InsightActorsQuery', source: trend } }));
    assert.equal(all.results.length, 3);
    await expectError(await actors({ source: { kind: 'InsightActorsQuery', source: trend, day: '1999-01-01' } }), 400, 'invalid_input', 'source.day');
    await expectError(await actors({ source: { kind: 'InsightActorsQuery', source: trend, series: 3 } }), 400, 'invalid_input', 'source.series');
  });

  test('a FunnelsActorsQuery lists who reached each step and who dropped off before it, per breakdown value, as many as the funnel counts', async (t) => {
    const at = (day: number, minute: number) => `2025-03-0${day}T12:${String(minute).padStart(2, '0')}:00Z`;
    const steps = (who: string, day: number, browser: string, count: number) =>
      ['f1', 'f2', 'f3'].slice(0, count).map((event, i) => ({ event, distinct_id: who, timestamp: at(day, i), properties: { $browser: browser } }));
    // The tests after this one count these events too: they are sent even where funnels cannot run.
    await post(server, [...steps('alice', 4, 'Chrome', 3), ...steps('bob', 4, 'Firefox', 2), ...steps('carol', 5, 'Chrome', 1)]);
    if (needsAsOfJoins) return t.skip(needsAsOfJoins);
    const funnel = {
      kind: 'FunnelsQuery',
      series: ['f1', 'f2', 'f3'].map((event) => ({ kind: 'EventsNode', event })),
      dateRange: { date_from: '2025-03-04', date_to: '2025-03-06' },
      funnelsFilter: { funnelWindowInterval: 7, funnelWindowIntervalUnit: 'day' },
    };
    const who = async (source: Record<string, unknown>) => {
      const body = await expectOk(await actors({ select: ['person'], source: { kind: 'FunnelsActorsQuery', source: funnel, ...source } }));
      return body.results.map((r: any[]) => r[0].distinct_ids[0]).sort();
    };
    assert.deepEqual(await who({ funnelStep: 1 }), ['alice', 'bob', 'carol']);
    assert.deepEqual(await who({ funnelStep: 2 }), ['alice', 'bob']);
    assert.deepEqual(await who({ funnelStep: 3 }), ['alice']);
    assert.deepEqual(await who({ funnelStep: -2 }), ['carol']);
    assert.deepEqual(await who({ funnelStep: -3 }), ['bob']);

    const split = { ...funnel, breakdownFilter: { breakdown_type: 'event', breakdown: '$browser' } };
    const answer = await expectOk(await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: split } }));
    for (const stepsOfValue of answer.results) {
      for (const [k, step] of stepsOfValue.entries()) {
        const listed = await expectOk(await actors({ select: ['id'], source: { kind: 'FunnelsActorsQuery', source: split, funnelStep: k + 1, funnelStepBreakdown: step.breakdown_value } }));
        assert.equal(listed.results.length, step.count, `${JSON.stringify(step.breakdown_value)} step ${k + 1}`);
      }
    }
    const chrome = await expectOk(await actors({ select: ['person'], source: { kind: 'FunnelsActorsQuery', source: split, funnelStep: -2, funnelStepBreakdown: ['Chrome'] } }));
    assert.deepEqual(chrome.results.map((r: any[]) => r[0].distinct_ids[0]), ['carol']);
    // The trends view: who entered each day and converted, or did not.
    const trendsView = { ...funnel, interval: 'day', funnelsFilter: { ...funnel.funnelsFilter, funnelVizType: 'trends' } };
    const trendsAnswer = await expectOk(await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: trendsView } }));
    const [series] = trendsAnswer.results;
    for (const [i, day] of series.days.entries()) {
      const entryDay = { kind: 'FunnelsActorsQuery', source: trendsView, funnelTrendsEntrancePeriodStart: day };
      const converted = (await expectOk(await actors({ select: ['id'], source: { ...entryDay, funnelTrendsDropOff: false } }))).results.length;
      const dropped = (await expectOk(await actors({ select: ['id'], source: { ...entryDay, funnelTrendsDropOff: true } }))).results.length;
      const rate = converted + dropped === 0 ? 0 : Math.round((converted / (converted + dropped)) * 10_000) / 100;
      assert.equal(rate, series.data[i], `conversion on ${day}`);
    }
    const fourth = await expectOk(await actors({ select: ['person'], source: { kind: 'FunnelsActorsQuery', source: trendsView, funnelTrendsEntrancePeriodStart: '2025-03-04', funnelTrendsDropOff: true } }));
    assert.deepEqual(fourth.results.map((r: any[]) => r[0].distinct_ids[0]), ['bob']);
    await expectError(await actors({ source: { kind: 'FunnelsActorsQuery', source: trendsView, funnelTrendsEntrancePeriodStart: '1999-01-01' } }), 400, 'invalid_input', 'source.funnelTrendsEntrancePeriodStart');
    // The same point through an InsightActorsQuery.
    const viaInsight = await expectOk(await actors({ select: ['id'], source: { kind: 'InsightActorsQuery', source: funnel, funnelStep: 3 } }));
    assert.equal(viaInsight.results.length, 1);

    for (const funnelStep of [0, -1, 4, 1.5, null]) {
      await expectError(await actors({ source: { kind: 'FunnelsActorsQuery', source: funnel, funnelStep } }), 400, 'invalid_input', 'source.funnelStep');
    }
    await expectError(await actors({ source: { kind: 'FunnelsActorsQuery', source: split, funnelStep: 1, funnelStepBreakdown: 'Other' } }), 400, 'invalid_input', 'source.funnelStepBreakdown');
    await expectError(await actors({ source: { kind: 'FunnelsActorsQuery', source: funnel, funnelStep: 1, funnelStepBreakdown: 'Chrome' } }), 400, 'invalid_input', 'source.funnelStepBreakdown');
  });

  test('the persons of a retention cohort row, as many as the row counts (first time and recurring)', async () => {
    for (const retentionType of ['retention_first_time', 'retention_recurring']) {
      const retention = {
        kind: 'RetentionQuery',
        dateRange: { date_from: '2025-03-01', date_to: '2025-03-05' },
        retentionFilter: { period: 'Day', totalIntervals: 5, retentionType, targetEntity: { id: 'a', type: 'events' }, returningEntity: { id: 'f1', type: 'events' } },
      };
      const answer = await expectOk(await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: retention } }));
      assert.deepEqual(answer.results.map((row: any) => row.values[0].count), [1, 1, 1, 0, 0], retentionType);
      for (const [interval, row] of answer.results.entries()) {
        const listed = await expectOk(await actors({ select: ['person'], source: { kind: 'InsightActorsQuery', source: retention, interval } }));
        assert.equal(listed.results.length, row.values[0].count, `${retentionType} row ${interval}`);
      }
      const second = await expectOk(await actors({ select: ['person'], source: { kind: 'InsightActorsQuery', source: retention, interval: 1 } }));
      assert.deepEqual(second.results[0][0].distinct_ids, ['bob']);
      await expectError(await actors({ source: { kind: 'InsightActorsQuery', source: retention, interval: 5 } }), 400, 'invalid_input', 'source.interval');
    }
  });

  test('the persons behind a stickiness point: those active in exactly n intervals (n or more when cumulative)', async () => {
    for (const computedAs of ['non_cumulative', 'cumulative']) {
      const stickiness = {
        kind: 'StickinessQuery',
        series: [{ kind: 'EventsNode', event: 'a' }, { kind: 'EventsNode', event: null }],
        interval: 'day',
        dateRange: { date_from: '2025-03-01', date_to: '2025-03-05' },
        stickinessFilter: { computedAs },
      };
      const answer = await expectOk(await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: stickiness } }));
      for (const [series, result] of answer.results.entries()) {
        for (const [i, day] of result.days.entries()) {
          const listed = await expectOk(await actors({ select: ['id'], source: { kind: 'InsightActorsQuery', source: stickiness, series, day } }));
          assert.equal(listed.results.length, result.data[i], `${computedAs} series ${series} day ${day}`);
        }
      }
      // Every person was active on two days with any event: one on 1 March to 3 March, one on 4 or 5 March.
      assert.equal(answer.results[1].data[1], 3, computedAs);
      await expectError(await actors({ source: { kind: 'InsightActorsQuery', source: stickiness, day: 6 } }), 400, 'invalid_input', 'source.day');
    }
  });

  test('the persons behind a lifecycle point, for every status and day, as many as it counts', { skip: needsWindowFunctions }, async () => {
    const lifecycle = { kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: null }], interval: 'day', dateRange: { date_from: '2025-03-01', date_to: '2025-03-06' } };
    const answer = await expectOk(await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: lifecycle } }));
    let listedAny = 0;
    for (const result of answer.results) {
      for (const [i, day] of result.days.entries()) {
        const listed = await expectOk(await actors({ select: ['id'], source: { kind: 'InsightActorsQuery', source: lifecycle, status: result.status, day } }));
        assert.equal(listed.results.length, Math.abs(result.data[i]), `${result.status} on ${day}`);
        listedAny += listed.results.length;
      }
    }
    assert.ok(listedAny >= 9, `every person is new, dormant and back at least once: ${listedAny}`);
    const dormantOnSecond = await expectOk(await actors({ select: ['person'], source: { kind: 'InsightActorsQuery', source: lifecycle, status: 'dormant', day: 1 } }));
    assert.deepEqual(dormantOnSecond.results.map((r: any[]) => r[0].distinct_ids[0]), ['alice']);
    await expectError(await actors({ source: { kind: 'InsightActorsQuery', source: lifecycle, status: 'sleepy', day: 1 } }), 400, 'invalid_choice', 'source.status');
    await expectError(await actors({ source: { kind: 'InsightActorsQuery', source: lifecycle, status: 'new', day: '1999-01-01' } }), 400, 'invalid_input', 'source.day');
  });

  test('the persons behind a path: an edge, a node and where paths ended', { skip: needsWindowFunctions }, async () => {
    const paths = { kind: 'PathsQuery', dateRange: { date_from: '2025-03-01', date_to: '2025-03-06' }, pathsFilter: { includeEventTypes: ['custom_event'] } };
    const answer = await expectOk(await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: paths } }));
    const who = async (keys: Record<string, string>) => {
      const body = await expectOk(await actors({ select: ['person'], source: { kind: 'InsightActorsQuery', source: paths, ...keys } }));
      return body.results.map((r: any[]) => r[0].distinct_ids.find((id: string) => !id.startsWith('anon'))).sort();
    };
    assert.ok(answer.results.length >= 2, JSON.stringify(answer.results));
    // Each person walks each edge once here, so an edge's persons are as many as its value.
    for (const edge of answer.results) assert.equal((await who({ pathStartKey: edge.source, pathEndKey: edge.target })).length, edge.value, `${edge.source} → ${edge.target}`);
    assert.deepEqual(await who({ pathStartKey: '1_f1', pathEndKey: '2_f2' }), ['alice', 'bob']);
    assert.deepEqual(await who({ pathStartKey: '2_f2' }), ['alice', 'bob']);
    assert.deepEqual(await who({ pathDropoffKey: '2_f2' }), ['bob']);
    assert.deepEqual(await who({ pathDropoffKey: '1_f1' }), ['carol']);
    await expectError(await actors({ source: { kind: 'InsightActorsQuery', source: paths } }), 400, 'required', 'source.pathStartKey');
    await expectError(await actors({ source: { kind: 'InsightActorsQuery', source: paths, pathStartKey: '/home' } }), 400, 'invalid_input', 'source.pathStartKey');
  });

  test('bad input is a 400', async () => {
    await expectError(await actors({ select: 'id' }), 400, 'invalid', 'select');
    await expectError(await actors({ select: ['nope'] }), 400, 'invalid_input', 'select');
    await expectError(await actors({ select: ['id from events; --'] }), 400, 'invalid', 'select');
    await expectError(await actors({ source: { kind: 'InsightActorsQuery', source: { kind: 'HogQLQuery', query: 'select 1' } } }), 400, 'invalid_choice', 'source.source.kind');
    await expectError(await actors({ source: { kind: 'Other' } }), 400, 'invalid_choice', 'source.kind');
    await expectError(await actors({ properties: 'x' }), 400, 'invalid', 'properties');
    await expectError(await actors({ properties: [{ key: '$browser', value: 'x', type: 'event' }] }), 400, 'invalid_input', 'properties');
    await expectError(await actors({ properties: [{ key: 'email', value: 'x', type: 'person', operator: 'nope' }] }), 400, 'invalid_input', 'properties');
  });

  test('properties filters the listed persons by person properties, alone and behind a point', async () => {
    let body = await expectOk(await actors({ select: ['properties.email'], properties: [{ key: 'email', value: 'alice@example.com', type: 'person' }] }));
    assert.deepEqual(body.results, [['alice@example.com']]);
    body = await expectOk(await actors({ select: ['person'], properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'name', value: 'bo', operator: 'icontains', type: 'person' }] }] } }));
    assert.deepEqual(body.results.map((r: any[]) => r[0].distinct_ids), [['bob']]);
    body = await expectOk(await actors({ select: ['id'], properties: [{ key: 'email', operator: 'is_not_set', type: 'person' }] }));
    assert.equal(body.results.length, 2);
    const trend = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'a', math: 'dau' }], dateRange: { date_from: '2025-03-01', date_to: '2025-03-03' } };
    body = await expectOk(await actors({ select: ['person'], fixedProperties: [{ key: 'name', value: 'Bob', type: 'person' }], source: { kind: 'InsightActorsQuery', source: trend } }));
    assert.deepEqual(body.results.map((r: any[]) => r[0].distinct_ids), [['bob']]);
  });
});

describe('ActorsQuery of groups', () => {
  let server: TestServer;
  const company = (key: string) => ({ $groups: { company: key } });
  const identify = (key: string, set: Record<string, unknown>, timestamp: string) => ({ event: '$groupidentify', distinct_id: 'admin', timestamp, properties: { $group_type: 'company', $group_key: key, $group_set: set } });
  const at = (day: number, hour = 10) => `2025-03-0${day}T${String(hour).padStart(2, '0')}:00:00Z`;
  before(async () => {
    server = await startServer({ env: { SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', SIGHTLINE_GEOIP: 'false' } });
    await post(server, [
      identify('acme', { name: 'Acme', plan: 'pro' }, '2025-02-01T00:00:00Z'),
      identify('initech', { name: 'Initech', plan: 'free' }, '2025-02-02T00:00:00Z'),
      identify('globex', { name: 'Globex', plan: 'pro', seats: 12 }, '2025-02-03T00:00:00Z'),
      // acme: two persons on day 1, one on day 2; initech day 1; globex days 2 and 3; "umbrella" is never identified.
      { event: 'view', distinct_id: 'u1', timestamp: at(1), properties: company('acme') },
      { event: 'view', distinct_id: 'u2', timestamp: at(1, 11), properties: company('acme') },
      { event: 'buy', distinct_id: 'u1', timestamp: at(1, 12), properties: company('acme') },
      { event: 'view', distinct_id: 'u3', timestamp: at(1), properties: company('initech') },
      { event: 'view', distinct_id: 'u1', timestamp: at(2), properties: company('acme') },
      { event: 'view', distinct_id: 'u4', timestamp: at(2), properties: company('globex') },
      { event: 'buy', distinct_id: 'u4', timestamp: at(2, 12), properties: company('globex') },
      { event: 'view', distinct_id: 'u4', timestamp: at(3), properties: company('globex') },
      { event: 'view', distinct_id: 'u5', timestamp: at(3), properties: company('umbrella') },
      { event: 'view', distinct_id: 'u6', timestamp: at(3), properties: {} },
    ]);
  });
  after(async () => {
    await server?.stop();
  });

  const query = (q: Record<string, unknown>) => server.api('/api/projects/@current/query/', { method: 'POST', body: { query: q } });
  const actors = (q: Record<string, unknown>) => query({ kind: 'ActorsQuery', ...q });
  const keysOf = (body: any) => body.results.map((r: any[]) => r[0].group_key).sort();
  const range = { date_from: '2025-03-01', date_to: '2025-03-03' };

  test('the groups behind each point of a unique_group trend, as many as it counts, with their columns', async () => {
    const trend = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'view', math: 'unique_group', math_group_type_index: 0 }], dateRange: range };
    const [series] = (await expectOk(await query(trend))).results;
    assert.deepEqual(series.data, [2, 2, 2]);
    const expected = [['acme', 'initech'], ['acme', 'globex'], ['globex', 'umbrella']];
    for (const [i, day] of series.days.entries()) {
      const body = await expectOk(await actors({ source: { kind: 'InsightActorsQuery', source: trend, day, series: 0 } }));
      assert.equal(body.results.length, series.data[i], day);
      assert.deepEqual(keysOf(body), expected[i], day);
    }
    // Default columns and order: the group, its key and created_at, newest group first (never identified: created_at null, last).
    const all = await expectOk(await actors({ source: { kind: 'InsightActorsQuery', source: trend } }));
    assert.deepEqual(all.columns, ['group', 'key', 'created_at']);
    assert.deepEqual(all.types, ['Tuple', 'String', "DateTime64(6, 'UTC')"]);
    assert.deepEqual(all.results.map((r: any[]) => r[1]), ['globex', 'initech', 'acme', 'umbrella']);
    const [globex] = all.results;
    assert.deepEqual(globex[0], {
      id: 'globex',
      type: 'group',
      group_key: 'globex',
      group_type_index: 0,
      created_at: '2025-02-03T00:00:00+00:00',
      group_properties: { name: 'Globex', plan: 'pro', seats: 12 },
      properties: { name: 'Globex', plan: 'pro', seats: 12 },
    });
    assert.equal(globex[2], '2025-02-03T00:00:00+00:00');
    assert.deepEqual(all.results[3][0].properties, {});
    assert.equal(all.results[3][2], null);
    // Chosen columns, orderBy, search, paging.
    const picked = await expectOk(await actors({ select: ['group_key', 'group_type_index', 'properties.plan', "properties['seats']", 'actor'], orderBy: ['key ASC'], source: { kind: 'InsightActorsQuery', source: trend } }));
    assert.deepEqual(picked.results.map((r: any[]) => r.slice(0, 4)), [
      ['acme', 0, 'pro', null],
      ['globex', 0, 'pro', '12'],
      ['initech', 0, 'free', null],
      ['umbrella', 0, null, null],
    ]);
    assert.deepEqual(picked.types, ['String', 'Int64', 'String', 'String', 'Tuple']);
    const page = await expectOk(await actors({ select: ['key'], orderBy: ['key DESC'], limit: 3, offset: 1, source: { kind: 'InsightActorsQuery', source: trend } }));
    assert.deepEqual(page.results, [['initech'], ['globex'], ['acme']]);
    assert.equal(page.hasMore, false);
    const first = await expectOk(await actors({ select: ['key'], orderBy: ['key'], limit: 2, source: { kind: 'InsightActorsQuery', source: trend } }));
    assert.deepEqual(first.results, [['acme'], ['globex']]);
    assert.equal(first.hasMore, true);
    const searched = await expectOk(await actors({ select: ['key'], search: 'INI', source: { kind: 'InsightActorsQuery', source: trend } }));
    assert.deepEqual(searched.results, [['initech']]);
    const byName = await expectOk(await actors({ select: ['key'], search: 'glob', source: { kind: 'InsightActorsQuery', source: trend } }));
    assert.deepEqual(byName.results, [['globex']]);
  });

  test('properties filters the listed groups by their group properties', async () => {
    const trend = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'view', math: 'unique_group', math_group_type_index: 0 }], dateRange: range };
    const source = { kind: 'InsightActorsQuery', source: trend };
    let body = await expectOk(await actors({ select: ['key'], orderBy: ['key'], properties: [{ key: 'plan', value: 'pro', type: 'group', group_type_index: 0 }], source }));
    assert.deepEqual(body.results, [['acme'], ['globex']]);
    body = await expectOk(await actors({ select: ['key'], orderBy: ['key'], properties: [{ key: 'plan', value: 'pro', operator: 'is_not', type: 'group', group_type_index: 0 }], source }));
    assert.deepEqual(body.results, [['initech'], ['umbrella']]);
    body = await expectOk(await actors({ select: ['key'], properties: [{ key: 'seats', value: 10, operator: 'gt', type: 'group', group_type_index: 0 }], source }));
    assert.deepEqual(body.results, [['globex']]);
    await expectError(await actors({ properties: [{ key: 'email', value: 'x', type: 'person' }], source }), 400, 'invalid_input', 'properties');
    await expectError(await actors({ properties: [{ key: 'plan', value: 'pro', type: 'group', group_type_index: 1 }], source }), 400, 'invalid_input', 'properties');
    await expectError(await actors({ fixedProperties: [{ key: 'plan', value: 'pro', type: 'event' }], source }), 400, 'invalid_input', 'fixedProperties');
    await expectError(await actors({ select: ['person.properties.email'], source }), 400, 'invalid_input', 'select');
    await expectError(await actors({ select: ['key'], orderBy: ['count() DESC'], source }), 400, 'invalid_input', 'orderBy');
    await expectError(await actors({ select: 'key', source }), 400, 'invalid', 'select');
  });

  test('the groups behind every day of a unique_group trend, filtered or not, match the reference (fast-check)', { timeout: 300_000 }, async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          events: fc.array(fc.record({ who: fc.integer({ min: 0, max: 3 }), hour: fc.integer({ min: 0, max: 4 * 24 - 1 }), group: fc.integer({ min: 0, max: 5 }) }), { minLength: 1, maxLength: 30 }),
          plans: fc.array(fc.constantFrom('pro', 'free', null), { minLength: 5, maxLength: 5 }),
        }),
        async (c) => {
          const p = `fc${++run}x${Math.random().toString(36).slice(2, 7)}`;
          // Groups 0–4 may be identified with a plan (null: never identified); 5 is "no group".
          const identified = c.plans.flatMap((plan, g) => (plan === null ? [] : [identify(`${p}-g${g}`, { plan }, '2025-01-01T00:00:00Z')]));
          const events = c.events.map((e) => ({
            event: p,
            distinct_id: `${p}-u${e.who}`,
            ts: Date.parse('2025-04-01T00:00:00Z') + e.hour * 3_600_000,
            properties: e.group === 5 ? {} : company(`${p}-g${e.group}`),
          }));
          await post(server, [...identified, ...events.map((e) => ({ event: e.event, distinct_id: e.distinct_id, timestamp: new Date(e.ts).toISOString(), properties: e.properties }))]);
          const dateRange = { date_from: '2025-04-01', date_to: '2025-04-04' };
          const trend = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: p, math: 'unique_group', math_group_type_index: 0 }], dateRange };
          const expected = referenceGroupsPerBucket(events, { event: p, interval: 'day', dateRange, timeZone: 'UTC', now: new Date() }, 'company');
          const pro = (key: string) => c.plans[Number(key.slice(key.lastIndexOf('g') + 1))] === 'pro';
          const expectedPro = referenceGroupsPerBucket(events, { event: p, interval: 'day', dateRange, timeZone: 'UTC', now: new Date() }, 'company', pro);
          const [series] = (await expectOk(await query(trend))).results;
          assert.deepEqual(series.data, expected.map((keys) => keys.length));
          for (const [i, day] of series.days.entries()) {
            const source = { kind: 'InsightActorsQuery', source: trend, day };
            assert.deepEqual((await expectOk(await actors({ select: ['key'], orderBy: ['key'], source }))).results.flat(), expected[i], day);
            const filtered = await expectOk(await actors({ select: ['key'], orderBy: ['key'], properties: [{ key: 'plan', value: 'pro', type: 'group', group_type_index: 0 }], source }));
            assert.deepEqual(filtered.results.flat(), expectedPro[i], `${day} pro`);
          }
        },
      ),
      { numRuns: Number(process.env.SIGHTLINE_FC_RUNS ?? 10) },
    );
  });

  test('a funnel of groups matches the reference, and every step lists as many groups as it counts (fast-check)', { timeout: 300_000, skip: needsAsOfJoins }, async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ step: fc.integer({ min: 0, max: 2 }), who: fc.integer({ min: 0, max: 3 }), group: fc.integer({ min: 0, max: 4 }), hour: fc.integer({ min: 0, max: 71 }) }), { minLength: 1, maxLength: 30 }),
        async (drawn) => {
          const p = `fn${++run}x${Math.random().toString(36).slice(2, 7)}`;
          const step = (k: number) => `${p}-s${k}`;
          // Group 4 is "no group": those events are not any group's.
          const sent = drawn.map((e) => eventAt(step(e.step), `${p}-u${e.who}`, Date.parse('2025-05-01T00:00:00Z') + e.hour * 3_600_000 + e.step, e.group === 4 ? {} : company(`${p}-g${e.group}`)));
          await sendEvents(server, sent);
          const dateRange = { date_from: '2025-05-01', date_to: '2025-05-03' };
          const funnel = {
            kind: 'FunnelsQuery',
            series: [0, 1, 2].map((k) => ({ kind: 'EventsNode', event: step(k) })),
            dateRange,
            aggregation_group_type_index: 0,
            funnelsFilter: { funnelWindowInterval: 24, funnelWindowIntervalUnit: 'hour' },
          };
          const range = resolveDateRange(dateRange, { interval: 'day', timeZone: 'UTC', weekStartDay: 0, now: new Date() });
          // The reference's actor is the group key; events without the group are left out.
          const events = sent.flatMap((e) => {
            const key = (e.properties.$groups as Record<string, string> | undefined)?.company;
            return key ? [{ uuid: e.uuid, event: e.event, person: key, ts: Date.parse(e.timestamp), properties: e.properties }] : [];
          });
          const expected = referenceSteps({ steps: [0, 1, 2].map((k) => ({ event: step(k) })), order: 'ordered', windowMs: 24 * 3_600_000, exclusions: [], range }, events).get('')!.map((s) => s.count);
          const counts = (await expectOk(await query(funnel))).results.map((s: any) => s.count);
          assert.deepEqual(counts, expected);
          for (let k = 1; k <= 3; k++) {
            const reached = await expectOk(await actors({ select: ['key'], source: { kind: 'FunnelsActorsQuery', source: funnel, funnelStep: k } }));
            assert.equal(reached.results.length, counts[k - 1], `step ${k}`);
            if (k === 1) assert.deepEqual(reached.results.flat().sort(), [...new Set(events.filter((e) => e.event === step(0)).map((e) => e.person))].sort());
            if (k === 1) continue;
            const dropped = await expectOk(await actors({ select: ['key'], source: { kind: 'FunnelsActorsQuery', source: funnel, funnelStep: -k } }));
            assert.equal(dropped.results.length, counts[k - 2] - counts[k - 1], `step ${-k}`);
          }
        },
      ),
      { numRuns: Number(process.env.SIGHTLINE_FC_RUNS ?? 10) },
    );
  });

  test('the groups behind a funnel of groups, its stickiness and its retention, as many as each counts', async () => {
    if (!needsAsOfJoins) {
      const funnel = { kind: 'FunnelsQuery', series: [{ kind: 'EventsNode', event: 'view' }, { kind: 'EventsNode', event: 'buy' }], dateRange: range, aggregation_group_type_index: 0 };
      const [step1, step2] = (await expectOk(await query(funnel))).results;
      assert.deepEqual([step1.count, step2.count], [4, 2]);
      const funnelKeys = async (funnelStep: number) => keysOf(await expectOk(await actors({ source: { kind: 'FunnelsActorsQuery', source: funnel, funnelStep } })));
      assert.deepEqual(await funnelKeys(1), ['acme', 'globex', 'initech', 'umbrella']);
      assert.deepEqual(await funnelKeys(2), ['acme', 'globex']);
      assert.deepEqual(await funnelKeys(-2), ['initech', 'umbrella']);
    }

    const sticky = { kind: 'StickinessQuery', series: [{ kind: 'EventsNode', event: 'view', math: 'unique_group', math_group_type_index: 0 }], dateRange: range };
    const [stickiness] = (await expectOk(await query(sticky))).results;
    assert.deepEqual(stickiness.data, [2, 2, 0]);
    for (const [i, day] of stickiness.days.entries()) {
      const body = await expectOk(await actors({ source: { kind: 'InsightActorsQuery', source: sticky, day, series: 0 } }));
      assert.equal(body.results.length, stickiness.data[i], `stickiness ${day}`);
    }
    const stickyKeys = keysOf(await expectOk(await actors({ source: { kind: 'InsightActorsQuery', source: sticky, day: 2, series: 0 } })));
    assert.deepEqual(stickyKeys, ['acme', 'globex']);

    const retention = { kind: 'RetentionQuery', dateRange: range, aggregation_group_type_index: 0, retentionFilter: { period: 'Day', totalIntervals: 3, targetEntity: { id: 'view', type: 'events' }, returningEntity: { id: 'view', type: 'events' } } };
    const rows = (await expectOk(await query(retention))).results;
    assert.deepEqual(rows.map((row: any) => row.values[0].count), [2, 2, 2]);
    for (const [interval, row] of rows.entries()) {
      const body = await expectOk(await actors({ source: { kind: 'InsightActorsQuery', source: retention, interval } }));
      assert.equal(body.results.length, row.values[0].count, `retention row ${interval}`);
    }
  });
});
