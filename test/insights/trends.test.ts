import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startServer, type TestServer } from '../helpers/server.js';
import { expectError, expectOk } from '../helpers/api-fixtures.js';
import { referenceTrends } from '../unit/insights/reference/trends.js';
import type { RefEvent } from '../unit/insights/reference/events.js';

let server: TestServer;
let runs = 0;
/** A prefix no other test uses: event names and distinct ids stay apart in the one project. */
const fresh = () => `t${++runs}x${Math.random().toString(36).slice(2, 7)}`;

async function send(events: RefEvent[]): Promise<void> {
  const batch = events.map((e) => ({ event: e.event, distinct_id: e.distinct_id, timestamp: new Date(e.ts).toISOString(), properties: e.properties }));
  for (let i = 0; i < batch.length; i += 500) {
    const response = await server.post('/batch/', { api_key: server.projectKey, batch: batch.slice(i, i + 500) });
    assert.equal(response.status, 200, await response.text());
  }
}

async function setTimeZone(timezone: string): Promise<void> {
  await expectOk(await server.api('/api/projects/@current/', { method: 'PATCH', body: { timezone } }));
}

const query = (q: Record<string, unknown>) => server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'TrendsQuery', ...q }, refresh: 'force_blocking' } });
async function trends(q: Record<string, unknown>): Promise<any> {
  return expectOk(await query(q));
}

const at = (iso: string) => Date.parse(iso);
const ev = (event: string, distinct_id: string, iso: string, properties: Record<string, unknown> = {}): RefEvent => ({ event, distinct_id, ts: at(iso), properties });

