/**
 * ActionsNode in insights: trends counts (total, dau) per day for generated actions equal a
 * reference computed from the generated events with the reference matcher; funnels, stickiness
 * and lifecycle with an ActionsNode equal the same query written with the equivalent EventsNode;
 * results name the action; an unknown or deleted action is a 400 naming the node's id; a changed
 * action is not answered from the cache.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { v7 as uuidv7 } from 'uuid';
import { expectError, expectOk } from '../helpers/api-fixtures.js';
import { queryOf, startInsightsServer } from '../helpers/insights.js';
import { onClickHouse18 } from '../helpers/chdb.js';
import type { TestServer } from '../helpers/server.js';
import { actionMatches, asCaptured, type RefEvent, type RefStep } from '../helpers/actions-reference.js';

let server: TestServer;
const ACTIONS = '/api/projects/@current/actions/';
const DAY = 86_400_000;
const DAYS = 5;

interface Sent extends RefEvent {
  person: string;
  at: number;
}

let sent: Sent[] = [];
let actionCount = 0;
const trends = () => queryOf(server, 'TrendsQuery');
const funnels = () => queryOf(server, 'FunnelsQuery');

const today = () => Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());

async function createAction(steps: unknown[], name = `insight action ${++actionCount}`): Promise<number> {
  return (await expectOk(await server.api(ACTIONS, { method: 'POST', body: { name, steps } }), 201)).id;
}

const arbStep: fc.Arbitrary<RefStep> = fc
  .record(
    {
      event: fc.constantFrom('$autocapture', '$pageview', 'signup', 'purchase'),
      url: fc.constantFrom('pricing', 'blog'),
      text: fc.constantFrom('Buy', 'Sign up'),
      plan: fc.constantFrom('pro', 'free'),
    },
    { requiredKeys: [] },
  )
  .map((r) => ({
    ...(r.event !== undefined && { event: r.event }),
    ...(r.url !== undefined && { url: r.url }),
    ...(r.text !== undefined && { text: r.text }),
    ...(r.plan !== undefined && { properties: [{ key: 'plan' as const, value: r.plan, type: 'event' as const }] }),
  }));

before(async () => {
  server = await startInsightsServer();
  const start = today() - (DAYS - 1) * DAY;
  const arb = fc.record({
    event: fc.constantFrom('$autocapture', '$pageview', 'signup', 'purchase'),
    url: fc.constantFrom('https://x.test/pricing', 'https://x.test/blog/1', null),
    plan: fc.option(fc.constantFrom('pro', 'free'), { nil: null }),
    text: fc.option(fc.constantFrom('Buy', 'Sign up', 'Other'), { nil: null }),
    person: fc.constantFrom('p1', 'p2', 'p3', 'p4', 'p5', 'p6'),
    // Whole minutes into the window, kept away from "now" so every event is in range.
    minute: fc.integer({ min: 0, max: (DAYS - 1) * 24 * 60 }),
  });
  sent = fc.sample(arb, { numRuns: 400, seed: 4242 }).map((e) => ({
    uuid: uuidv7(),
    event: e.event,
    url: e.url,
    plan: e.plan,
    elements: e.text === null ? [] : [{ tag_name: 'button', classes: [], text: e.text, href: null, id: null, dataX: null }],
    person: e.person,
    at: start + e.minute * 60_000,
  }));
  const batch = sent.map((e) => ({
    uuid: e.uuid,
    event: e.event,
    distinct_id: e.person,
    timestamp: new Date(e.at).toISOString(),
    properties: {
      ...(e.url !== null && { $current_url: e.url }),
      ...(e.plan !== null && { plan: e.plan }),
      ...(e.elements.length > 0 && { $elements: e.elements.map(asCaptured) }),
    },
  }));
  await expectOk(await server.post('/batch/', { api_key: server.projectKey, batch }));
});
after(async () => {
  await server?.stop();
});

/** Per UTC day of the window: events (total) or distinct persons (dau) the steps match. */
function reference(steps: RefStep[], math: 'total' | 'dau'): number[] {
  const start = today() - (DAYS - 1) * DAY;
  return Array.from({ length: DAYS }, (_, d) => {
    const day = sent.filter((e) => e.at >= start + d * DAY && e.at < start + (d + 1) * DAY && actionMatches(steps, e));
    return math === 'total' ? day.length : new Set(day.map((e) => e.person)).size;
  });
}

