import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { TestServer } from '../helpers/server.js';
import { expectError, expectOk } from '../helpers/api-fixtures.js';
import {
  type CaseOf,
  DST_MOMENTS,
  arbZone,
  asReferenceEvents,
  eventAt,
  generatedPersons,
  queryOf,
  reportingFailures,
  sendEvents,
  setTimeZone,
  startInsightsServer,
} from '../helpers/insights.js';
import { buckets, resolveDateRange, startOf, toWall, wallDate, DAY_MS } from '../../src/insights/time/index.js';
import { type RefFunnel, referenceSteps, referenceTimeToConvert, referenceTrends } from '../unit/insights/reference/funnels.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;

describe('FunnelsQuery', () => {
  let server: TestServer;
  let run = 0;
  before(async () => {
    server = await startInsightsServer();
  });
  after(async () => {
    await server?.stop();
  });

  /** Event names unique to one test, so tests share the project without seeing each other. */
  const names = () => {
    const prefix = `t${run++}_`;
    return (name: string) => prefix + name;
  };

  const send = (events: Array<{ event: string; distinct_id: string; at: number; properties?: Record<string, unknown> }>) =>
    sendEvents(server, events.map((e) => eventAt(e.event, e.distinct_id, e.at, e.properties)));
  const query = (q: Record<string, unknown>) => queryOf(server, 'FunnelsQuery')(q);
  const series = (...events: string[]) => events.map((event) => ({ kind: 'EventsNode', event }));
  const range = (from: number, to: number) => ({ date_from: new Date(from).toISOString(), date_to: new Date(to).toISOString(), explicitDate: true });
  const counts = (body: any) => body.results.map((s: any) => s.count);

  const t0 = Date.UTC(2025, 2, 3, 12);

  test('vector: C outside the window measured from A, though only 5 days after B', async () => {
    const n = names();
    await send([
      { event: n('A'), distinct_id: 'v1', at: t0 },
      { event: n('B'), distinct_id: 'v1', at: t0 + 10 * DAY },
      { event: n('C'), distinct_id: 'v1', at: t0 + 15 * DAY },
    ]);
    const body = await expectOk(await query({ series: series(n('A'), n('B'), n('C')), dateRange: range(t0 - DAY, t0 + 30 * DAY) }));
    assert.deepEqual(counts(body), [1, 1, 0]);
    assert.equal(body.results[1].average_conversion_time, 10 * 86_400);
    assert.equal(body.results[1].median_conversion_time, 10 * 86_400);
    assert.equal(body.results[2].average_conversion_time, null);
    assert.deepEqual(Object.keys(body.results[0]).sort(), ['action_id', 'average_conversion_time', 'count', 'custom_name', 'median_conversion_time', 'name', 'order', 'people', 'type']);
  });

  test('vector: a step after date_to is not counted', async () => {
    const n = names();
    await send([
      { event: n('A'), distinct_id: 'v2', at: t0 },
      { event: n('B'), distinct_id: 'v2', at: t0 + DAY + HOUR },
    ]);
    const body = await expectOk(await query({ series: series(n('A'), n('B')), dateRange: { date_from: '2025-03-01', date_to: '2025-03-03' } }));
    assert.deepEqual(counts(body), [1, 0]);
  });

  test('strict: any other event between two steps breaks the attempt; unordered counts steps in any order', async () => {
    const n = names();
    await send([
      { event: n('A'), distinct_id: 's1', at: t0 },
      { event: n('X'), distinct_id: 's1', at: t0 + HOUR },
      { event: n('B'), distinct_id: 's1', at: t0 + 2 * HOUR },
      { event: n('A'), distinct_id: 's2', at: t0 },
      { event: n('B'), distinct_id: 's2', at: t0 + HOUR },
      { event: n('B'), distinct_id: 's3', at: t0 },
      { event: n('A'), distinct_id: 's3', at: t0 + HOUR },
    ]);
    const base = { series: series(n('A'), n('B')), dateRange: range(t0 - DAY, t0 + DAY) };
    assert.deepEqual(counts(await expectOk(await query({ ...base, funnelsFilter: { funnelOrderType: 'strict' } }))), [3, 1]);
    assert.deepEqual(counts(await expectOk(await query({ ...base, funnelsFilter: { funnelOrderType: 'ordered' } }))), [3, 2]);
    const unordered = await expectOk(await query({ ...base, funnelsFilter: { funnelOrderType: 'unordered' } }));
    assert.deepEqual(counts(unordered), [3, 3]);
    assert.deepEqual(unordered.results.map((s: any) => [s.action_id, s.name]), [
      [null, 'Completed 1 step'],
      [null, 'Completed 2 steps'],
    ]);
  });

  test('an exclusion between the steps removes the person from every step', async () => {
    const n = names();
    await send([
      { event: n('A'), distinct_id: 'x1', at: t0 },
      { event: n('no'), distinct_id: 'x1', at: t0 + HOUR },
      { event: n('B'), distinct_id: 'x1', at: t0 + 2 * HOUR },
      { event: n('A'), distinct_id: 'x2', at: t0 },
      { event: n('B'), distinct_id: 'x2', at: t0 + 2 * HOUR },
      { event: n('no'), distinct_id: 'x2', at: t0 + 3 * HOUR },
    ]);
    const body = await expectOk(
      await query({
        series: series(n('A'), n('B')),
        dateRange: range(t0 - DAY, t0 + DAY),
        funnelsFilter: { exclusions: [{ kind: 'EventsNode', event: n('no'), funnelFromStep: 0, funnelToStep: 1 }] },
      }),
    );
    assert.deepEqual(counts(body), [1, 1]);
  });

  test('the same event as two consecutive steps needs two events at later times; a person merged later counts once', async () => {
    const n = names();
    await send([
      { event: n('A'), distinct_id: 'anon-m', at: t0 },
      { event: n('A'), distinct_id: 'm1', at: t0 + HOUR },
      { event: n('B'), distinct_id: 'm1', at: t0 + 2 * HOUR },
      { event: n('A'), distinct_id: 'm2', at: t0 },
      { event: n('B'), distinct_id: 'm2', at: t0 },
    ]);
    await send([{ event: '$identify', distinct_id: 'm1', at: t0 - 30 * DAY, properties: { $anon_distinct_id: 'anon-m' } }]);
    const body = await expectOk(await query({ series: series(n('A'), n('A'), n('B')), dateRange: range(t0 - DAY, t0 + DAY) }));
    assert.deepEqual(counts(body), [2, 1, 1]);
    assert.equal(body.results[1].average_conversion_time, 3600);
    // Distinct event names may share a moment.
    assert.deepEqual(counts(await expectOk(await query({ series: series(n('A'), n('B')), dateRange: range(t0 - DAY, t0 + DAY) }))), [2, 2]);
  });

  test('breakdowns: PostHog’s funnel-per-value shape, first touch, "" for a missing value, Other beyond the limit', async () => {
    const n = names();
    const people = ['Chrome', 'Chrome', 'Firefox', null, 'Safari'];
    await send(
      people.flatMap((browser, i) => [
        { event: n('A'), distinct_id: `b${i}`, at: t0, properties: browser ? { $browser: browser } : {} },
        { event: n('A'), distinct_id: `b${i}`, at: t0 + HOUR, properties: { $browser: 'Later' } },
        ...(i % 2 === 0 ? [{ event: n('B'), distinct_id: `b${i}`, at: t0 + 2 * HOUR }] : []),
      ]),
    );
    const body = await expectOk(
      await query({ series: series(n('A'), n('B')), dateRange: range(t0 - DAY, t0 + DAY), breakdownFilter: { breakdown_type: 'event', breakdown: '$browser', breakdown_limit: 2 } }),
    );
    const summary = body.results.map((funnel: any[]) => [funnel[0].breakdown_value, funnel.map((s) => s.count)]);
    assert.deepEqual(summary, [
      [['Other'], [2, 2]],
      [['Chrome'], [2, 1]],
      [[''], [1, 0]],
    ]);
    assert.deepEqual(body.results[1][1].breakdown, ['Chrome']);
    assert.equal(body.results[0][1].order, 1);
  });

  test('HogQL breakdown: the expression over the entry event (first touch), "" when null; a bad expression is a 400', async () => {
    const n = names();
    await send([
      { event: n('A'), distinct_id: 'h1', at: t0, properties: { plan: 'pro', seats: 3 } },
      { event: n('B'), distinct_id: 'h1', at: t0 + HOUR },
      { event: n('A'), distinct_id: 'h2', at: t0, properties: { plan: 'Pro', seats: 12 } },
      { event: n('A'), distinct_id: 'h2', at: t0 + HOUR, properties: { plan: 'free' } },
      { event: n('A'), distinct_id: 'h3', at: t0 },
      { event: n('B'), distinct_id: 'h3', at: t0 + 2 * HOUR },
    ]);
    const funnel = (breakdownFilter: Record<string, unknown>) => query({ series: series(n('A'), n('B')), dateRange: range(t0 - DAY, t0 + DAY), breakdownFilter });
    const body = await expectOk(await funnel({ breakdown_type: 'hogql', breakdown: 'lower(properties.plan)' }));
    const summary = body.results.map((steps: any[]) => [steps[0].breakdown_value, steps[0].breakdown, steps.map((s) => s.count)]);
    assert.deepEqual(summary, [
      [['pro'], ['pro'], [2, 1]],
      [[''], [''], [1, 1]],
    ]);
    // Numbers become text; several breakdowns mix kinds.
    const mixed = await expectOk(await funnel({ breakdowns: [{ type: 'hogql', property: 'toInt(properties.seats) > 10' }, { type: 'event', property: 'plan' }] }));
    assert.deepEqual(mixed.results.map((steps: any[]) => [steps[0].breakdown_value, steps.map((s) => s.count)]), [
      [['', ''], [1, 1]],
      [['false', 'pro'], [1, 1]],
      [['true', 'Pro'], [1, 0]],
    ]);
    await expectError(await funnel({ breakdown_type: 'hogql', breakdown: 'nosuchfield' }), 400, 'invalid_input', 'breakdownFilter.breakdown');
    await expectError(await funnel({ breakdown_type: 'hogql', breakdown: 'count()' }), 400, 'invalid_input', 'breakdownFilter.breakdown');
    await expectError(await funnel({ breakdown_type: 'hogql', breakdown: 'lower(' }), 400, 'invalid_input', 'breakdownFilter.breakdown');
    await expectError(await funnel({ breakdowns: [{ type: 'hogql', property: 'properties.plan +' }] }), 400, 'invalid_input', 'breakdownFilter.breakdowns.0.property');
  });

  test('optional steps: skipping one still counts the later steps; its count is who did it, before the next required step', async () => {
    const n = names();
    const at = (who: string, event: string, hours: number) => ({ event: n(event), distinct_id: n(who), at: t0 + hours * HOUR });
    await send([
      at('p1', 'A', 0), at('p1', 'B', 1), at('p1', 'C', 2), // every step
      at('p2', 'A', 0), at('p2', 'C', 1), // skipped B
      at('p3', 'A', 0), at('p3', 'C', 1), at('p3', 'B', 2), // B after C: not done
      at('p4', 'A', 0), at('p4', 'B', 1), // B but not C
      at('p5', 'A', 0),
    ]);
    const funnel = { kind: 'FunnelsQuery', series: [{ kind: 'EventsNode', event: n('A') }, { kind: 'EventsNode', event: n('B'), optionalInFunnel: true }, { kind: 'EventsNode', event: n('C') }], dateRange: range(t0 - DAY, t0 + DAY) };
    const body = await expectOk(await query(funnel));
    assert.deepEqual(counts(body), [5, 2, 3]);
    assert.equal(body.results[1].average_conversion_time, null);
    // C's conversion time runs from A (2 h, 1 h, 1 h).
    assert.equal(body.results[2].average_conversion_time, 4800);
    assert.equal(body.results[2].median_conversion_time, 3600);
    const persons = async (funnelStep: number) => {
      const listed = await expectOk(await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'ActorsQuery', select: ['person'], source: { kind: 'FunnelsActorsQuery', source: funnel, funnelStep } } } }));
      return listed.results.map((row: any[]) => row[0].distinct_ids[0].slice(-2)).sort();
    };
    assert.deepEqual(await persons(2), ['p1', 'p4']);
    assert.deepEqual(await persons(3), ['p1', 'p2', 'p3']);
    assert.deepEqual(await persons(-3), ['p4', 'p5']);
    const actors = (funnelStep: number) => server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'ActorsQuery', source: { kind: 'FunnelsActorsQuery', source: funnel, funnelStep } } } });
    await expectError(await actors(-2), 400, 'invalid_input', 'source.funnelStep');
    // Bad optional steps.
    const [a, b, c] = funnel.series;
    await expectError(await query({ ...funnel, series: [{ ...a, optionalInFunnel: true }, b, c] }), 400, 'invalid_input', 'series.0.optionalInFunnel');
    await expectError(await query({ ...funnel, funnelsFilter: { funnelOrderType: 'strict' } }), 400, 'invalid_choice', 'series.1.optionalInFunnel');
    await expectError(await query({ ...funnel, funnelsFilter: { funnelVizType: 'trends' } }), 400, 'invalid_choice', 'funnelsFilter.funnelVizType');
    await expectError(await query({ ...funnel, series: [a, b, { ...b, optionalInFunnel: false }] }), 400, 'invalid_input', 'series.1.optionalInFunnel');
    await expectError(
      await query({ ...funnel, funnelsFilter: { exclusions: [{ kind: 'EventsNode', event: n('X'), funnelFromStep: 1, funnelToStep: 2 }] } }),
      400,
      'invalid_input',
      'funnelsFilter.exclusions.0.funnelFromStep',
    );
  });

  test('breakdown by a group property: read through each event\'s group key, a missing group is ""', async () => {
    const n = names();
    const company = (key: string) => ({ $groups: { company: key } });
    await send([
      { event: '$groupidentify', distinct_id: 'g-admin', at: t0 - HOUR, properties: { $group_type: 'company', $group_key: 'acme', $group_set: { plan: 'pro' } } },
      { event: '$groupidentify', distinct_id: 'g-admin', at: t0 - HOUR, properties: { $group_type: 'company', $group_key: 'initech', $group_set: { plan: 'free' } } },
      { event: n('A'), distinct_id: 'g1', at: t0, properties: company('acme') },
      { event: n('B'), distinct_id: 'g1', at: t0 + HOUR, properties: company('acme') },
      { event: n('A'), distinct_id: 'g2', at: t0, properties: company('initech') },
      { event: n('A'), distinct_id: 'g3', at: t0 },
      { event: n('B'), distinct_id: 'g3', at: t0 + HOUR },
    ]);
    const funnel = { series: series(n('A'), n('B')), dateRange: range(t0 - DAY, t0 + DAY), breakdownFilter: { breakdown_type: 'group', breakdown: 'plan', breakdown_group_type_index: 0 } };
    const body = await expectOk(await query(funnel));
    const summary = body.results.map((steps: any[]) => [steps[0].breakdown_value, steps.map((s) => s.count)]);
    assert.deepEqual(summary, [
      [[''], [1, 1]],
      [['pro'], [1, 1]],
      [['free'], [1, 0]],
    ]);
    await expectError(await query({ ...funnel, breakdownFilter: { breakdown_type: 'group', breakdown: 'plan' } }), 400, 'invalid_input', 'breakdownFilter.breakdown_group_type_index');
  });

  test('trends view: conversion % per entry day with days and labels; time to convert: bins', async () => {
    const n = names();
    await send([
      { event: n('A'), distinct_id: 'tr1', at: t0 },
      { event: n('B'), distinct_id: 'tr1', at: t0 + HOUR },
      { event: n('A'), distinct_id: 'tr2', at: t0 },
      { event: n('A'), distinct_id: 'tr3', at: t0 + DAY },
      { event: n('B'), distinct_id: 'tr3', at: t0 + DAY + 3 * HOUR },
    ]);
    const base = { series: series(n('A'), n('B')), dateRange: { date_from: '2025-03-02', date_to: '2025-03-05' } };
    const trends = await expectOk(await query({ ...base, funnelsFilter: { funnelVizType: 'trends' } }));
    assert.equal(trends.results.length, 1);
    assert.deepEqual(trends.results[0].days, ['2025-03-02', '2025-03-03', '2025-03-04', '2025-03-05']);
    assert.deepEqual(trends.results[0].data, [0, 50, 100, 0]);
    assert.equal(trends.results[0].count, 4);
    assert.equal(trends.results[0].labels[1], '3-Mar-2025');
    const ttc = await expectOk(await query({ ...base, funnelsFilter: { funnelVizType: 'time_to_convert' } }));
    // Two values, 3600 and 10800: ceil(cbrt(2)) = 2 bins of 3600 s from 3600, and the closing bin.
    assert.deepEqual(ttc.results, { average_conversion_time: 7200, bins: [[3600, 1], [7200, 0], [10800, 1]] });
    assert.ok(ttc.resolved_date_range.date_from.startsWith('2025-03-02T00:00:00'));
  });

  test('funnelAggregateByHogQL: the actor is the expression\'s value (sessions here); unset or empty values count for none', async () => {
    const n = names();
    const sid = (s: string) => ({ $session_id: s });
    await send([
      // One person, two sessions: A in s1, B in s2 — converted as a person, not as a session.
      { event: n('A'), distinct_id: n('u1'), at: t0, properties: sid(n('s1')) },
      { event: n('B'), distinct_id: n('u1'), at: t0 + HOUR, properties: sid(n('s2')) },
      // Two persons in one session: the session converts once.
      { event: n('A'), distinct_id: n('u2'), at: t0, properties: sid(n('s3')) },
      { event: n('B'), distinct_id: n('u3'), at: t0 + HOUR, properties: sid(n('s3')) },
      // No session, or an empty one: no actor.
      { event: n('A'), distinct_id: n('u4'), at: t0 },
      { event: n('A'), distinct_id: n('u5'), at: t0, properties: sid('') },
    ]);
    const q = { series: series(n('A'), n('B')), dateRange: range(t0 - HOUR, t0 + DAY) };
    assert.deepEqual(counts(await expectOk(await query(q))), [4, 1]);
    const bySession = { ...q, funnelsFilter: { funnelAggregateByHogQL: 'properties.$session_id' } };
    assert.deepEqual(counts(await expectOk(await query(bySession))), [2, 1]);
    // "person_id" is the default; a group type wins over the expression, as in PostHog.
    assert.deepEqual(counts(await expectOk(await query({ ...q, funnelsFilter: { funnelAggregateByHogQL: 'person_id' } }))), [4, 1]);
    assert.deepEqual(counts(await expectOk(await query({ ...bySession, aggregation_group_type_index: 0 }))), [0, 0]);
    // Trends: of the two sessions that entered on t0's day, one converted.
    const trends = await expectOk(await query({ ...bySession, funnelsFilter: { ...bySession.funnelsFilter, funnelVizType: 'trends' } }));
    assert.deepEqual(trends.results[0].data.filter((x: number) => x !== 0), [50]);
    await expectError(await query({ ...q, funnelsFilter: { funnelAggregateByHogQL: 'properties.$session_id +' } }), 400, 'invalid_input', 'funnelsFilter.funnelAggregateByHogQL');
    await expectError(await query({ ...q, funnelsFilter: { funnelAggregateByHogQL: 'count()' } }), 400, 'invalid_input', 'funnelsFilter.funnelAggregateByHogQL');
    await expectError(await query({ ...q, funnelsFilter: { funnelAggregateByHogQL: ['person_id'] } }), 400, 'invalid_input', 'funnelsFilter.funnelAggregateByHogQL');
    const actors = await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'ActorsQuery', source: { kind: 'FunnelsActorsQuery', source: { kind: 'FunnelsQuery', ...bySession }, funnelStep: 1 } } } });
    await expectError(actors, 400, 'invalid_choice', 'source.source.funnelsFilter.funnelAggregateByHogQL');
  });

  test('bad input is a 400 naming the field', async () => {
    const two = series('a', 'b');
    await expectError(await query({ series: series('a') }), 400, 'invalid_input', 'series');
    await expectError(await query({ series: [{ kind: 'ActionsNode', id: 1 }, ...two] }), 400, 'invalid_choice', 'series.0.id');
    await expectError(await query({ series: [{ kind: 'EventsNode', event: 'a', math: 'dau' }, ...two] }), 400, 'invalid_choice', 'series.0.math');
    await expectError(await query({ series: two, funnelsFilter: { funnelOrderType: 'sideways' } }), 400, 'invalid_choice', 'funnelsFilter.funnelOrderType');
    await expectError(await query({ series: two, funnelsFilter: { funnelWindowIntervalUnit: 'fortnight' } }), 400, 'invalid_choice', 'funnelsFilter.funnelWindowIntervalUnit');
    await expectError(await query({ series: two, funnelsFilter: { funnelWindowInterval: -1 } }), 400, 'invalid_input', 'funnelsFilter.funnelWindowInterval');
    await expectError(await query({ series: series('a', 'b', 'c'), funnelsFilter: { exclusions: [{ kind: 'EventsNode', event: 'x', funnelFromStep: 1, funnelToStep: 1 }] } }), 400, 'invalid_input', 'funnelsFilter.exclusions.0.funnelToStep');
    await expectError(await query({ series: two, funnelsFilter: { exclusions: [{ kind: 'EventsNode', event: 'b', funnelFromStep: 0, funnelToStep: 1 }] } }), 400, 'invalid_input', 'funnelsFilter.exclusions.0.event');
    await expectError(await query({ series: [{ kind: 'EventsNode', event: 'a', properties: [{ key: 'x', operator: 'regex', value: '(' }] }, ...two] }), 400, 'invalid_input', 'series.0.properties');
    await expectError(await query({ series: two, dateRange: { date_from: 'yesterday-ish' } }), 400, 'invalid_date', 'dateRange.date_from');
    await expectError(await query({ series: two, breakdownFilter: { breakdown_type: 'cohort', breakdown: ['nope'] } }), 400, 'invalid_input', 'breakdownFilter.breakdown');
  });

  // --- property: the API against the reference implementation --------------------------------

  const arbCase = fc.record({
    zone: arbZone,
    persons: fc.integer({ min: 1, max: 4 }),
    merged: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
    events: fc.array(
      fc.record({
        step: fc.integer({ min: 0, max: 3 }),
        who: fc.integer({ min: 0, max: 7 }),
        // Half hours around the DST change: ties and exact window edges are common.
        slot: fc.integer({ min: -100, max: 100 }),
        prop: fc.constantFrom('x', 'y', 'z', 'w', null, ''),
        // A session id for funnelAggregateByHogQL (null: none).
        session: fc.constantFrom('s1', 's2', 's3', null),
      }),
      { maxLength: 40 },
    ),
    order: fc.constantFrom('ordered', 'strict', 'unordered' as const),
    shape: fc.constantFrom('ABC', 'AB', 'AAB', 'ABA'),
    windowHours: fc.constantFrom(1, 6, 24, 48),
    exclusion: fc.option(fc.record({ fromStep: fc.integer({ min: 0, max: 1 }), span: fc.integer({ min: 1, max: 2 }) }), { nil: null }),
    breakdown: fc.constantFrom(null, 'event', 'hogql'),
    optionalStep: fc.constantFrom(null, null, 1, 2),
    bySession: fc.boolean(),
  });

  test('property: steps, trends and time to convert equal the reference (persons merged, DST, window edges, exclusions, breakdowns, optional steps, aggregation by HogQL)', async () => {
    await fc.assert(
      fc.asyncProperty(arbCase, reportingFailures(checkCase)),
      { numRuns: Number(process.env.FUNNEL_RUNS ?? 25), endOnFailure: true },
    );
  });

  // A HogQL breakdown and what it computes: one value for x and y, the text otherwise, null when missing.
  const HOGQL_BREAKDOWN = "if(properties.prop in ('x', 'y'), 'xy', properties.prop)";
  const hogqlValue = (e: { properties: Record<string, unknown> }) => {
    const prop = e.properties.prop;
    return prop === 'x' || prop === 'y' ? 'xy' : prop;
  };

  async function checkCase(c: CaseOf<typeof arbCase>) {
    const r = `p${run++}_`;
    const name = (step: number) => r + 'ABCD'[step];
    const shapeSteps = [...c.shape].map((letter) => r + letter);
    const n = shapeSteps.length;
    const exclusion = c.exclusion && c.order !== 'unordered' ? { fromStep: Math.min(c.exclusion.fromStep, n - 2), toStep: Math.min(n - 1, Math.min(c.exclusion.fromStep, n - 2) + c.exclusion.span) } : c.order === 'unordered' && c.exclusion ? { fromStep: 0, toStep: n - 1 } : null;
    // An optional step of an ordered funnel, not where an exclusion starts or ends.
    const optional = c.order === 'ordered' && c.optionalStep !== null && c.optionalStep < n && exclusion?.fromStep !== c.optionalStep && exclusion?.toStep !== c.optionalStep ? c.optionalStep : null;
    const base = DST_MOMENTS[c.zone];
    const persons = generatedPersons(r, c.persons, c.merged);
    const sent = c.events.map((e) =>
      eventAt(name(e.step), persons.distinct(e.who), base + e.slot * 1_800_000, { ...(e.prop === null ? {} : { prop: e.prop }), ...(e.session === null ? {} : { $session_id: r + e.session }) }),
    );
    await setTimeZone(server, c.zone);
    await sendEvents(server, sent);
    const merges = persons.identifies(base - 20 * DAY);
    await sendEvents(server, merges);

    const localDay = (offsetDays: number) => wallDate(startOf('day', toWall(base, c.zone)) + offsetDays * DAY_MS);
    const dateRange = { date_from: localDay(-1), date_to: localDay(1) };
    const range = resolveDateRange(dateRange, { interval: 'day', timeZone: c.zone, weekStartDay: 0, now: new Date(base) });
    const byPerson = asReferenceEvents([...sent, ...merges], persons.personOf);
    // Aggregated by the session id, the session is the reference's actor; events without one drop out.
    const events = c.bySession ? byPerson.flatMap((e) => (typeof e.properties.$session_id === 'string' ? [{ ...e, person: e.properties.$session_id }] : [])) : byPerson;
    const f: RefFunnel = {
      steps: shapeSteps.map((event, k) => ({ event, optional: k === optional })),
      order: c.order,
      windowMs: c.windowHours * HOUR,
      exclusions: exclusion ? [{ event: name(3), ...exclusion }] : [],
      range,
      ...(c.breakdown && { breakdown: { value: c.breakdown === 'hogql' ? hogqlValue : (e) => e.properties.prop, limit: 2 } }),
    };
    const q = {
      series: series(...shapeSteps).map((step, k) => (k === optional ? { ...step, optionalInFunnel: true } : step)),
      dateRange,
      funnelsFilter: {
        funnelOrderType: c.order,
        funnelWindowInterval: c.windowHours,
        funnelWindowIntervalUnit: 'hour',
        exclusions: exclusion ? [{ kind: 'EventsNode', event: name(3), funnelFromStep: exclusion.fromStep, funnelToStep: exclusion.toStep }] : [],
        ...(c.bySession && { funnelAggregateByHogQL: 'properties.$session_id' }),
      },
      ...(c.breakdown && { breakdownFilter: { breakdown_type: c.breakdown, breakdown: c.breakdown === 'hogql' ? HOGQL_BREAKDOWN : 'prop', breakdown_limit: 2 } }),
    };

    // steps
    const stepsBody = await expectOk(await query(q));
    const expected = referenceSteps(f, events);
    const funnels: any[][] = c.breakdown ? stepsBody.results : [stepsBody.results];
    const actual = new Map(funnels.map((fn) => [c.breakdown ? fn[0].breakdown_value[0] : '', fn]));
    if (c.breakdown) assert.deepEqual([...actual.keys()].sort(), [...expected.keys()].sort(), 'breakdown values');
    for (const [key, steps] of expected) {
      const got = actual.get(key)!;
      assert.deepEqual(got.map((s) => s.count), steps.map((s) => s.count), `counts ${key}`);
      steps.forEach((s, k) => {
        close(got[k].average_conversion_time, s.average, `average ${key} ${k}`);
        close(got[k].median_conversion_time, s.median, `median ${key} ${k}`);
      });
    }

    if (optional !== null) {
      // Optional steps are for the steps view only.
      await expectError(await query({ ...q, funnelsFilter: { ...q.funnelsFilter, funnelVizType: 'trends' } }), 400, 'invalid_choice', 'funnelsFilter.funnelVizType');
      return;
    }

    // trends (conversion per entry day, first to last step)
    const trendsBody = await expectOk(await query({ ...q, breakdownFilter: undefined, funnelsFilter: { ...q.funnelsFilter, funnelVizType: 'trends' } }));
    const percentages = referenceTrends({ ...f, breakdown: undefined }, events, 0, n - 1);
    const list = buckets(range);
    assert.deepEqual(trendsBody.results[0].days, list.map((b) => b.day));
    assert.deepEqual(trendsBody.results[0].data, list.map((b) => percentages.get(b.wall) ?? 0), 'trends data');

    // time to convert
    const ttcBody = await expectOk(await query({ ...q, breakdownFilter: undefined, funnelsFilter: { ...q.funnelsFilter, funnelVizType: 'time_to_convert' } }));
    const ttc = referenceTimeToConvert({ ...f, breakdown: undefined }, events, 0, n - 1);
    assert.deepEqual(ttcBody.results.bins, ttc.bins, 'bins');
    close(ttcBody.results.average_conversion_time, ttc.average_conversion_time, 'average time to convert', 0.011);
  }
});

function close(actual: number | null, expected: number | null, what: string, tolerance = 1e-6) {
  if (expected === null || actual === null) return assert.equal(actual, expected, what);
  assert.ok(Math.abs(actual - expected) <= tolerance * Math.max(1, Math.abs(expected)), `${what}: ${actual} vs ${expected}`);
}
