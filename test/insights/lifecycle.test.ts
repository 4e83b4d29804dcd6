import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startServer, type TestServer } from '../helpers/server.js';
import { expectError, expectOk } from '../helpers/api-fixtures.js';
import { referenceLifecycle } from '../unit/insights/reference/lifecycle.js';
import { referenceStickiness } from '../unit/insights/reference/stickiness.js';
import { personsAfterMerges, type RefEvent } from '../unit/insights/reference/events.js';

let server: TestServer;
let runs = 0;
const fresh = () => `l${++runs}x${Math.random().toString(36).slice(2, 7)}`;

async function send(events: RefEvent[]): Promise<void> {
  // In time order: a person's created_at is the time of the first event ingested for it.
  const batch = [...events].sort((a, b) => a.ts - b.ts).map((e) => ({ event: e.event, distinct_id: e.distinct_id, timestamp: new Date(e.ts).toISOString(), properties: e.properties }));
  const response = await server.post('/batch/', { api_key: server.projectKey, batch });
  assert.equal(response.status, 200, await response.text());
}
const setTimeZone = async (timezone: string) => expectOk(await server.api('/api/projects/@current/', { method: 'PATCH', body: { timezone } }));
const query = (kind: string, q: Record<string, unknown>) => server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind, ...q }, refresh: 'force_blocking' } });
const ev = (event: string, distinct_id: string, iso: string): RefEvent => ({ event, distinct_id, ts: Date.parse(iso), properties: {} });

