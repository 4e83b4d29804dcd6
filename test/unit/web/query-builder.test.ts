/**
 * The insight builder's form and the query node it saves (web/src/pages/insights/query-builder.ts):
 * a saved insight reopens as the form that made it, for every kind (fast-check), and the nodes
 * have the shapes of query-api.md.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DATE_RANGES, DISPLAYS, fromQuery, initialState, INTERVALS, KINDS, MATHS, PROPERTY_MATHS, toQuery, type BuilderState } from '../../../web/src/pages/insights/query-builder.js';

const eventName = fc.constantFrom('$pageview', 'signed up', 'purchase', '');
const seriesArb = fc.record({ event: eventName, math: fc.constantFrom(...MATHS.map((m) => m.value)), mathProperty: fc.constantFrom('', 'amount') });

/** A form state as the page can make it: only the fields its kind shows differ from the defaults. */
const stateArb: fc.Arbitrary<BuilderState> = fc
  .record({
    kind: fc.constantFrom(...KINDS.map((k) => k.kind)),
    series: fc.array(seriesArb, { minLength: 2, maxLength: 4 }),
    dateFrom: fc.constantFrom(...DATE_RANGES.map((r) => r.value)),
    interval: fc.constantFrom(...INTERVALS),
    breakdown: fc.constantFrom('', '$browser', 'plan'),
    breakdownType: fc.constantFrom('event' as const, 'person' as const),
    compare: fc.boolean(),
    display: fc.constantFrom(...DISPLAYS.map((d) => d.value)),
    windowDays: fc.integer({ min: 1, max: 90 }),
    retentionPeriod: fc.constantFrom('Day' as const, 'Week' as const, 'Month' as const),
    pathStart: fc.constantFrom('', '/pricing'),
  })
  .map((raw) => {
    const base = initialState(raw.kind);
    const shown: BuilderState = { ...base, dateFrom: raw.dateFrom };
    const series = raw.series.map((s) => ({ ...s, mathProperty: PROPERTY_MATHS.has(s.math) ? s.mathProperty : '' }));
    switch (raw.kind) {
      case 'TrendsQuery':
        return { ...shown, series, interval: raw.interval, breakdown: raw.breakdown, breakdownType: raw.breakdown ? raw.breakdownType : 'event', compare: raw.compare, display: raw.display };
      case 'FunnelsQuery':
        return { ...shown, series: series.map((s) => ({ ...s, math: 'total', mathProperty: '' })), breakdown: raw.breakdown, breakdownType: raw.breakdown ? raw.breakdownType : 'event', windowDays: raw.windowDays };
      case 'StickinessQuery':
        return { ...shown, series: series.map((s) => ({ ...s, math: 'total', mathProperty: '' })), interval: raw.interval, compare: raw.compare };
      case 'LifecycleQuery':
        return { ...shown, series: [{ ...series[0], math: 'total', mathProperty: '' }], interval: raw.interval };
      case 'RetentionQuery':
        return { ...shown, series: series.slice(0, 2).map((s) => ({ event: s.event || '$pageview', math: 'total', mathProperty: '' })), retentionPeriod: raw.retentionPeriod };
      case 'PathsQuery':
        return { ...shown, pathStart: raw.pathStart };
    }
  });

test('a saved query reopens as the form that made it, for every kind', () => {
  fc.assert(
    fc.property(stateArb, (state) => {
      const node = JSON.parse(JSON.stringify(toQuery(state)));
      assert.equal(node.kind, state.kind);
      assert.deepEqual(fromQuery(node), state);
    }),
    { numRuns: 500 },
  );
});

test('nodes have the query API shapes', () => {
  const trends = toQuery({ ...initialState('TrendsQuery'), series: [{ event: '', math: 'sum', mathProperty: 'amount' }], breakdown: '$browser', compare: true, display: 'BoldNumber' });
  assert.deepEqual(trends, {
    kind: 'TrendsQuery',
    series: [{ kind: 'EventsNode', event: null, name: 'All events', math: 'sum', math_property: 'amount' }],
    interval: 'day',
    dateRange: { date_from: '-7d' },
    breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' },
    compareFilter: { compare: true },
    trendsFilter: { display: 'BoldNumber' },
  });
  const retention = toQuery({ ...initialState('RetentionQuery'), series: [{ event: 'signed up', math: 'total', mathProperty: '' }, { event: '', math: 'total', mathProperty: '' }] }) as any;
  assert.deepEqual(retention.retentionFilter.targetEntity, { id: 'signed up', name: 'signed up', type: 'events', kind: 'EventsNode' });
  assert.equal(retention.retentionFilter.returningEntity.id, '$pageview', 'an empty returning event is $pageview, as PostHog defaults it');
});
