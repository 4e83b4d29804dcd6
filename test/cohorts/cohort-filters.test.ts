/**
 * Cohorts in queries: the events list's `{"type": "cohort"}` filter (in and not_in, dynamic and
 * static cohorts), insights' property filters by cohort, and the mirror they read following
 * recalculations, uploads, deletions of the cohort and of a member.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { expectOk, ingest, q } from '../helpers/api-fixtures.js';
import { onClickHouse18 } from '../helpers/chdb.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
const BASE = '/api/projects/@current/cohorts/';
let pro: any;
let picked: any;

async function calculated(id: number): Promise<any> {
  for (let i = 0; i < 200; i++) {
    const cohort = await expectOk(await server.api(`${BASE}${id}/`));
    if (!cohort.is_calculating && cohort.last_calculation !== null) return cohort;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`cohort ${id} never finished calculating`);
}

/** Distinct ids of the events the list returns for these filters, sorted, with repeats. */
async function eventsOf(properties: unknown): Promise<string[]> {
  const page = await expectOk(await server.api(`/api/projects/@current/events/?event=view&properties=${q(properties)}`));
  return page.results.map((e: any) => e.distinct_id).sort();
}

/** Settles on the events seen after the mirror is written (it follows the calculation). */
async function eventually(properties: unknown, expected: string[]): Promise<void> {
  let got: string[] = [];
  for (let i = 0; i < 100; i++) {
    got = await eventsOf(properties);
    if (JSON.stringify(got) === JSON.stringify(expected)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.deepEqual(got, expected);
}

before(async () => {
  server = await startServer();
  await ingest(server, [
    { event: '$identify', distinct_id: 'ann', properties: { $set: { plan: 'pro' } } },
    { event: '$identify', distinct_id: 'ben', properties: { $set: { plan: 'free' } } },
    { event: '$identify', distinct_id: 'cat', properties: { $set: { plan: 'pro' } } },
    { event: 'view', distinct_id: 'ann' },
    { event: 'view', distinct_id: 'ann' },
    { event: 'view', distinct_id: 'ben' },
    { event: 'view', distinct_id: 'cat' },
    { event: 'view', distinct_id: 'nobody-identified' },
  ]);
  pro = await expectOk(await server.api(BASE, { method: 'POST', body: { name: 'pro', filters: { properties: { type: 'AND', values: [{ key: 'plan', type: 'person', value: 'pro' }] } } } }), 201);
  picked = await expectOk(await server.api(BASE, { method: 'POST', body: { name: 'picked', is_static: true, csv: 'ben\ncat\n' } }), 201);
  await calculated(pro.id);
});
after(async () => {
  await server.stop();
});

test('the events list filters by cohort: in, not_in, dynamic and static', async () => {
  await eventually([{ type: 'cohort', key: 'id', value: pro.id }], ['ann', 'ann', 'cat']);
  await eventually([{ type: 'cohort', key: 'id', value: String(picked.id) }], ['ben', 'cat']);
  await eventually([{ type: 'cohort', key: 'id', value: pro.id, operator: 'not_in' }], ['ben', 'nobody-identified']);
  await eventually({ type: 'OR', values: [{ type: 'cohort', key: 'id', value: pro.id }, { type: 'cohort', key: 'id', value: picked.id }] }, ['ann', 'ann', 'ben', 'cat']);
  await eventually([{ type: 'cohort', key: 'id', value: 999999 }], []);
  const bad = await server.api(`/api/projects/@current/events/?properties=${q([{ type: 'cohort', key: 'id', value: 'abc' }])}`);
  assert.equal(bad.status, 400);
});

test('the mirror follows changes: a recalculation, an upload, a deleted cohort', async () => {
  await expectOk(await server.api(`${BASE}${pro.id}/`, { method: 'PATCH', body: { filters: { properties: { type: 'AND', values: [{ key: 'plan', type: 'person', value: 'free' }] } } } }));
  await calculated(pro.id);
  await eventually([{ type: 'cohort', key: 'id', value: pro.id }], ['ben']);
  await expectOk(await server.api(`${BASE}${picked.id}/`, { method: 'PATCH', body: { csv: 'ann\n' } }));
  await eventually([{ type: 'cohort', key: 'id', value: picked.id }], ['ann', 'ann', 'ben', 'cat']);
  assert.equal((await server.api(`${BASE}${picked.id}/`, { method: 'DELETE' })).status, 204);
  await eventually([{ type: 'cohort', key: 'id', value: picked.id }], []);
});

test('insights filter by cohort', async () => {
  const query = {
    kind: 'TrendsQuery',
    series: [{ kind: 'EventsNode', event: 'view', math: 'total' }],
    dateRange: { date_from: '-1d' },
    interval: 'day',
    properties: [{ type: 'cohort', key: 'id', value: pro.id }],
  };
  const result = await expectOk(await server.api('/api/projects/@current/query/', { method: 'POST', body: { query } }));
  assert.equal(result.results[0].count, 1, JSON.stringify(result.results[0]));
});

test('trends break down by cohort: one series per cohort and "all", people in several cohorts counted in each', async () => {
  const everyoneCohort = await expectOk(await server.api(BASE, { method: 'POST', body: { name: 'ann and ben', is_static: true, csv: 'ann\nben\n' } }), 201);
  const query = {
    kind: 'TrendsQuery',
    series: [{ kind: 'EventsNode', event: 'view', math: 'total' }],
    dateRange: { date_from: '-1d' },
    interval: 'day',
    breakdownFilter: { breakdown_type: 'cohort', breakdown: [pro.id, everyoneCohort.id, 'all'] },
  };
  const run = async () => (await expectOk(await server.api('/api/projects/@current/query/', { method: 'POST', body: { query, refresh: 'force_blocking' } }))).results;
  let results: any[] = [];
  for (let i = 0; i < 100; i++) {
    results = await run();
    if (results.find((r: any) => r.breakdown_value === everyoneCohort.id)?.count === 3) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const counts = Object.fromEntries(results.map((r: any) => [String(r.breakdown_value), r.count]));
  // pro is {ben} since the previous test; ann (2 views) and ben (1) are both in the static cohort.
  assert.deepEqual(counts, { [String(pro.id)]: 1, [String(everyoneCohort.id)]: 3, all: 5 });
  // Labels are the cohorts' names, as PostHog's ("all users" for everyone); the value stays the id.
  assert.deepEqual(Object.fromEntries(results.map((r: any) => [String(r.breakdown_value), r.label])), { [String(pro.id)]: 'pro', [String(everyoneCohort.id)]: 'ann and ben', all: 'all users' });
  const bad = await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { ...query, breakdownFilter: { breakdown_type: 'cohort', breakdown: ['nope'] } } } });
  assert.equal(bad.status, 400);
});

