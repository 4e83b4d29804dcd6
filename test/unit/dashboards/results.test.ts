/**
 * Saved insights' results go through the query API's service: the tile's query is the saved
 * source with the dashboard's filters over it, a fresh result is served from the cache, and a
 * refused query becomes the insight's query_status instead of an error.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InsightResults, refreshParam } from '../../../src/dashboards/results.js';
import { withDashboardFilters } from '../../../src/dashboards/query-node.js';
import { QueryService } from '../../../src/insights/query/service.js';
import type { QueryKind } from '../../../src/insights/types.js';
import { validationError } from '../../../src/kernel/errors.js';
import type { EventStore, Project } from '../../../src/store/types.js';

const project = { id: 7, timezone: 'UTC' } as Project;
const noEvents = async () => ({ position: async () => ({ seq: 0, events: 0 }) }) as unknown as EventStore;

/** A kind that answers with the node it was given and counts its runs. */
function echoKind(): QueryKind<Record<string, unknown>> & { runs: number } {
  const kind = {
    kind: 'TrendsQuery',
    runs: 0,
    parse(node: Record<string, unknown>) {
      if (node.interval === 'fortnight') throw validationError('interval must be one of minute, hour, day, week, month.', 'interval', 'invalid_choice');
      return node;
    },
    async run(node: Record<string, unknown>) {
      kind.runs += 1;
      return { results: [{ seen: node }] };
    },
  };
  return kind;
}

const saved = { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'a' }], dateRange: { date_from: '-7d', explicitDate: true } } };

test('a tile runs the saved source with the dashboard filters over it, once while fresh', async () => {
  const kind = echoKind();
  const results = new InsightResults(new QueryService({ cacheBytes: 1 << 20, kinds: new Map([[kind.kind, kind]]) }), noEvents);
  const filters = { date_from: '-30d', properties: [{ key: 'plan', value: 'pro', type: 'person' }] };

  const first = await results.of(project, saved, filters, undefined);
  assert.deepEqual(first.result, [{ seen: { ...saved.source, dateRange: { date_from: '-30d', explicitDate: true }, properties: filters.properties } }]);
  assert.equal(first.is_cached, false);
  assert.equal(first.timezone, 'UTC');

  const second = await results.of(project, saved, filters, undefined);
  assert.equal(second.is_cached, true);
  assert.deepEqual(second.result, first.result);
  assert.equal(kind.runs, 1);

  // Other filters are another query; force_blocking recomputes.
  await results.of(project, saved, {}, undefined);
  assert.equal(kind.runs, 2);
  const forced = await results.of(project, saved, filters, refreshParam('force_blocking'));
  assert.equal(forced.is_cached, false);
  assert.equal(kind.runs, 3);
});

test('a refused query is the insight query_status, naming the field', async () => {
  const kind = echoKind();
  const queries = new QueryService({ cacheBytes: 1 << 20, kinds: new Map([[kind.kind, kind]]) });
  const results = new InsightResults(queries, noEvents);
  const bad = { kind: 'InsightVizNode', source: { ...saved.source, interval: 'fortnight' } };
  const answer = await results.of(project, bad, {}, undefined);
  assert.equal(answer.result, null);
  assert.deepEqual(answer.query_status, { complete: true, error: true, error_message: 'interval must be one of minute, hour, day, week, month.', code: 'invalid_choice', attr: 'interval' });
  // Saving it is refused up front, with the attr under the saved node.
  assert.throws(() => queries.validate(bad.source, 'query.source.'), (error: any) => error.attr === 'query.source.interval' && error.status === 400);
  assert.equal(queries.validate({ kind: 'PathsQuery' }, 'query.'), false);
});

test('dashboard filters: dates replace, properties are ANDed, per kind', () => {
  const more = [{ key: 'x', value: 1, type: 'event' }];
  assert.deepEqual(withDashboardFilters({ kind: 'TrendsQuery' }, {}), { kind: 'TrendsQuery' });
  assert.deepEqual(withDashboardFilters({ kind: 'TrendsQuery', properties: [{ key: 'y' }] }, { date_to: '-1d', properties: more }), {
    kind: 'TrendsQuery',
    dateRange: { date_to: '-1d' },
    properties: [{ key: 'y' }, ...more],
  });
  const group = { type: 'OR', values: [{ type: 'AND', values: [{ key: 'y' }] }] };
  assert.deepEqual(withDashboardFilters({ kind: 'FunnelsQuery', properties: group }, { properties: more }).properties, {
    type: 'AND',
    values: [group, { type: 'AND', values: more }],
  });
  assert.deepEqual(withDashboardFilters({ kind: 'HogQLQuery', query: 'select 1' }, { date_from: '-1d' }), {
    kind: 'HogQLQuery',
    query: 'select 1',
    filters: { dateRange: { date_from: '-1d' } },
  });
  assert.deepEqual(withDashboardFilters({ kind: 'EventsQuery', select: ['*'] }, { date_from: '-1d', date_to: '-1h', properties: more }), {
    kind: 'EventsQuery',
    select: ['*'],
    after: '-1d',
    before: '-1h',
    properties: more,
  });
});
