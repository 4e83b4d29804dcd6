import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { TestServer } from '../helpers/server.js';
import { expectError, expectOk } from '../helpers/api-fixtures.js';
import { asReferenceEvents, eventAt, queryOf, sendEvents, startInsightsServer } from '../helpers/insights.js';
import { referencePaths } from '../unit/insights/reference/paths.js';

const MINUTE = 60_000;

describe('PathsQuery', () => {
  let server: TestServer;
  let run = 0;
  before(async () => {
    server = await startInsightsServer();
  });
  after(async () => {
    await server?.stop();
  });

  const pageview = (url: string, distinctId: string, at: number, event = '$pageview') => eventAt(event, distinctId, at, event === '$pageview' ? { $current_url: url } : {});
  const send = (batch: ReturnType<typeof pageview>[]) => sendEvents(server, batch);
  const query = (q: Record<string, unknown>) => queryOf(server, 'PathsQuery')(q);
  const t0 = Date.UTC(2025, 3, 10, 12);
  const range = (from: number, to: number) => ({ date_from: new Date(from).toISOString(), date_to: new Date(to).toISOString(), explicitDate: true });

  test('edges between consecutive pages: trailing slash dropped, repeats collapsed, a 30-minute gap starts a new path', async () => {
    const u = `v${run++}_`;
    const h = `https://x.test/${u}`;
    await send([
      pageview(`${h}/`, `${u}a`, t0),
      pageview(`${h}/`, `${u}a`, t0 + MINUTE),
      pageview(`${h}/pricing/`, `${u}a`, t0 + 3 * MINUTE),
      pageview(`${h}/signup`, `${u}a`, t0 + 4 * MINUTE),
      pageview(`${h}/pricing`, `${u}a`, t0 + 40 * MINUTE),
      pageview(`${h}`, `${u}b`, t0),
      pageview(`${h}/pricing`, `${u}b`, t0 + MINUTE),
    ]);
    const body = await expectOk(await query({ dateRange: range(t0 - MINUTE, t0 + 60 * MINUTE), pathsFilter: { includeEventTypes: ['$pageview'] } }));
    assert.deepEqual(body.results, [
      { source: `1_${h}`, target: `2_${h}/pricing`, value: 2, average_conversion_time: 120_000 },
      { source: `2_${h}/pricing`, target: `3_${h}/signup`, value: 1, average_conversion_time: 60_000 },
    ]);
    const ending = await expectOk(await query({ dateRange: range(t0 - MINUTE, t0 + 60 * MINUTE), pathsFilter: { endPoint: `${h}/signup`, stepLimit: 2 } }));
    assert.deepEqual(ending.results, [{ source: `1_${h}/pricing`, target: `2_${h}/signup`, value: 1, average_conversion_time: 60_000 }]);
  });

  test('a session longer than the step limit: its path stops at the limit, with no edge beyond', async () => {
    const u = `w${run++}_`;
    const h = `https://x.test/${u}`;
    await send(['a', 'b', 'c', 'd'].map((p, i) => pageview(`${h}/${p}`, `${u}a`, t0 + i * MINUTE)));
    const body = await expectOk(await query({ dateRange: range(t0 - MINUTE, t0 + 60 * MINUTE), pathsFilter: { includeEventTypes: ['$pageview'], stepLimit: 3 } }));
    assert.deepEqual(
      (body.results as { source: string; target: string }[]).filter((e) => e.source.includes(u)).map((e) => `${e.source} ${e.target}`),
      [`1_${h}/a 2_${h}/b`, `2_${h}/b 3_${h}/c`],
    );
  });

  test('bad input is a 400 naming the field', async () => {
    await expectError(await query({ pathsFilter: { includeEventTypes: ['$sound'] } }), 400, 'invalid_choice', 'pathsFilter.includeEventTypes.0');
    await expectError(await query({ pathsFilter: { stepLimit: 1 } }), 400, 'invalid_input', 'pathsFilter.stepLimit');
    await expectError(await query({ pathsFilter: { pathGroupings: ['/blog/*'] } }), 400, 'invalid_choice', 'pathsFilter.pathGroupings');
    await expectError(await query({ pathsFilter: {}, dateRange: { date_from: 'never' } }), 400, 'invalid_date', 'dateRange.date_from');
  });

  const arbCase = fc.record({
    persons: fc.integer({ min: 1, max: 3 }),
    events: fc.array(fc.record({ who: fc.integer({ min: 0, max: 2 }), page: fc.integer({ min: 0, max: 4 }), minute: fc.integer({ min: 0, max: 240 }) }), { maxLength: 40, size: 'medium' }),
    startPoint: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }),
    endPoint: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }),
    stepLimit: fc.integer({ min: 2, max: 6 }),
    exclude: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }),
    // Dense: every event within half an hour, so sessions run longer than the step limit.
    dense: fc.boolean(),
  });

  test('property: edges equal the reference (sessions, repeats, start and end points, step limit, excluded items)', async () => {
    await fc.assert(
      fc.asyncProperty(arbCase, async (c) => {
        const u = `p${run++}_`;
        const page = (i: number) => (i === 4 ? `${u}custom` : `https://x.test/${u}/${['', 'a/', 'b', 'c/'][i]}`);
        const sent = c.events.map((e) => pageview(page(e.page), `${u}${e.who % c.persons}`, t0 + (c.dense ? e.minute % 30 : e.minute) * MINUTE, e.page === 4 ? `${u}custom` : '$pageview'));
        await send(sent);
        const item = (i: number) => (i === 4 ? `${u}custom` : page(i).replace(/(.)\/$/, '$1'));
        const exclude = c.exclude === null ? [] : [item(c.exclude)];
        const spec = { startPoint: c.startPoint === null ? null : item(c.startPoint), endPoint: c.endPoint === null ? null : item(c.endPoint), stepLimit: c.stepLimit, exclude, from: t0 - MINUTE, to: t0 + 300 * MINUTE };
        // Edges of this run are told apart by its own page names.
        const body = await expectOk(
          await query({ dateRange: range(spec.from, spec.to), pathsFilter: { startPoint: spec.startPoint, endPoint: spec.endPoint, stepLimit: spec.stepLimit, excludeEvents: exclude, edgeLimit: 1000 } }),
        );
        const events = asReferenceEvents(sent, (id) => id);
        const expected = referencePaths(spec, events);
        const mine = (body.results as any[]).filter((edge) => edge.source.includes(u));
        const key = (e: any) => `${e.source} ${e.target}`;
        assert.deepEqual(mine.map(key).sort(), expected.map(key).sort());
        for (const edge of expected) {
          const got = mine.find((e) => key(e) === key(edge));
          assert.equal(got.value, edge.value, key(edge));
          assert.ok(Math.abs(got.average_conversion_time - edge.average_conversion_time) < 1e-6, key(edge));
        }
      }),
      { numRuns: Number(process.env.PATHS_RUNS ?? 20), endOnFailure: true },
    );
  });
});