describe('LifecycleQuery and StickinessQuery', () => {
  before(async () => {
    server = await startServer({ env: { SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', SIGHTLINE_GEOIP: 'false' } });
  });
  after(async () => {
    await server?.stop();
  });

  test('§1.14 lifecycle: created day 1, events on days 1, 2, 4 — new, returning, dormant, resurrecting, dormant', async () => {
    await setTimeZone('UTC');
    const p = fresh();
    await send([ev(p, `${p}-u`, '2025-03-01T10:00:00Z'), ev(p, `${p}-u`, '2025-03-02T10:00:00Z'), ev(p, `${p}-u`, '2025-03-04T10:00:00Z')]);
    const body = await expectOk(await query('LifecycleQuery', { series: [{ kind: 'EventsNode', event: p }], dateRange: { date_from: '2025-03-01', date_to: '2025-03-05' } }));
    assert.deepEqual(
      body.results.map((r: any) => [r.status, r.label, r.data]),
      [
        ['new', `${p} - new`, [1, 0, 0, 0, 0]],
        ['returning', `${p} - returning`, [0, 1, 0, 0, 0]],
        ['resurrecting', `${p} - resurrecting`, [0, 0, 0, 1, 0]],
        ['dormant', `${p} - dormant`, [0, 0, -1, 0, -1]],
      ],
    );
    assert.deepEqual(body.results[0].days, ['2025-03-01', '2025-03-02', '2025-03-03', '2025-03-04', '2025-03-05']);
  });

  test('lifecycle of groups: a group is new at its key\'s first event (any event); its actors are groups', async () => {
    await setTimeZone('UTC');
    const p = fresh();
    const at = (event: string, who: string, iso: string, group: string | null): RefEvent => ({ ...ev(event, who, iso), properties: group ? { $groups: { company: group } } : {} });
    await send([
      // acme is born on day 1 by another event, so its series events on days 2 and 3 are not new.
      at(`${p}-other`, `${p}-a`, '2025-03-01T09:00:00Z', `${p}-acme`),
      at(p, `${p}-a`, '2025-03-02T10:00:00Z', `${p}-acme`),
      at(p, `${p}-b`, '2025-03-03T10:00:00Z', `${p}-acme`),
      // globex: new on day 2, dormant on day 3, resurrecting on day 4; an event without a group counts for no group.
      at(p, `${p}-c`, '2025-03-02T11:00:00Z', `${p}-globex`),
      at(p, `${p}-c`, '2025-03-04T11:00:00Z', `${p}-globex`),
      at(p, `${p}-c`, '2025-03-03T11:00:00Z', null),
    ]);
    const lifecycle = { kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: p }], dateRange: { date_from: '2025-03-01', date_to: '2025-03-05' }, aggregation_group_type_index: 0 };
    const body = await expectOk(await query('LifecycleQuery', lifecycle));
    assert.deepEqual(
      body.results.map((r: any) => [r.status, r.data]),
      [
        ['new', [0, 1, 0, 0, 0]],
        ['returning', [0, 0, 1, 0, 0]],
        ['resurrecting', [0, 1, 0, 1, 0]],
        ['dormant', [0, 0, -1, -1, -1]],
      ],
    );
    const listed = async (status: string, day: string) => {
      const actors = await expectOk(await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'ActorsQuery', select: ['key'], source: { kind: 'InsightActorsQuery', source: lifecycle, status, day } } } }));
      return actors.results.map((r: any[]) => r[0]).sort();
    };
    assert.deepEqual(await listed('new', '2025-03-02'), [`${p}-globex`]);
    assert.deepEqual(await listed('resurrecting', '2025-03-02'), [`${p}-acme`]);
    assert.deepEqual(await listed('dormant', '2025-03-05'), [`${p}-globex`]);
    assert.deepEqual(await listed('dormant', '2025-03-04'), [`${p}-acme`]);
    assert.deepEqual(await listed('returning', '2025-03-03'), [`${p}-acme`]);
  });

  test('stickiness: actors per number of active days, cumulative, criteria, compare', async () => {
    await setTimeZone('UTC');
    const p = fresh();
    await send([
      ev(p, `${p}-a`, '2025-03-01T10:00:00Z'),
      ev(p, `${p}-a`, '2025-03-02T10:00:00Z'),
      ev(p, `${p}-a`, '2025-03-02T11:00:00Z'),
      ev(p, `${p}-b`, '2025-03-03T10:00:00Z'),
      { ...ev(p, `${p}-c`, '2025-03-03T11:00:00Z'), properties: { $groups: { company: `${p}-acme` } } },
    ]);
    const base = { series: [{ kind: 'EventsNode', event: p }], dateRange: { date_from: '2025-03-01', date_to: '2025-03-03' } };
    const body = await expectOk(await query('StickinessQuery', base));
    const r = body.results[0];
    assert.deepEqual([r.data, r.days, r.labels, r.count, r.label], [[2, 1, 0], [1, 2, 3], ['1 day', '2 days', '3 days'], 3, p]);
    const cumulative = await expectOk(await query('StickinessQuery', { ...base, stickinessFilter: { computedAs: 'cumulative' } }));
    assert.deepEqual(cumulative.results[0].data, [3, 1, 0]);
    assert.equal(cumulative.results[0].labels[0], '1 day or more');
    const twice = await expectOk(await query('StickinessQuery', { ...base, stickinessFilter: { stickinessCriteria: { operator: 'gte', value: 2 } } }));
    assert.deepEqual(twice.results[0].data, [1, 0, 0]);
    const groups = await expectOk(await query('StickinessQuery', { ...base, aggregation_group_type_index: 0 }));
    assert.deepEqual(groups.results[0].data, [1, 0, 0]);
    const compared = await expectOk(await query('StickinessQuery', { ...base, compareFilter: { compare: true } }));
    assert.deepEqual(compared.results.map((x: any) => [x.compare_label, x.data]), [['current', [2, 1, 0]], ['previous', [0, 0, 0]]]);
  });

  test('bad input is a 400 naming the field', async () => {
    await expectError(await query('LifecycleQuery', {}), 400, 'required', 'series');
    await expectError(await query('LifecycleQuery', { series: [{ kind: 'ActionsNode', id: 3 }] }), 400, 'invalid_choice', 'series.0.id');
    await expectError(await query('StickinessQuery', { series: [{ kind: 'EventsNode' }], stickinessFilter: { stickinessCriteria: { operator: 'about' } } }), 400, 'invalid_choice', 'stickinessFilter.stickinessCriteria.operator');
    await expectError(await query('StickinessQuery', { series: [{ kind: 'EventsNode' }], interval: 'year' }), 400, 'invalid_choice', 'interval');
    await expectError(await query('LifecycleQuery', { series: [{ kind: 'EventsNode' }], aggregation_group_type_index: 7 }), 400, 'invalid_input', 'aggregation_group_type_index');
    await expectError(await query('LifecycleQuery', { series: [{ kind: 'EventsNode' }], aggregation_group_type_index: 'company' }), 400, 'invalid_input', 'aggregation_group_type_index');
  });

  test('match the reference implementations (fast-check, DST, merges)', { timeout: 600_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          zone: fc.constantFrom('UTC', 'Europe/Paris', 'America/New_York'),
          interval: fc.constantFrom('day' as const, 'week' as const, 'hour' as const),
          min: fc.integer({ min: 1, max: 2 }),
          events: fc.array(
            fc.record({ who: fc.integer({ min: 0, max: 4 }), minutes: fc.integer({ min: -10 * 24 * 60, max: 10 * 24 * 60 }), group: fc.option(fc.integer({ min: 0, max: 2 })), other: fc.boolean() }),
            { minLength: 1, maxLength: 30 },
          ),
          merge: fc.boolean(),
        }),
        async (c) => {
          const p = fresh();
          const center = Date.parse('2025-03-30T01:00:00Z');
          // Some events of another name: they make persons and groups exist (born) without being active.
          const events: RefEvent[] = c.events.map((e) => ({
            event: e.other ? `${p}-other` : p,
            distinct_id: `${p}-d${e.who}`,
            ts: center + e.minutes * 60_000,
            properties: e.group === null ? {} : { $groups: { company: `${p}-g${e.group}` } },
          }));
          if (c.merge) events.push({ event: '$identify', distinct_id: `${p}-d0`, ts: center - 30 * 86_400_000, properties: { $anon_distinct_id: `${p}-d4` } });
          await setTimeZone(c.zone);
          await send(events);
          const dateRange = c.interval === 'hour' ? { date_from: '2025-03-29', date_to: '2025-03-31' } : { date_from: '2025-03-25', date_to: '2025-04-05' };
          const series = [{ kind: 'EventsNode', event: p }];
          const sticky = await expectOk(await query('StickinessQuery', { series, interval: c.interval, dateRange, stickinessFilter: { stickinessCriteria: { operator: 'gte', value: c.min } } }));
          assert.deepEqual(sticky.results[0].data, referenceStickiness(events, { event: p, interval: c.interval, dateRange, timeZone: c.zone, min: c.min, now: new Date() }));
          // A person is created at its first event (send() ingests in time order).
          const personOf = personsAfterMerges(events);
          const first = new Map<string, number>();
          for (const e of events) first.set(personOf(e.distinct_id), Math.min(first.get(personOf(e.distinct_id)) ?? Infinity, e.ts));
          const lifecycle = await expectOk(await query('LifecycleQuery', { series, interval: c.interval, dateRange }));
          const expected = referenceLifecycle(events, { event: p, interval: c.interval, dateRange, timeZone: c.zone, now: new Date(), createdAt: (person) => first.get(person)! });
          assert.deepEqual(Object.fromEntries(lifecycle.results.map((r: any) => [r.status, r.data])), expected);
          // By groups (company is group type 0: the first this server saw): born at the key's first event.
          const groupOf = (e: RefEvent) => ((e.properties.$groups as Record<string, string> | undefined)?.company ?? null);
          const born = new Map<string, number>();
          for (const e of events) if (groupOf(e) !== null) born.set(groupOf(e)!, Math.min(born.get(groupOf(e)!) ?? Infinity, e.ts));
          const byGroups = await expectOk(await query('LifecycleQuery', { series, interval: c.interval, dateRange, aggregation_group_type_index: 0 }));
          const expectedGroups = referenceLifecycle(events, { event: p, interval: c.interval, dateRange, timeZone: c.zone, now: new Date(), createdAt: (g) => born.get(g)!, actor: groupOf });
          assert.deepEqual(Object.fromEntries(byGroups.results.map((r: any) => [r.status, r.data])), expectedGroups);
        },
      ),
      { numRuns: Number(process.env.SIGHTLINE_FC_RUNS ?? 15) },
    );
  });
});
