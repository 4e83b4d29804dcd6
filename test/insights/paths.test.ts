import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { TestServer } from '../helpers/server.js';
import { expectError, expectOk } from '../helpers/api-fixtures.js';
import { asReferenceEvents, eventAt, queryOf, sendEvents, startInsightsServer } from '../helpers/insights.js';
import { referenceItem, referencePaths, type RefPaths } from '../unit/insights/reference/paths.js';

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

  test('cleaning rules rewrite items in order, groupings merge them, a HogQL expression makes them; actors follow', async () => {
    const u = `g${run++}_`;
    const h = `https://x.test/${u}`;
    await send([
      pageview(`${h}/home`, `${u}a`, t0),
      pageview(`${h}/product/12`, `${u}a`, t0 + MINUTE),
      pageview(`${h}/product/34`, `${u}a`, t0 + 2 * MINUTE),
      pageview(`${h}/cart`, `${u}a`, t0 + 3 * MINUTE),
      pageview(`${h}/home`, `${u}b`, t0),
      pageview(`${h}/product/56`, `${u}b`, t0 + 2 * MINUTE),
    ]);
    const dateRange = range(t0 - MINUTE, t0 + 60 * MINUTE);
    const edges = async (pathsFilter: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      (await expectOk(await query({ dateRange, pathsFilter: { includeEventTypes: ['$pageview'], ...pathsFilter }, ...extra }))).results.map((e: any) => `${e.source} ${e.target} ${e.value}`).filter((e: string) => e.includes(u));
    // Two product pages in a row become one node, so a's path is home → product → cart.
    const grouped = [`1_${h}/home 2_${h}/product/* 2`, `2_${h}/product/* 3_${h}/cart 1`];
    assert.deepEqual(await edges({ pathGroupings: [`${h}/product/*`] }), grouped);
    // Rules apply in order: the second sees the first's output; \1 is the first group.
    const cleaned = await edges({ localPathCleaningFilters: [{ regex: '/product/(\\d)\\d$', alias: '/item/\\1x' }, { regex: '/item/(1|3)x', alias: '/item/odd' }] });
    assert.deepEqual(cleaned, [`1_${h}/home 2_${h}/item/5x 1`, `1_${h}/home 2_${h}/item/odd 1`, `2_${h}/item/odd 3_${h}/cart 1`]);
    // The item from HogQL (every event with only "hogql" listed): here the URL's last segment.
    const own = { properties: [{ key: '$current_url', value: h, operator: 'icontains', type: 'event' }] };
    const hogql = await edges({ includeEventTypes: ['hogql'], pathsHogQLExpression: `concat('${u}', replaceRegexpAll(properties.$current_url, '^.*/', ''))` }, own);
    assert.deepEqual(hogql, [`1_${u}home 2_${u}12 1`, `1_${u}home 2_${u}56 1`, `2_${u}12 3_${u}34 1`, `3_${u}34 4_${u}cart 1`]);
    // The persons behind a grouped node.
    const actors = await expectOk(
      await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'ActorsQuery', select: ['person'], source: { kind: 'InsightActorsQuery', source: { kind: 'PathsQuery', dateRange, pathsFilter: { includeEventTypes: ['$pageview'], pathGroupings: [`${h}/product/*`] } }, pathStartKey: `2_${h}/product/*` } } } }),
    );
    assert.deepEqual(actors.results.map((r: any[]) => r[0].distinct_ids[0]).sort(), [`${u}a`, `${u}b`]);
  });

  test('bad input is a 400 naming the field', async () => {
    await expectError(await query({ pathsFilter: { localPathCleaningFilters: [{ regex: '(a', alias: 'b' }] } }), 400, 'invalid_input', 'pathsFilter.localPathCleaningFilters.0.regex');
    await expectError(await query({ pathsFilter: { localPathCleaningFilters: [{ alias: 'b' }] } }), 400, 'required', 'pathsFilter.localPathCleaningFilters.0.regex');
    await expectError(await query({ pathsFilter: { localPathCleaningFilters: [{ regex: 'a(b)', alias: '\\2' }] } }), 400, 'invalid_input', 'pathsFilter.localPathCleaningFilters.0.alias');
    await expectError(await query({ pathsFilter: { localPathCleaningFilters: [{ regex: '(a+)+$', alias: 'x' }, { regex: 'a{2000}', alias: '' }] } }), 400, 'invalid_input', 'pathsFilter.localPathCleaningFilters.1.regex');
    await expectError(await query({ pathsFilter: { localPathCleaningFilters: 'a' } }), 400, 'invalid_input', 'pathsFilter.localPathCleaningFilters');
    await expectError(await query({ pathsFilter: { pathGroupings: ['/a/*', 7] } }), 400, 'invalid_input', 'pathsFilter.pathGroupings.1');
    await expectError(await query({ pathsFilter: { pathGroupings: [''] } }), 400, 'invalid_input', 'pathsFilter.pathGroupings.0');
    await expectError(await query({ pathsFilter: { includeEventTypes: ['hogql'], pathsHogQLExpression: 'event +' } }), 400, 'invalid_input', 'pathsFilter.pathsHogQLExpression');
    await expectError(await query({ pathsFilter: { includeEventTypes: ['hogql'], pathsHogQLExpression: 'count()' } }), 400, 'invalid_input', 'pathsFilter.pathsHogQLExpression');
    await expectError(await query({ pathsFilter: { includeEventTypes: ['hogql'], pathsHogQLExpression: 42 } }), 400, 'invalid_input', 'pathsFilter.pathsHogQLExpression');
    await expectError(await query({ pathsFilter: { includeEventTypes: ['$sound'] } }), 400, 'invalid_choice', 'pathsFilter.includeEventTypes.0');
    await expectError(await query({ pathsFilter: { stepLimit: 1 } }), 400, 'invalid_input', 'pathsFilter.stepLimit');
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
    // Items from HogQL, cleaned by some rules (in some order), grouped by some patterns.
    hogql: fc.boolean(),
    cleaning: fc.shuffledSubarray([0, 1, 2]),
    groupings: fc.shuffledSubarray([0, 1, 2]),
  });

  test('property: edges equal the reference (sessions, repeats, start and end points, step limit, excluded items, cleaning, groupings, HogQL items)', async () => {
    await fc.assert(
      fc.asyncProperty(arbCase, async (c) => {
        const u = `p${run++}_`;
        const page = (i: number) => (i === 4 ? `${u}custom` : `https://x.test/${u}/${['', 'a/', 'b', 'c/'][i]}`);
        const sent = c.events.map((e) => pageview(page(e.page), `${u}${e.who % c.persons}`, t0 + (c.dense ? e.minute % 30 : e.minute) * MINUTE, e.page === 4 ? `${u}custom` : '$pageview'));
        await send(sent);
        // Every rule and pattern names this run's pages, so edges of other runs stay apart.
        const rules = [
          { regex: '/(a|c)$', alias: '/\\1\\1' },
          { regex: `${u}/b$`, alias: `${u}/a` },
          { regex: `${u}cus(t)om`, alias: `${u}\\1-event` },
        ];
        const patterns = [`${u}/a`, `${u}/*c`, `${u}*event`];
        const items: Pick<RefPaths, 'hogql' | 'cleaning' | 'groupings'> = {
          hogql: c.hogql ? (e) => String(e.properties.$current_url ?? e.event) : undefined,
          cleaning: c.cleaning.map((i) => rules[i]),
          groupings: c.groupings.map((i) => patterns[i]),
        };
        const item = (i: number) => referenceItem(items, asReferenceEvents([pageview(page(i), 'x', t0, i === 4 ? `${u}custom` : '$pageview')], (id) => id)[0]);
        const exclude = c.exclude === null ? [] : [item(c.exclude)];
        const spec = { ...items, startPoint: c.startPoint === null ? null : item(c.startPoint), endPoint: c.endPoint === null ? null : item(c.endPoint), stepLimit: c.stepLimit, exclude, from: t0 - MINUTE, to: t0 + 300 * MINUTE };
        const pathsFilter = {
          startPoint: spec.startPoint,
          endPoint: spec.endPoint,
          stepLimit: spec.stepLimit,
          excludeEvents: exclude,
          edgeLimit: 1000,
          localPathCleaningFilters: items.cleaning,
          pathGroupings: items.groupings,
          ...(c.hogql ? { includeEventTypes: ['hogql'], pathsHogQLExpression: 'coalesce(properties.$current_url, event)' } : {}),
        };
        const body = await expectOk(await query({ dateRange: range(spec.from, spec.to), pathsFilter }));
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
