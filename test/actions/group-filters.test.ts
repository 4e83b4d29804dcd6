/**
 * The events API's `group` property filters: the properties of the event's group of that type
 * (set by $groupidentify, kept in the metadata store) decide, with each operator's meaning —
 * negative operators also match events without the group or without the property. Checked
 * against a reference over generated groups and events; plus the 400s.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { RE2JS } from 're2js';
import { v7 as uuidv7 } from 'uuid';
import { expectError, expectOk, q } from '../helpers/api-fixtures.js';
import { startInsightsServer } from '../helpers/insights.js';
import type { TestServer } from '../helpers/server.js';

let server: TestServer;
const EVENTS = '/api/projects/@current/events/';

const ORGS: Record<string, Record<string, unknown>> = {
  'org:1': { industry: 'food', size: 5, paying: true },
  'org:2': { industry: 'Food & drink', size: 50 },
  'org:3': { industry: 'tech', size: 500, paying: false },
  'org:4': { name: 'no industry', size: null },
  'org:5': {},
};
/** Groups of type 1 share keys with type 0, so the type index must matter. */
const PROJECTS: Record<string, Record<string, unknown>> = { 'org:1': { industry: 'tech' }, 'p-2': { industry: 'food' } };

interface Sent {
  uuid: string;
  org: string | null;
  project: string | null;
}
let sent: Sent[] = [];

before(async () => {
  server = await startInsightsServer();
  const identify = (type: string, key: string, set: Record<string, unknown>) => ({
    event: '$groupidentify',
    distinct_id: `$${type}_${key}`,
    properties: { $group_type: type, $group_key: key, $group_set: set },
  });
  await expectOk(
    await server.post('/batch/', {
      api_key: server.projectKey,
      batch: [...Object.entries(ORGS).map(([k, v]) => identify('organization', k, v)), ...Object.entries(PROJECTS).map(([k, v]) => identify('project', k, v))],
    }),
  );
  const arb = fc.record({
    org: fc.option(fc.constantFrom(...Object.keys(ORGS), 'org:unknown'), { nil: null }),
    project: fc.option(fc.constantFrom(...Object.keys(PROJECTS)), { nil: null }),
  });
  sent = fc.sample(arb, { numRuns: 120, seed: 5 }).map((e) => ({ ...e, uuid: uuidv7() }));
  const batch = sent.map((e, i) => ({
    uuid: e.uuid,
    event: 'visit',
    distinct_id: `u${i % 9}`,
    properties: { $groups: { ...(e.org !== null && { organization: e.org }), ...(e.project !== null && { project: e.project }) } },
  }));
  await expectOk(await server.post('/batch/', { api_key: server.projectKey, batch }));
});
after(async () => {
  await server?.stop();
});

async function matched(filters: unknown): Promise<string[]> {
  const page = await expectOk(await server.api(`${EVENTS}?event=visit&limit=1000&properties=${q(filters)}`));
  return page.results.map((e: any) => e.id).sort();
}

/** PostHog's operator semantics on the group's property as text (missing: undefined). */
function holds(operator: string, value: string | number, property: unknown): boolean {
  const missing = property === undefined || property === null;
  const text = missing ? '' : String(property);
  switch (operator) {
    case 'exact':
      return !missing && text === String(value);
    case 'is_not':
      return missing || text !== String(value);
    case 'icontains':
      return !missing && text.toLowerCase().includes(String(value).toLowerCase());
    case 'not_icontains':
      return missing || !text.toLowerCase().includes(String(value).toLowerCase());
    case 'regex':
      return !missing && RE2JS.compile(String(value)).matcher(text).find();
    case 'gt':
      return !missing && Number(text) > Number(value);
    case 'lt':
      return !missing && Number(text) < Number(value);
    case 'is_set':
      return !missing;
    case 'is_not_set':
      return missing;
  }
  throw new Error(operator);
}

test('group filters select the events whose group has the property, as the reference does', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(0, 1),
      fc.constantFrom('industry', 'size', 'paying', 'name'),
      fc.constantFrom('exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'gt', 'lt', 'is_set', 'is_not_set'),
      fc.constantFrom<string | number>('food', 'tech', 'FOOD', '^f', 50, 'true', 6),
      async (index, key, operator, value) => {
        if ((operator === 'gt' || operator === 'lt') && typeof value !== 'number') return;
        const got = await matched([{ type: 'group', group_type_index: index, key, operator, value }]);
        const groups = index === 0 ? ORGS : PROJECTS;
        const want = sent
          .filter((e) => {
            const groupKey = index === 0 ? e.org : e.project;
            const property = groupKey === null ? undefined : groups[groupKey]?.[key];
            return holds(operator, value, property);
          })
          .map((e) => e.uuid)
          .sort();
        assert.deepEqual(got, want, `${index} ${key} ${operator} ${value}`);
      },
    ),
    { numRuns: 60, seed: 3 },
  );
});

test('a fixed case: food organizations AND (an OR group) the tech project', async () => {
  const got = await matched({
    type: 'AND',
    values: [
      { type: 'AND', values: [{ type: 'group', group_type_index: 0, key: 'industry', value: 'food' }] },
      { type: 'OR', values: [{ type: 'group', group_type_index: 1, key: 'industry', value: 'tech' }] },
    ],
  });
  const want = sent.filter((e) => e.org === 'org:1' && e.project === 'org:1').map((e) => e.uuid).sort();
  assert.ok(want.length > 0, 'the generated data has such events');
  assert.deepEqual(got, want);
});

test('bad group filters are 400s naming properties', async () => {
  const refused = async (filter: Record<string, unknown>) => expectError(await server.api(`${EVENTS}?properties=${q([filter])}`), 400, 'invalid_input', 'properties');
  await refused({ type: 'group', key: 'industry', value: 'x' });
  await refused({ type: 'group', group_type_index: 5, key: 'industry', value: 'x' });
  await refused({ type: 'group', group_type_index: 0, key: '', value: 'x' });
  await refused({ type: 'group', group_type_index: 0, key: 'industry', operator: 'regex', value: '(' });
});