test('trends of an ActionsNode count what the reference matcher counts, per day (total and dau)', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(arbStep, { minLength: 1, maxLength: 3 }), fc.constantFrom<'total' | 'dau'>('total', 'dau'), async (steps, math) => {
      const id = await createAction(steps);
      const body = await expectOk(await trends()({ series: [{ kind: 'ActionsNode', id, math }], interval: 'day', dateRange: { date_from: `-${DAYS - 1}d` } }));
      const [result] = body.results;
      assert.deepEqual(result.data, reference(steps, math), JSON.stringify(steps));
      assert.equal(result.action.id, id);
      assert.equal(result.action.type, 'actions');
      assert.equal(result.label, `insight action ${actionCount}`);
    }),
    { numRuns: 25, seed: 99 },
  );
});

// Funnels, stickiness and lifecycle need window functions and as-of joins, which the ClickHouse 18.16 of the local cluster lacks (docs/scale-out-cluster.md).
const withoutWindowFunctions = onClickHouse18() && 'funnels, stickiness and lifecycle need window functions, which ClickHouse 18.16 lacks';

test('funnels, stickiness and lifecycle with an ActionsNode equal the same query with the equivalent EventsNode', { skip: withoutWindowFunctions }, async () => {
  const pro = [{ key: 'plan', value: 'pro', type: 'event' }];
  const id = await createAction([{ event: 'signup', properties: pro }], 'Pro signup');
  const asAction = { kind: 'ActionsNode', id };
  const asEvent = { kind: 'EventsNode', event: 'signup', properties: pro };
  const range = { date_from: `-${DAYS}d` };

  const purchase = { kind: 'EventsNode', event: 'purchase' };
  const viaAction = await expectOk(await funnels()({ series: [asAction, purchase], dateRange: range, funnelsFilter: { funnelWindowInterval: 14, funnelWindowIntervalUnit: 'day' } }));
  const viaEvent = await expectOk(await funnels()({ series: [asEvent, purchase], dateRange: range, funnelsFilter: { funnelWindowInterval: 14, funnelWindowIntervalUnit: 'day' } }));
  assert.deepEqual(viaAction.results.map((s: any) => s.count), viaEvent.results.map((s: any) => s.count));
  assert.ok(viaAction.results[0].count > 0, 'the funnel has entrants');
  assert.equal(viaAction.results[0].action_id, id);
  assert.equal(viaAction.results[0].name, 'Pro signup');
  assert.equal(viaAction.results[0].type, 'actions');
  assert.equal(viaAction.results[1].type, 'events');

  for (const kind of ['StickinessQuery', 'LifecycleQuery']) {
    const a = await expectOk(await queryOf(server, kind)({ series: [asAction], dateRange: range }));
    const e = await expectOk(await queryOf(server, kind)({ series: [asEvent], dateRange: range }));
    assert.deepEqual(a.results.map((r: any) => r.data), e.results.map((r: any) => r.data), kind);
    assert.equal(a.results[0].action.id, id, kind);
    assert.equal(a.results[0].action.type, 'actions', kind);
  }
});