describe('TrendsQuery', () => {
  before(async () => {
    server = await startServer({ env: { SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', SIGHTLINE_GEOIP: 'false' } });
  });
  after(async () => {
    await server?.stop();
  });

  test('§1.14: a person active on day 1 and day 2 — DAU [1, 1], count 2; BoldNumber DAU 1', async () => {
    await setTimeZone('UTC');
    const p = fresh();
    await send([ev(`${p}`, `${p}-u`, '2025-03-01T10:00:00Z'), ev(`${p}`, `${p}-u`, '2025-03-02T10:00:00Z'), ev(`${p}`, `${p}-u`, '2025-03-02T11:00:00Z')]);
    const body = await trends({ series: [{ kind: 'EventsNode', event: p, math: 'dau' }], dateRange: { date_from: '2025-03-01', date_to: '2025-03-02' } });
    assert.deepEqual(body.results[0].data, [1, 1]);
    assert.equal(body.results[0].count, 2);
    assert.deepEqual(body.results[0].days, ['2025-03-01', '2025-03-02']);
    assert.deepEqual(body.results[0].labels, ['1-Mar-2025', '2-Mar-2025']);
    assert.equal(body.results[0].label, p);
    assert.equal(body.results[0].action.math, 'dau');
    assert.equal(body.hasMore, false);
    assert.deepEqual(body.resolved_date_range, { date_from: '2025-03-01T00:00:00+00:00', date_to: '2025-03-02T23:59:59.999999+00:00' });
    const bold = await trends({
      series: [{ kind: 'EventsNode', event: p, math: 'dau' }],
      dateRange: { date_from: '2025-03-01T00:00:00Z', date_to: '2025-03-02T23:59:59Z' },
      trendsFilter: { display: 'BoldNumber' },
    });
    assert.equal(bold.results[0].aggregated_value, 1);
    assert.deepEqual(bold.results[0].data, []);
    const total = await trends({ series: [{ kind: 'EventsNode', event: p }], dateRange: { date_from: '2025-03-01', date_to: '2025-03-02' }, trendsFilter: { display: 'ActionsPie' } });
    assert.equal(total.results[0].aggregated_value, 3);
  });

  test('§1.14: WAU with one event on day 1 at 10:00 — bucket day 7 is 1, day 8 is 0', async () => {
    await setTimeZone('UTC');
    const p = fresh();
    await send([ev(p, `${p}-u`, '2025-03-01T10:00:00Z')]);
    const body = await trends({ series: [{ kind: 'EventsNode', event: p, math: 'weekly_active' }], dateRange: { date_from: '2025-03-06', date_to: '2025-03-09' } });
    assert.deepEqual(body.results[0].days, ['2025-03-06', '2025-03-07', '2025-03-08', '2025-03-09']);
    assert.deepEqual(body.results[0].data, [1, 1, 0, 0]);
  });

  test('§1.14: a month bucket from date_from 2025-03-15 also counts 1–14 March', async () => {
    await setTimeZone('UTC');
    const p = fresh();
    await send([ev(p, `${p}-u`, '2025-03-02T10:00:00Z'), ev(p, `${p}-u`, '2025-03-20T10:00:00Z'), ev(p, `${p}-u`, '2025-02-27T10:00:00Z')]);
    const body = await trends({ series: [{ kind: 'EventsNode', event: p }], interval: 'month', dateRange: { date_from: '2025-03-15', date_to: '2025-04-10' } });
    assert.deepEqual(body.results[0].days, ['2025-03-01', '2025-04-01']);
    assert.deepEqual(body.results[0].labels, ['Mar 2025', 'Apr 2025']);
    assert.deepEqual(body.results[0].data, [2, 0]);
  });

  test('§1.14: an event on Monday 2025-03-10 lands in the week bucket 2025-03-09 (Sunday)', async () => {
    await setTimeZone('UTC');
    const p = fresh();
    await send([ev(p, `${p}-u`, '2025-03-10T12:00:00Z')]);
    const body = await trends({ series: [{ kind: 'EventsNode', event: p }], interval: 'week', dateRange: { date_from: '2025-03-02', date_to: '2025-03-15' } });
    assert.deepEqual(body.results[0].days, ['2025-03-02', '2025-03-09']);
    assert.deepEqual(body.results[0].data, [0, 1]);
  });

  test('minute and hour intervals on the project wall clock (Europe/Paris)', async () => {
    await setTimeZone('Europe/Paris');
    const p = fresh();
    await send([ev(p, `${p}-u`, '2025-03-01T09:01:30Z'), ev(p, `${p}-u`, '2025-03-01T09:01:59Z'), ev(p, `${p}-u`, '2025-03-01T09:04:00Z')]);
    const minutes = await trends({ series: [{ kind: 'EventsNode', event: p }], interval: 'minute', dateRange: { date_from: '2025-03-01T10:00:00', date_to: '2025-03-01T10:04:00' } });
    assert.deepEqual(minutes.results[0].days, ['2025-03-01 10:00:00', '2025-03-01 10:01:00', '2025-03-01 10:02:00', '2025-03-01 10:03:00', '2025-03-01 10:04:00']);
    assert.deepEqual(minutes.results[0].data, [0, 2, 0, 0, 1]);
    assert.equal(minutes.results[0].labels[1], '1-Mar 10:01');
    const hours = await trends({ series: [{ kind: 'EventsNode', event: p }], interval: 'hour', dateRange: { date_from: '2025-03-01T09:00:00', date_to: '2025-03-01T10:30:00' } });
    assert.deepEqual(hours.results[0].data, [0, 3]);
    await setTimeZone('UTC');
  });

  test('the hour clocks go back over is one bucket: its DAU counts a person active in both halves once (America/New_York)', async () => {
    await setTimeZone('America/New_York');
    const p = fresh();
    // 01:10 EDT, 01:10 EST (the same wall hour twice), 01:40 EST, 02:10 EST.
    await send([ev(p, `${p}-a`, '2025-11-02T05:10:00Z'), ev(p, `${p}-a`, '2025-11-02T06:10:00Z'), ev(p, `${p}-b`, '2025-11-02T06:40:00Z'), ev(p, `${p}-a`, '2025-11-02T07:10:00Z')]);
    const range = { date_from: '2025-11-02T00:00:00', date_to: '2025-11-02T02:30:00' };
    const body = await trends({ series: [{ kind: 'EventsNode', event: p, math: 'dau' }, { kind: 'EventsNode', event: p }], interval: 'hour', dateRange: range });
    assert.deepEqual(body.results[0].days, ['2025-11-02 00:00:00', '2025-11-02 01:00:00', '2025-11-02 02:00:00']);
    assert.deepEqual(body.results[0].data, [0, 2, 1]);
    assert.deepEqual(body.results[1].data, [0, 3, 1]);
    await setTimeZone('UTC');
  });

  test('project settings: weeks starting on Monday, and filterTestAccounts with the project filters', async () => {
    await setTimeZone('UTC');
    const p = fresh();
    await send([ev(p, `${p}-u`, '2025-03-10T12:00:00Z'), ev(p, `${p}-staff`, '2025-03-10T13:00:00Z', { internal: 'true' })]);
    await expectOk(
      await server.api('/api/projects/@current/', { method: 'PATCH', body: { week_start_day: 1, test_account_filters: [{ key: 'internal', value: ['true'], operator: 'is_not', type: 'event' }] } }),
    );
    try {
      const base = { series: [{ kind: 'EventsNode', event: p }], interval: 'week', dateRange: { date_from: '2025-03-03', date_to: '2025-03-16' } };
      const all = await trends(base);
      assert.deepEqual(all.results[0].days, ['2025-03-03', '2025-03-10']);
      assert.deepEqual(all.results[0].data, [0, 2]);
      const filtered = await trends({ ...base, filterTestAccounts: true });
      assert.deepEqual(filtered.results[0].data, [0, 1]);
    } finally {
      await expectOk(await server.api('/api/projects/@current/', { method: 'PATCH', body: { week_start_day: 0, test_account_filters: [] } }));
    }
  });

  test('date_from "all" starts at the series\' first event', async () => {
    await setTimeZone('UTC');
    const p = fresh();
    await send([ev(p, `${p}-u`, '2024-11-20T10:00:00Z'), ev(p, `${p}-u`, '2025-01-15T10:00:00Z')]);
    const body = await trends({ series: [{ kind: 'EventsNode', event: p }], interval: 'month', dateRange: { date_from: 'all', date_to: '2025-01-31' } });
    assert.deepEqual(body.results[0].days, ['2024-11-01', '2024-12-01', '2025-01-01']);
    assert.deepEqual(body.results[0].data, [1, 0, 1]);
    assert.equal(body.resolved_date_range.date_from, '2024-11-20T00:00:00+00:00');
  });

  test('breakdowns: top N, the null marker after regular values, other last; hasMore', async () => {
    await setTimeZone('UTC');
    const p = fresh();
    const events = [
      ...['a', 'a', 'a', 'b', 'b', 'c', 'd'].map((v, i) => ev(p, `${p}-u${i}`, '2025-03-01T10:00:00Z', { v })),
      ev(p, `${p}-n1`, '2025-03-01T11:00:00Z'),
      ev(p, `${p}-n2`, '2025-03-01T11:00:00Z', { v: '' }),
      ev(p, `${p}-n3`, '2025-03-02T11:00:00Z'),
    ];
    await send(events);
    const body = await trends({
      series: [{ kind: 'EventsNode', event: p }],
      dateRange: { date_from: '2025-03-01', date_to: '2025-03-02' },
      breakdownFilter: { breakdown: 'v', breakdown_limit: 2 },
    });
    assert.deepEqual(
      body.results.map((r: any) => [r.breakdown_value, r.data]),
      [
        ['a', [3, 0]],
        ['$$_posthog_breakdown_null_$$', [2, 1]],
        ['$$_posthog_breakdown_other_$$', [4, 0]],
      ],
    );
    assert.equal(body.results[0].label, 'a');
    assert.equal(body.hasMore, true);
    const hidden = await trends({
      series: [{ kind: 'EventsNode', event: p }],
      dateRange: { date_from: '2025-03-01', date_to: '2025-03-02' },
      breakdownFilter: { breakdown: 'v', breakdown_limit: 2, breakdown_hide_other_aggregation: true },
    });
    assert.equal(hidden.results.length, 2);
    assert.equal(hidden.hasMore, true);
    const multi = await trends({
      series: [{ kind: 'EventsNode', event: p }, { kind: 'EventsNode', event: p, custom_name: 'Again' }],
      dateRange: { date_from: '2025-03-01', date_to: '2025-03-02' },
      breakdownFilter: { breakdowns: [{ property: 'v' }, { type: 'hogql', property: "concat('x', event)" }] },
    });
    const first = multi.results[0];
    assert.deepEqual(first.breakdown_value, ['a', `x${p}`]);
    assert.equal(first.label, `${p} - a::x${p}`);
    assert.equal(multi.results.at(-1).label.startsWith('Again - '), true);
  });

  test('compare to the previous period and with compare_to, formulas, cumulative', async () => {
    await setTimeZone('UTC');
    const p = fresh();
    await send([
      ev(p, `${p}-u1`, '2025-03-05T10:00:00Z'),
      ev(p, `${p}-u1`, '2025-03-06T10:00:00Z'),
      ev(p, `${p}-u2`, '2025-03-06T10:00:00Z'),
      ev(p, `${p}-u1`, '2025-03-02T10:00:00Z'),
      ev(`${p}b`, `${p}-u1`, '2025-03-06T10:00:00Z'),
    ]);
    const body = await trends({
      series: [{ kind: 'EventsNode', event: p }],
      dateRange: { date_from: '2025-03-05', date_to: '2025-03-06' },
      compareFilter: { compare: true },
    });
    assert.deepEqual(
      body.results.map((r: any) => [r.compare_label, r.days, r.data]),
      [
        ['current', ['2025-03-05', '2025-03-06'], [1, 2]],
        ['previous', ['2025-03-03', '2025-03-04'], [0, 0]],
      ],
    );
    const shifted = await trends({ series: [{ kind: 'EventsNode', event: p }], dateRange: { date_from: '2025-03-05', date_to: '2025-03-06' }, compareFilter: { compare: true, compare_to: '-3d' } });
    assert.deepEqual(shifted.results[1].data, [1, 0]);
    const formula = await trends({
      series: [{ kind: 'EventsNode', event: p }, { kind: 'EventsNode', event: `${p}b` }],
      dateRange: { date_from: '2025-03-05', date_to: '2025-03-06' },
      trendsFilter: { formulaNodes: [{ formula: '(B / A) * 100' }, { formula: 'A+B', custom_name: 'Both' }] },
    });
    assert.deepEqual(
      formula.results.map((r: any) => [r.label, r.data, r.action]),
      [
        ['Formula ((B / A) * 100)', [0, 50], null],
        ['Both', [1, 3], null],
      ],
    );
    const cumulative = await trends({ series: [{ kind: 'EventsNode', event: p }], dateRange: { date_from: '2025-03-01', date_to: '2025-03-06' }, trendsFilter: { display: 'ActionsLineGraphCumulative' } });
    assert.deepEqual(cumulative.results[0].data, [0, 1, 1, 1, 2, 4]);
    assert.equal(cumulative.results[0].count, 4);
    // Cumulative unique users: each person once, on the first day seen (u1 on day 2, u2 on day 6).
    const users = await trends({ series: [{ kind: 'EventsNode', event: p, math: 'dau' }], dateRange: { date_from: '2025-03-01', date_to: '2025-03-06' }, trendsFilter: { display: 'ActionsLineGraphCumulative' } });
    assert.deepEqual(users.results[0].data, [0, 1, 1, 1, 1, 2]);
    const smoothed = await trends({ series: [{ kind: 'EventsNode', event: p }], dateRange: { date_from: '2025-03-01', date_to: '2025-03-06' }, trendsFilter: { smoothingIntervals: 2 } });
    assert.deepEqual(smoothed.results[0].data, [0, 0, 0, 0, 0, 1]);
  });

  test('unique_session, unique_group, person-property math, person and group breakdowns and group filters after a merge', async () => {
    await setTimeZone('UTC');
    const p = fresh();
    await send([
      ev(p, `${p}-anon`, '2025-03-01T10:00:00Z', { $session_id: 's1', $groups: { company: 'acme' }, amount: 10 }),
      ev(p, `${p}-anon`, '2025-03-01T11:00:00Z', { $session_id: 's1', amount: '30' }),
      ev(p, `${p}-bob`, '2025-03-01T12:00:00Z', { $session_id: 's2', amount: 'x', $set: { plan: 'pro', age: 30 } }),
      ev(p, `${p}-bob`, '2025-03-01T12:30:00Z', { $session_id: '' }),
      ev('$identify', `${p}-bob`, '2025-03-01T13:00:00Z', { $anon_distinct_id: `${p}-anon` }),
      ev('$groupidentify', `${p}-bob`, '2025-03-01T09:00:00Z', { $group_type: 'company', $group_key: 'acme', $group_set: { tier: 'gold' } }),
    ]);
    const range = { date_from: '2025-03-01', date_to: '2025-03-01' };
    const body = await trends({
      series: [
        { kind: 'EventsNode', event: p, math: 'unique_session' },
        { kind: 'EventsNode', event: p, math: 'dau' },
        { kind: 'EventsNode', event: p, math: 'sum', math_property: 'amount' },
        { kind: 'EventsNode', event: p, math: 'median', math_property: 'amount' },
        { kind: 'EventsNode', event: p, math: 'max', math_property: 'none' },
        { kind: 'EventsNode', event: p, math: 'sum', math_property: 'age', math_property_type: 'person_properties' },
      ],
      dateRange: range,
    });
    assert.deepEqual(
      body.results.map((r: any) => r.data[0]),
      [2, 1, 40, 20, 0, 120],
    );
    const groups = await trends({ series: [{ kind: 'EventsNode', event: p, math: 'unique_group', math_group_type_index: 0 }], dateRange: range });
    assert.deepEqual(groups.results[0].data, [1]);
    const hogql = await trends({ series: [{ kind: 'EventsNode', event: p, math: 'hogql', math_hogql: 'count(distinct properties.$session_id)' }], dateRange: range });
    // HogQL counts the empty session id too (unique_session does not).
    assert.deepEqual(hogql.results[0].data, [3]);
    const firstTime = await trends({ series: [{ kind: 'EventsNode', event: p, math: 'first_time_for_user' }], dateRange: { date_from: '2025-02-28', date_to: '2025-03-01' } });
    assert.deepEqual(firstTime.results[0].data, [0, 1]);
    await expectError(await query({ series: [{ kind: 'EventsNode', event: p, math: 'hogql', math_hogql: 'properties.x' }] }), 400, 'invalid_input', 'series.0.math_hogql');
    await expectError(await query({ series: [{ kind: 'EventsNode', event: p, math: 'hogql' }] }), 400, 'required', 'series.0.math_hogql');
    const byPlan = await trends({ series: [{ kind: 'EventsNode', event: p, math: 'dau' }], dateRange: range, breakdownFilter: { breakdown_type: 'person', breakdown: 'plan' } });
    assert.deepEqual(byPlan.results.map((r: any) => [r.breakdown_value, r.data[0]]), [['pro', 1]]);
    // Group properties come from the metadata store, read through each event's group key.
    const byTier = await trends({ series: [{ kind: 'EventsNode', event: p }], dateRange: range, breakdownFilter: { breakdown_type: 'group', breakdown: 'tier', breakdown_group_type_index: 0 } });
    // Events without the group (or a group without the property) are the null value, listed after the others.
    assert.deepEqual(byTier.results.map((r: any) => [r.breakdown_value, r.data[0]]), [['gold', 1], ['$$_posthog_breakdown_null_$$', 3]]);
    const gold = await trends({ series: [{ kind: 'EventsNode', event: p }], dateRange: range, properties: [{ type: 'group', key: 'tier', value: 'gold', group_type_index: 0 }] });
    assert.deepEqual(gold.results[0].data, [1]);
    const viaItems = await trends({ series: [{ kind: 'EventsNode', event: p }], dateRange: range, breakdownFilter: { breakdowns: [{ type: 'group', property: 'tier', group_type_index: 0 }] } });
    assert.deepEqual(viaItems.results.map((r: any) => r.data[0]).sort(), [1, 3]);
  });

  test('count-per-actor math: each person’s events per bucket, then avg/min/max/quantiles over persons (day, week, month, breakdown, BoldNumber)', async () => {
    await setTimeZone('UTC');
    const p = fresh();
    // Monday 3 March: A three events (v = x, x, y), B one (x), and A's anonymous id merged into A; Tuesday: A one; Wednesday: none.
    await send([
      ev('$identify', `${p}-a`, '2025-03-01T00:00:00Z', { $anon_distinct_id: `${p}-anon` }),
      ev(p, `${p}-a`, '2025-03-03T09:00:00Z', { v: 'x' }),
      ev(p, `${p}-anon`, '2025-03-03T10:00:00Z', { v: 'x' }),
      ev(p, `${p}-a`, '2025-03-03T11:00:00Z', { v: 'y' }),
      ev(p, `${p}-b`, '2025-03-03T12:00:00Z', { v: 'x' }),
      ev(p, `${p}-a`, '2025-03-04T09:00:00Z', { v: 'x' }),
    ]);
    const dateRange = { date_from: '2025-03-03', date_to: '2025-03-05' };
    const data = async (math: string, extra: Record<string, unknown> = {}) => (await trends({ series: [{ kind: 'EventsNode', event: p, math }], dateRange, ...extra })).results;
    assert.deepEqual((await data('avg_count_per_actor'))[0].data, [2, 1, 0]);
    assert.deepEqual((await data('min_count_per_actor'))[0].data, [1, 1, 0]);
    assert.deepEqual((await data('max_count_per_actor'))[0].data, [3, 1, 0]);
    assert.deepEqual((await data('median_count_per_actor'))[0].data, [2, 1, 0]);
    const p90 = (await data('p90_count_per_actor'))[0].data;
    assert.ok(Math.abs(p90[0] - 2.8) < 1e-9 && p90[1] === 1 && p90[2] === 0, JSON.stringify(p90)); // 1 + (3 − 1) × 0.9
    // The week of Sunday 2 March and the month of March: A 4 events, B 1.
    assert.deepEqual((await data('avg_count_per_actor', { interval: 'week' }))[0].data, [2.5]);
    assert.deepEqual((await data('max_count_per_actor', { interval: 'month' }))[0].data, [4]);
    // By v: x — A 2 and B 1 on Monday, A 1 on Tuesday; y — A 1 on Monday.
    const byV = await data('avg_count_per_actor', { breakdownFilter: { breakdown: 'v' } });
    assert.deepEqual(byV.map((r: any) => [r.breakdown_value, r.data]), [['x', [1.5, 1, 0]], ['y', [1, 0, 0]]]);
    const bold = await data('avg_count_per_actor', { trendsFilter: { display: 'BoldNumber' } });
    assert.equal(bold[0].aggregated_value, 2.5);
    const actors = await expectOk(await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'ActorsQuery', select: ['id'], source: { kind: 'InsightActorsQuery', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: p, math: 'avg_count_per_actor' }], dateRange }, day: '2025-03-03' } } } }));
    assert.equal(actors.results.length, 2);
  });

  test('bad input is a 400 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{}, 'required', 'series'],
      [{ series: [] }, 'invalid_input', 'series'],
      [{ series: [{ kind: 'ActionsNode', id: 1 }] }, 'invalid_choice', 'series.0.id'],
      [{ series: [{ kind: 'EventsNode', math: 'nope' }] }, 'invalid_choice', 'series.0.math'],
      [{ series: [{ kind: 'EventsNode', math: 'p42_count_per_actor' }] }, 'invalid_choice', 'series.0.math'],
      [{ series: [{ kind: 'EventsNode', math: 'sum' }] }, 'required', 'series.0.math_property'],
      [{ series: [{ kind: 'EventsNode', math: 'unique_group' }] }, 'required', 'series.0.math_group_type_index'],
      [{ series: [{ kind: 'EventsNode' }], interval: 'fortnight' }, 'invalid_choice', 'interval'],
      [{ series: [{ kind: 'EventsNode' }], dateRange: { date_from: 'yesterday-ish' } }, 'invalid_date', 'dateRange.date_from'],
      [{ series: [{ kind: 'EventsNode' }], trendsFilter: { formula: 'A + C' } }, 'invalid_input', 'trendsFilter.formula'],
      [{ series: [{ kind: 'EventsNode' }], trendsFilter: { formulaNodes: [{ formula: 'A; drop' }] } }, 'invalid_input', 'trendsFilter.formulaNodes.0.formula'],
      [{ series: [{ kind: 'EventsNode' }], breakdownFilter: { breakdowns: [{ property: 'a' }, { property: 'b' }, { property: 'c' }, { property: 'd' }] } }, 'invalid_input', 'breakdownFilter.breakdowns'],
      [{ series: [{ kind: 'EventsNode' }], breakdownFilter: { breakdown_type: 'hogql', breakdown: 'nosuchfield' } }, 'invalid_input', 'breakdownFilter.breakdown'],
      [{ series: [{ kind: 'EventsNode' }], breakdownFilter: { breakdown_type: 'group', breakdown: 'tier' } }, 'invalid_input', 'breakdownFilter.breakdown_group_type_index'],
      [{ series: [{ kind: 'EventsNode' }], compareFilter: { compare: true, compare_to: 'last week' } }, 'invalid_date', 'compareFilter.compare_to'],
      [{ series: [{ kind: 'EventsNode' }], properties: [{ key: 'x', operator: 'regex', value: '(' }] }, 'invalid_input', 'properties'],
      [{ series: [{ kind: 'EventsNode' }], interval: 'minute', dateRange: { date_from: '2000-01-01' } }, 'invalid_input', 'interval'],
    ];
    for (const [q, code, attr] of cases) await expectError(await query(q), 400, code, attr);
  });

  test('matches the reference implementation (fast-check, DST in Paris and New York, merges, breakdowns)', { timeout: 600_000 }, async () => {
    const zones = ['UTC', 'Europe/Paris', 'America/New_York'];
    // Windows around the spring and autumn DST changes of both zones.
    const windows = [
      { from: '2025-03-03', to: '2025-04-02' },
      { from: '2025-10-20', to: '2025-11-08' },
    ];
    const hourRanges = [
      { from: '2025-03-08', to: '2025-03-10' },
      { from: '2025-03-29', to: '2025-03-31' },
      { from: '2025-10-25', to: '2025-10-27' },
      { from: '2025-11-01', to: '2025-11-03' },
    ];
    const maths = ['total', 'dau', 'weekly_active', 'monthly_active', 'sum', 'avg', 'min', 'max', 'median', 'p90', 'first_time_for_user', 'avg_count_per_actor', 'min_count_per_actor', 'max_count_per_actor', 'median_count_per_actor', 'p90_count_per_actor'];
    const intervals = ['hour', 'day', 'week', 'month'] as const;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          zone: fc.constantFrom(...zones),
          window: fc.constantFrom(...windows),
          hourRange: fc.constantFrom(...hourRanges),
          math: fc.constantFrom(...maths),
          interval: fc.constantFrom(...intervals),
          breakdown: fc.boolean(),
          limit: fc.integer({ min: 1, max: 4 }),
          events: fc.array(
            fc.record({
              who: fc.integer({ min: 0, max: 5 }),
              minutes: fc.integer({ min: -40 * 24 * 60, max: 40 * 24 * 60 }),
              other: fc.boolean(),
              v: fc.option(fc.constantFrom('a', 'b', 'c', 'd', 'e', '', 7, true), { nil: undefined }),
              amount: fc.option(fc.oneof(fc.integer({ min: -5, max: 100 }), fc.constantFrom('12.5', 'x')), { nil: undefined }),
            }),
            { minLength: 1, maxLength: 40 },
          ),
          merges: fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 3 }),
        }),
        async (c) => {
          if (c.interval === 'hour' && c.math === 'monthly_active') return;
          if (c.math === 'first_time_for_user') c.breakdown = false;
          const p = fresh();
          // Hour ranges are three days around a DST change (of either zone); the events crowd into them.
          const hourRange = c.hourRange;
          const center = c.interval === 'hour' ? at(`${hourRange.from}T12:00:00Z`) + 86_400_000 : at(`${c.window.from}T12:00:00Z`) + 14 * 86_400_000;
          const spread = c.interval === 'hour' ? 1 / 14 : 1;
          const events: RefEvent[] = c.events.map((e) => ({
            event: e.other ? `${p}-other` : p,
            distinct_id: `${p}-d${e.who}`,
            ts: center + Math.round(e.minutes * spread) * 60_000,
            properties: { ...(e.v !== undefined && { v: e.v }), ...(e.amount !== undefined && { amount: e.amount }) },
          }));
          // Anonymous ids d3..d5 identified into d0..d2, each at most once (an id already merged
          // into an identified person is not merged again, as in PostHog).
          const merged = new Set<number>();
          c.merges.forEach((m, i) => {
            if (m >= 3 && !merged.has(m) && merged.add(m)) events.push({ event: '$identify', distinct_id: `${p}-d${i}`, ts: center - 50 * 86_400_000 + i, properties: { $anon_distinct_id: `${p}-d${m}` } });
          });
          await setTimeZone(c.zone);
          await send(events);
          const dateRange = c.interval === 'hour' ? { date_from: hourRange.from, date_to: hourRange.to } : { date_from: c.window.from, date_to: c.window.to };
          const math = c.math;
          const body = await trends({
            series: [{ kind: 'EventsNode', event: p, math, ...(math.length <= 6 && !['total', 'dau'].includes(math) && { math_property: 'amount' }) }],
            interval: c.interval,
            dateRange,
            ...(c.breakdown && { breakdownFilter: { breakdown: 'v', breakdown_limit: c.limit } }),
          });
          const expected = referenceTrends(events, {
            event: p,
            math,
            math_property: 'amount',
            interval: c.interval,
            dateRange,
            timeZone: c.zone,
            breakdown: c.breakdown ? 'v' : undefined,
            breakdownLimit: c.limit,
            now: new Date(),
          });
          const actual = body.results.map((r: any) => ({ ...(c.breakdown && { breakdown_value: r.breakdown_value }), data: r.data, days: r.days }));
          assert.equal(actual.length, expected.length, JSON.stringify({ actual, expected }));
          actual.forEach((a: any, i: number) => {
            assert.deepEqual(a.days, expected[i].days);
            assert.equal(a.breakdown_value, expected[i].breakdown_value);
            a.data.forEach((v: number, j: number) => assert.ok(Math.abs(v - expected[i].data[j]) < 1e-9, `${j}: ${JSON.stringify({ actual: a.data, expected: expected[i].data, zone: c.zone })}`));
          });
        },
      ),
      { numRuns: Number(process.env.SIGHTLINE_FC_RUNS ?? 20) },
    );
  });
});
