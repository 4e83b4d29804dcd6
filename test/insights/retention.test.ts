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
  eventAt as event,
  generatedPersons,
  queryOf,
  reportingFailures,
  sendEvents,
  setTimeZone,
  startInsightsServer,
  type SentEvent,
} from '../helpers/insights.js';
import { type Interval, addUnits, resolveDateRange, startOf, toInstant, toWall, wallDate, DAY_MS, HOUR_MS } from '../../src/insights/time/index.js';
import { referenceRetention, referenceRetentionByValue } from '../unit/insights/reference/retention.js';

describe('RetentionQuery', () => {
  let server: TestServer;
  let run = 0;
  before(async () => {
    server = await startInsightsServer();
  });
  after(async () => {
    await server?.stop();
  });

  const send = (batch: SentEvent[]) => sendEvents(server, batch);
  const query = (q: Record<string, unknown>) => queryOf(server, 'RetentionQuery')(q);
  const counts = (row: any) => row.values.map((v: any) => v.count);
  const OTHER = '$$_posthog_breakdown_other_$$';

  test('vector: recurring Day, target and return on day 0, return on day 2 → [1, 0, 1, 0, …]', async () => {
    const p = `v${run++}_`;
    const d0 = Date.UTC(2025, 2, 3, 10);
    await send([event(`${p}T`, `${p}u`, d0), event(`${p}R`, `${p}u`, d0 + 3600_000), event(`${p}R`, `${p}u`, d0 + 2 * DAY_MS)]);
    const body = await expectOk(
      await query({
        dateRange: { date_from: '2025-03-03', date_to: '2025-03-10' },
        retentionFilter: { period: 'Day', totalIntervals: 8, targetEntity: { id: `${p}T`, type: 'events' }, returningEntity: { id: `${p}R`, type: 'events' } },
      }),
    );
    assert.equal(body.results.length, 8);
    assert.deepEqual(counts(body.results[0]), [1, 0, 1, 0, 0, 0, 0, 0]);
    assert.equal(body.results[0].date, '2025-03-03T00:00:00+00:00');
    assert.equal(body.results[0].label, 'Day 0');
    assert.equal(body.results[7].label, 'Day 7');
    assert.deepEqual(body.results[0].values[2], { count: 1, label: 'Day 2' });
    assert.deepEqual(counts(body.results[1]), [0, 0, 0, 0, 0, 0, 0, 0]);
  });

  test('first time: only the cohort of the first target event ever; cumulative counts a later return for every earlier column', async () => {
    const p = `v${run++}_`;
    const d0 = Date.UTC(2025, 2, 3, 10);
    await send([event(`${p}T`, `${p}old`, d0 - 20 * DAY_MS), event(`${p}T`, `${p}old`, d0), event(`${p}T`, `${p}new`, d0 + DAY_MS), event(`${p}R`, `${p}new`, d0 + 4 * DAY_MS)]);
    const base = { dateRange: { date_from: '2025-03-03', date_to: '2025-03-09' }, retentionFilter: { period: 'Day', totalIntervals: 5, targetEntity: { id: `${p}T` }, returningEntity: { id: `${p}R` } } };
    const recurring = await expectOk(await query(base));
    assert.deepEqual(recurring.results.map((r: any) => r.values[0].count), [1, 1, 0, 0, 0, 0, 0]);
    const first = await expectOk(await query({ ...base, retentionFilter: { ...base.retentionFilter, retentionType: 'retention_first_time' } }));
    assert.deepEqual(first.results.map((r: any) => r.values[0].count), [0, 1, 0, 0, 0, 0, 0]);
    assert.deepEqual(counts(first.results[1]), [1, 0, 0, 1, 0]);
    const cumulative = await expectOk(await query({ ...base, retentionFilter: { ...base.retentionFilter, retentionType: 'retention_first_time', cumulative: true } }));
    assert.deepEqual(counts(cumulative.results[1]), [1, 1, 1, 1, 0]);
  });

  test('property breakdowns: rows per value ranked by cohort size, "" for a missing value, an actor apart under each event value, other beyond the limit', async () => {
    const p = `v${run++}_`;
    const d0 = Date.UTC(2025, 2, 3, 10);
    const T = `${p}T`;
    const R = `${p}R`;
    await send([
      // a: Chrome on day 0, returns on day 1 with Chrome and on day 2 with Safari (not a Chrome return).
      event(T, `${p}a`, d0, { $browser: 'Chrome' }),
      event(R, `${p}a`, d0 + DAY_MS, { $browser: 'Chrome' }),
      event(R, `${p}a`, d0 + 2 * DAY_MS, { $browser: 'Safari' }),
      // b: Chrome on day 1, no return; c: no browser on day 0, returns day 1 without one.
      event(T, `${p}b`, d0 + DAY_MS, { $browser: 'Chrome' }),
      event(T, `${p}c`, d0, {}),
      event(R, `${p}c`, d0 + DAY_MS, {}),
      // d: Firefox on day 0, Safari on day 0 too: in both values' cohorts.
      event(T, `${p}d`, d0, { $browser: 'Firefox' }),
      event(T, `${p}d`, d0 + 3600_000, { $browser: 'Safari' }),
      event('$set', `${p}a`, d0 - DAY_MS, { $set: { plan: 'pro' } }),
    ]);
    const base = {
      dateRange: { date_from: '2025-03-03', date_to: '2025-03-05' },
      retentionFilter: { period: 'Day', totalIntervals: 3, targetEntity: { id: T, type: 'events' }, returningEntity: { id: R, type: 'events' } },
    };
    const summary = (body: any) => body.results.map((row: any) => [row.breakdown_value, row.label, counts(row)]);
    const byEvent = await expectOk(await query({ ...base, breakdownFilter: { breakdown_type: 'event', breakdown: '$browser' } }));
    assert.deepEqual(summary(byEvent), [
      ['Chrome', 'Day 0', [1, 1, 0]],
      ['Chrome', 'Day 1', [1, 0, 0]],
      ['Chrome', 'Day 2', [0, 0, 0]],
      ['', 'Day 0', [1, 1, 0]],
      ['', 'Day 1', [0, 0, 0]],
      ['', 'Day 2', [0, 0, 0]],
      ['Firefox', 'Day 0', [1, 0, 0]],
      ['Firefox', 'Day 1', [0, 0, 0]],
      ['Firefox', 'Day 2', [0, 0, 0]],
      ['Safari', 'Day 0', [1, 0, 0]],
      ['Safari', 'Day 1', [0, 0, 0]],
      ['Safari', 'Day 2', [0, 0, 0]],
    ]);
    assert.equal(byEvent.results[0].date, '2025-03-03T00:00:00+00:00');
    // Past the limit the rest are summed (counts, not distinct actors) into "other", last.
    const limited = await expectOk(await query({ ...base, breakdownFilter: { breakdown: '$browser', breakdown_limit: 2 } }));
    assert.deepEqual(limited.results.filter((row: any) => row.label === 'Day 0').map((row: any) => [row.breakdown_value, counts(row)]), [
      ['Chrome', [1, 1, 0]],
      ['', [1, 1, 0]],
      [OTHER, [2, 0, 0]],
    ]);
    const byPerson = await expectOk(await query({ ...base, breakdownFilter: { breakdown_type: 'person', breakdown: 'plan' } }));
    assert.deepEqual(byPerson.results.filter((row: any) => row.label === 'Day 0').map((row: any) => [row.breakdown_value, counts(row)]), [
      ['', [2, 1, 0]],
      ['pro', [1, 1, 1]],
    ]);
    // The persons of a row of one value.
    const retention = { kind: 'RetentionQuery', ...base, breakdownFilter: { breakdown: '$browser' } };
    const actors = (source: Record<string, unknown>) => server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'ActorsQuery', select: ['person'], source: { kind: 'InsightActorsQuery', source: retention, ...source } } } });
    const safari = await expectOk(await actors({ interval: 0, breakdown: 'Safari' }));
    assert.deepEqual(safari.results.map((row: any) => row[0].distinct_ids), [[`${p}d`]]);
    assert.equal((await expectOk(await actors({ interval: 0, breakdown: ['Chrome'] }))).results.length, 1);
    await expectError(await actors({ interval: 0, breakdown: OTHER }), 400, 'invalid_input', 'source.breakdown');
    // Bad breakdowns.
    await expectError(await query({ ...base, breakdownFilter: { breakdown_type: 'hogql', breakdown: 'event' } }), 400, 'invalid_choice', 'breakdownFilter.breakdown_type');
    await expectError(await query({ ...base, breakdownFilter: { breakdown: ['$browser', '$os'] } }), 400, 'invalid_input', 'breakdownFilter.breakdown');
    await expectError(await query({ ...base, breakdownFilter: { breakdowns: [{ property: 'a' }, { property: 'b' }] } }), 400, 'invalid_input', 'breakdownFilter.breakdowns');
    await expectError(await query({ ...base, breakdownFilter: { breakdown_type: 'group', breakdown: 'plan' } }), 400, 'invalid_input', 'breakdownFilter.breakdown_group_type_index');
    await expectError(await query({ ...base, breakdownFilter: { breakdown: '$browser', breakdown_limit: 0 } }), 400, 'invalid_input', 'breakdownFilter.breakdown_limit');
    await expectError(await query({ ...base, breakdownFilter: 'browser' }), 400, 'invalid_input', 'breakdownFilter');
  });

  test('without a date range: 7 rows ending today; weeks start on the project week start', async () => {
    const body = await expectOk(await query({ retentionFilter: {} }));
    assert.equal(body.results.length, 7);
    assert.equal(body.results[0].values.length, 7);
    const week = await expectOk(await query({ dateRange: { date_from: '2025-03-05', date_to: '2025-03-20' }, retentionFilter: { period: 'Week', totalIntervals: 3 } }));
    assert.deepEqual(
      week.results.map((r: any) => r.date),
      ['2025-03-02T00:00:00+00:00', '2025-03-09T00:00:00+00:00', '2025-03-16T00:00:00+00:00'],
    );
  });

  test('the hour clocks go back over is one period: an actor active in both halves is one cohort member and returns once (America/New_York)', async () => {
    const p = `v${run++}_`;
    await setTimeZone(server, 'America/New_York');
    // a: 01:10 EDT and 01:10 EST (the same wall hour twice), back at 03:10 EST; b: 01:40 EST only.
    await send([
      event(`${p}T`, `${p}a`, Date.parse('2025-11-02T05:10:00Z')),
      event(`${p}T`, `${p}a`, Date.parse('2025-11-02T06:10:00Z')),
      event(`${p}T`, `${p}b`, Date.parse('2025-11-02T06:40:00Z')),
      event(`${p}R`, `${p}a`, Date.parse('2025-11-02T08:10:00Z')),
    ]);
    const retention = (cumulative: boolean, returning: string) =>
      query({
        dateRange: { date_from: '2025-11-02', date_to: '2025-11-02' },
        retentionFilter: { period: 'Hour', totalIntervals: 4, cumulative, targetEntity: { id: `${p}T`, type: 'events' }, returningEntity: { id: returning, type: 'events' } },
      });
    for (const cumulative of [false, true]) {
      const body = await expectOk(await retention(cumulative, `${p}R`));
      assert.equal(body.results.length, 24, 'one row per wall hour of the 25-hour day');
      assert.match(body.results[1].date, /^2025-11-02T01:00:00/);
      assert.deepEqual(counts(body.results[1]), cumulative ? [2, 1, 1, 0] : [2, 0, 1, 0], `cumulative ${cumulative}`);
    }
    // The same event on both sides: the second half of the hour is no return within it.
    const same = await expectOk(await retention(false, `${p}T`));
    assert.deepEqual(counts(same.results[1]), [2, 0, 0, 0]);
    await setTimeZone(server, 'UTC');
  });

  test('bad input is a 400 naming the field', async () => {
    await expectError(await query({ retentionFilter: { period: 'Fortnight' } }), 400, 'invalid_choice', 'retentionFilter.period');
    await expectError(await query({ retentionFilter: { totalIntervals: 0 } }), 400, 'invalid_input', 'retentionFilter.totalIntervals');
    await expectError(await query({ retentionFilter: { retentionType: 'sometimes' } }), 400, 'invalid_choice', 'retentionFilter.retentionType');
    await expectError(await query({ retentionFilter: { targetEntity: { id: 3, type: 'actions' } } }), 400, 'invalid_choice', 'retentionFilter.targetEntity.id');
    await expectError(await query({ retentionFilter: { targetEntity: { id: 'x', properties: [{ key: 'a', operator: 'regex', value: '(' }] } } }), 400, 'invalid_input', 'retentionFilter.targetEntity.properties');
    await expectError(await query({ retentionFilter: {}, dateRange: { date_from: 'soon' } }), 400, 'invalid_date', 'dateRange.date_from');
  });

  // --- property: the API against the reference implementation ----------------------------------

  const PERIODS = { Hour: 'hour', Day: 'day', Week: 'week', Month: 'month' } as const;
  const STEP_MS = { Hour: HOUR_MS / 2, Day: 3 * HOUR_MS, Week: DAY_MS, Month: 4 * DAY_MS } as const;

  const arbCase = fc.record({
    zone: arbZone,
    period: fc.constantFrom<keyof typeof PERIODS>('Hour', 'Day', 'Week', 'Month'),
    persons: fc.integer({ min: 1, max: 4 }),
    merged: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
    events: fc.array(fc.record({ returning: fc.boolean(), who: fc.integer({ min: 0, max: 7 }), slot: fc.integer({ min: -60, max: 60 }), prop: fc.constantFrom('x', 'y', 'z', null) }), { maxLength: 40 }),
    sameEvent: fc.boolean(),
    firstTime: fc.boolean(),
    cumulative: fc.boolean(),
    minimumOccurrences: fc.constantFrom(1, 1, 2),
    totalIntervals: fc.integer({ min: 1, max: 9 }),
    breakdown: fc.boolean(),
  });

  test('property: cohorts and returns equal the reference (persons merged, DST, every period, first time, cumulative)', async () => {
    await fc.assert(
      fc.asyncProperty(arbCase, reportingFailures(checkCase)),
      { numRuns: Number(process.env.RETENTION_RUNS ?? 25), endOnFailure: true },
    );
  });

  async function checkCase(c: CaseOf<typeof arbCase>) {
    const r = `p${run++}_`;
    const target = `${r}T`;
    const returning = c.sameEvent ? target : `${r}R`;
    const base = DST_MOMENTS[c.zone];
    const persons = generatedPersons(r, c.persons, c.merged);
    const sent = c.events.map((e) => event(e.returning ? returning : target, persons.distinct(e.who), base + e.slot * STEP_MS[c.period], e.prop === null ? {} : { prop: e.prop }));
    await setTimeZone(server, c.zone);
    await send(sent);
    const merges = persons.identifies(base - 400 * DAY_MS);
    await send(merges);

    const interval: Interval = PERIODS[c.period];
    const span = { Hour: [0, 0], Day: [-3, 3], Week: [-14, 14], Month: [-70, 70] }[c.period];
    const localDay = (offsetDays: number) => wallDate(startOf('day', toWall(base, c.zone)) + offsetDays * DAY_MS);
    const dateRange = { date_from: localDay(span[0]), date_to: localDay(span[1]) };
    const body = await expectOk(
      await query({
        dateRange,
        retentionFilter: {
          period: c.period,
          totalIntervals: c.totalIntervals,
          retentionType: c.firstTime ? 'retention_first_time' : 'retention_recurring',
          cumulative: c.cumulative,
          minimumOccurrences: c.minimumOccurrences,
          targetEntity: { id: target, type: 'events' },
          returningEntity: { id: returning, type: 'events' },
        },
        ...(c.breakdown && { breakdownFilter: { breakdown_type: 'event', breakdown: 'prop', breakdown_limit: 2 } }),
      }),
    );

    // Rows: from the start of date_from's period to the period holding date_to.
    const bucketing = resolveDateRange(dateRange, { interval, timeZone: c.zone, weekStartDay: 0, now: new Date(base) });
    const firstWall = startOf(interval, toWall(bucketing.from, c.zone), 0);
    const lastWall = startOf(interval, toWall(bucketing.to - 1, c.zone), 0);
    const rowWalls: number[] = [];
    for (let wall = firstWall; wall <= lastWall; wall = addUnits(interval, 1, wall)) if (toWall(toInstant(wall, c.zone), c.zone) === wall) rowWalls.push(wall);
    const events = asReferenceEvents([...sent, ...merges], persons.personOf);
    const spec = {
      target,
      returning,
      firstTime: c.firstTime,
      totalIntervals: c.totalIntervals,
      minimumOccurrences: c.minimumOccurrences,
      cumulative: c.cumulative,
      bucketing,
      rowWalls,
      start: toInstant(firstWall, c.zone),
      end: toInstant(addUnits(interval, 1, lastWall), c.zone),
    };
    if (c.breakdown) {
      const expected = referenceRetentionByValue(spec, events, (e) => String(e.properties.prop ?? ''), 2, OTHER);
      const values = [...new Set(body.results.map((row: any) => row.breakdown_value))];
      assert.deepEqual(values, [...expected.keys()], 'breakdown values in order');
      for (const [value, rows] of expected) assert.deepEqual(body.results.filter((row: any) => row.breakdown_value === value).map(counts), rows, `counts of ${value}`);
      return;
    }
    const expected = referenceRetention(spec, events);
    assert.equal(body.results.length, rowWalls.length, 'rows');
    assert.deepEqual(body.results.map(counts), expected);
  }
});