test('retention and EventsQuery take actions too, and agree with the equivalent event', async () => {
  const id = await createAction([{ event: 'signup' }], 'Any signup');
  const retention = (entity: Record<string, unknown>) =>
    queryOf(server, 'RetentionQuery')({ retentionFilter: { targetEntity: entity, returningEntity: entity, totalIntervals: DAYS, period: 'Day' }, dateRange: { date_from: `-${DAYS}d` } });
  const a = await expectOk(await retention({ id, type: 'actions' }));
  const e = await expectOk(await retention({ id: 'signup', type: 'events' }));
  assert.deepEqual(a.results.map((r: any) => r.values.map((v: any) => v.count)), e.results.map((r: any) => r.values.map((v: any) => v.count)));
  assert.ok(a.results.some((r: any) => r.values[0].count > 0), 'someone signed up');

  const events = (extra: Record<string, unknown>) => queryOf(server, 'EventsQuery')({ select: ['uuid'], after: '-30d', limit: 1000, ...extra });
  const byAction = await expectOk(await events({ actionId: id }));
  const byEvent = await expectOk(await events({ event: 'signup' }));
  assert.deepEqual(byAction.results.map((r: any) => r[0]).sort(), byEvent.results.map((r: any) => r[0]).sort());
  assert.equal(byAction.results.length, sent.filter((s) => s.event === 'signup').length);
  await expectError(await events({ actionId: 999999 }), 400, 'invalid_choice', 'actionId');
  await expectError(await retention({ id: 999999, type: 'actions' }), 400, 'invalid_choice', 'retentionFilter.targetEntity.id');
});

test('an action used in an exclusion excludes what the equivalent event exclusion does', { skip: withoutWindowFunctions }, async () => {
  const id = await createAction([{ event: 'purchase' }]);
  const base = { series: [{ kind: 'EventsNode', event: '$pageview' }, { kind: 'EventsNode', event: 'signup' }], dateRange: { date_from: `-${DAYS}d` } };
  const exclusion = (node: Record<string, unknown>) => ({ ...base, funnelsFilter: { exclusions: [{ ...node, funnelFromStep: 0, funnelToStep: 1 }] } });
  const a = await expectOk(await funnels()(exclusion({ kind: 'ActionsNode', id })));
  const e = await expectOk(await funnels()(exclusion({ kind: 'EventsNode', event: 'purchase' })));
  assert.deepEqual(a.results.map((s: any) => s.count), e.results.map((s: any) => s.count));
});

test('unknown or deleted actions are 400s naming the node id; a changed action is recomputed, not served from cache', async () => {
  await expectError(await trends()({ series: [{ kind: 'ActionsNode', id: 999999 }] }), 400, 'invalid_choice', 'series.0.id');
  await expectError(await trends()({ series: [{ kind: 'ActionsNode', id: 'x' }] }), 400, 'required', 'series.0.id');
  await expectError(
    await funnels()({ series: [{ kind: 'EventsNode', event: 'a' }, { kind: 'ActionsNode', id: 999999 }] }),
    400,
    'invalid_choice',
    'series.1.id',
  );
  const id = await createAction([{ event: 'signup' }]);
  const query = { kind: 'TrendsQuery', series: [{ kind: 'ActionsNode', id }], interval: 'day', dateRange: { date_from: `-${DAYS - 1}d` } };
  const ask = async () => expectOk(await server.api('/api/projects/@current/query/', { method: 'POST', body: { query, refresh: 'blocking' } }));
  // Each node has a cache of its own, and the proxy sends consecutive requests to the next node:
  // one ask per node fills every cache, and after the change each node must compute again.
  const nodes = server.nodeUrls.length;
  for (let i = 0; i < nodes; i++) assert.deepEqual((await ask()).results[0].data, reference([{ event: 'signup' }], 'total'));
  for (let i = 0; i < nodes; i++) assert.equal((await ask()).is_cached, true);
  await expectOk(await server.api(`${ACTIONS}${id}/`, { method: 'PATCH', body: { steps: [{ event: 'purchase' }] } }));
  for (let i = 0; i < nodes; i++) {
    const changed = await ask();
    assert.equal(changed.is_cached, false, `node ${i + 1} of ${nodes} answered from its cache after the change`);
    assert.deepEqual(changed.results[0].data, reference([{ event: 'purchase' }], 'total'));
  }
  await expectOk(await server.api(`${ACTIONS}${id}/`, { method: 'PATCH', body: { deleted: true } }));
  await expectError(await server.api('/api/projects/@current/query/', { method: 'POST', body: { query } }), 400, 'invalid_choice', 'series.0.id');
});
