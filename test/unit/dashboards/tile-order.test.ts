import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { costliestFirst, expectedCost } from '../../../src/dashboards/tile-order.js';

const viz = (source: Record<string, unknown>) => ({ kind: 'InsightVizNode', source });
const trend = { kind: 'TrendsQuery', series: [] };
const brokenDown = { kind: 'TrendsQuery', series: [], breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } };
const funnel = { kind: 'FunnelsQuery', series: [] };
const paths = { kind: 'PathsQuery', pathsFilter: {} };

describe('tile order', () => {
  test('paths cost most, then funnels, then breakdowns, then plain queries; wrapped or bare alike', () => {
    assert.ok(expectedCost(viz(paths)) > expectedCost(funnel));
    assert.ok(expectedCost(viz(funnel)) > expectedCost(brokenDown));
    assert.ok(expectedCost(brokenDown) > expectedCost(viz(trend)));
    assert.equal(expectedCost(viz(trend)), expectedCost({ kind: 'HogQLQuery', query: 'select 1' }));
    assert.equal(expectedCost({ kind: 'TrendsQuery', breakdownFilter: { breakdown: null } }), expectedCost(trend));
    assert.equal(expectedCost({ source: 'not a node' } as never), 1);
  });

  test('starts the costliest first, equal costs in their own order, and answers in the tiles’ order', async () => {
    const tiles = [viz(trend), { kind: 'HogQLQuery' }, viz(paths), brokenDown, viz(funnel), viz(trend)];
    const started: number[] = [];
    const answers = await costliestFirst(
      tiles.map((query, i) => ({ i, query })),
      (t) => t.query,
      async (t) => {
        started.push(t.i);
        await new Promise((resolve) => setTimeout(resolve, 5 - t.i));
        return t.i * 10;
      },
    );
    assert.deepEqual(started, [2, 4, 3, 0, 1, 5]);
    assert.deepEqual(answers, [0, 10, 20, 30, 40, 50]);
  });
});