// Funnels need window functions, which the ClickHouse 18.16 of the local cluster lacks (docs/scale-out-cluster.md).
const withoutWindowFunctions = onClickHouse18() && 'funnels need window functions, which ClickHouse 18.16 lacks';

test('funnels and retention break down by cohort: one funnel (rows) per cohort and "all", and the persons behind each number', { skip: withoutWindowFunctions }, async () => {
  const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
  await ingest(server, [
    ...['ann', 'ben', 'cat'].map((who) => ({ event: 'open', distinct_id: who, timestamp: minutesAgo(10) })),
    { event: 'pay', distinct_id: 'ann', timestamp: minutesAgo(5) },
  ]);
  const annAndCat = await expectOk(await server.api(BASE, { method: 'POST', body: { name: 'ann and cat', is_static: true, csv: 'ann\ncat\n' } }), 201);
  const funnel = {
    kind: 'FunnelsQuery',
    series: [{ kind: 'EventsNode', event: 'open' }, { kind: 'EventsNode', event: 'pay' }],
    dateRange: { date_from: '-1d' },
    breakdownFilter: { breakdown_type: 'cohort', breakdown: [annAndCat.id, 'all'] },
  };
  const query = async (body: unknown) => expectOk(await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: body, refresh: 'force_blocking' } }));
  let results: any[][] = [];
  for (let i = 0; i < 100; i++) {
    results = (await query(funnel)).results;
    if (results.find((f) => f[0].breakdown_value === annAndCat.id)?.[0].count === 2) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // ann opened and paid, cat only opened; "all" adds ben, who only opened.
  const counts = Object.fromEntries(results.map((f) => [String(f[0].breakdown_value), f.map((step: any) => step.count)]));
  assert.deepEqual(counts, { [String(annAndCat.id)]: [2, 1], all: [3, 1] });
  assert.deepEqual(results.map((f) => f[0].breakdown_value), ['all', annAndCat.id], 'ordered by the last step, then the earlier ones');
  // `breakdown` is the display value: the cohort's name, "all users" for everyone (PostHog's get_breakdown_cohort_name).
  assert.deepEqual(results.map((f) => f[1].breakdown), ['all users', 'ann and cat']);
  const persons = async (funnelStep: number) => {
    const body = await query({ kind: 'ActorsQuery', select: ['person'], source: { kind: 'FunnelsActorsQuery', source: funnel, funnelStep, funnelStepBreakdown: annAndCat.id } });
    return body.results.map((row: any[]) => row[0].distinct_ids[0]).sort();
  };
  assert.deepEqual(await persons(2), ['ann']);
  assert.deepEqual(await persons(-2), ['cat']);
  const trends = (await query({ ...funnel, funnelsFilter: { funnelVizType: 'trends' }, interval: 'day' })).results;
  assert.deepEqual(trends.map((t: any) => t.breakdown_value), [annAndCat.id, 'all']);
  const bad = await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { ...funnel, breakdownFilter: { breakdown_type: 'cohort', breakdown: [] } } } });
  assert.equal(bad.status, 400);

  // Retention by cohort: the row of the day they opened holds ann and cat, or everyone who opened.
  const retention = {
    kind: 'RetentionQuery',
    dateRange: { date_from: '-1d' },
    retentionFilter: { period: 'Day', totalIntervals: 2, targetEntity: { id: 'open', type: 'events' }, returningEntity: { id: 'pay', type: 'events' } },
    breakdownFilter: { breakdown_type: 'cohort', breakdown: [annAndCat.id, 'all'] },
  };
  const rows = (await query(retention)).results;
  const opened = (value: unknown) => rows.filter((row: any) => row.breakdown_value === value).reduce((sum: number, row: any) => sum + row.values[0].count, 0);
  assert.deepEqual([opened(annAndCat.id), opened('all')], [2, 3]);
  const interval = rows.filter((row: any) => row.breakdown_value === annAndCat.id).findIndex((row: any) => row.values[0].count === 2);
  const members = await query({ kind: 'ActorsQuery', select: ['person'], source: { kind: 'InsightActorsQuery', source: retention, interval, breakdown: annAndCat.id } });
  assert.deepEqual(members.results.map((row: any[]) => row[0].distinct_ids[0]).sort(), ['ann', 'cat']);
  // By a person property: the three who opened, under their plans.
  const byProperty = (await query({ ...retention, breakdownFilter: { breakdown_type: 'person', breakdown: 'plan' } })).results;
  assert.deepEqual([...new Set(byProperty.map((row: any) => row.breakdown_value))].sort(), ['free', 'pro']);
  assert.equal(byProperty.reduce((sum: number, row: any) => sum + row.values[0].count, 0), 3);
});

test('a deleted person leaves every cohort: membership, the persons list and the events filter', async () => {
  const cohort = await expectOk(await server.api(BASE, { method: 'POST', body: { name: 'cat only', is_static: true, csv: 'cat\n' } }), 201);
  await eventually([{ type: 'cohort', key: 'id', value: cohort.id }], ['cat']);
  const cat = (await expectOk(await server.api('/api/projects/@current/persons/?distinct_id=cat'))).results[0];
  assert.equal((await server.api(`/api/projects/@current/persons/${cat.uuid}/`, { method: 'DELETE' })).status, 202);
  const members = await expectOk(await server.api(`${BASE}${cohort.id}/persons/`));
  assert.deepEqual([members.count, members.results], [0, []]);
  await eventually([{ type: 'cohort', key: 'id', value: cohort.id }], []);
});
