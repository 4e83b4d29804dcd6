/**
 * The flag editor's preview (PostHog's user_blast_radius): how many persons a release
 * condition's properties match, of all persons — person properties with the engine's operators,
 * cohorts, an empty condition (everyone) — checked against a plain count of the seeded persons;
 * with `group_type_index`, how many groups of that type its group properties match, of all groups
 * of the type (more than one store page of them; other types and other projects left out),
 * checked against a plain reference with fast-check; bad conditions are 400s naming the field.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { createTenant, expectError, expectOk, ingest } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
const persons = Array.from({ length: 30 }, (_, i) => ({ id: `p${i}`, plan: ['free', 'pro', 'team'][i % 3], age: 18 + i, email: `p${i}@${i % 4 === 0 ? 'acme.com' : 'example.org'}` }));

/** Companies (group type 0): more than the 1,000 a store page holds; every seventh has no size. */
interface Company {
  key: string;
  plan: string;
  size?: number;
  name: string;
}
const companies: Company[] = Array.from({ length: 1_050 }, (_, i) => ({ key: `c${i}`, plan: ['free', 'pro', 'team'][i % 3]!, ...(i % 7 !== 0 && { size: i % 50 }), name: `Company ${i}` }));

/** Sent by a seeded person, as posthog-js does: groups add no persons. */
const groupIdentify = (type: string, key: string, set: Record<string, unknown>) => ({
  event: '$groupidentify',
  distinct_id: 'p0',
  properties: { $group_type: type, $group_key: key, $group_set: set },
});

before(async () => {
  server = await startServer();
  await ingest(server, persons.map((p) => ({ event: '$identify', distinct_id: p.id, properties: { $set: { plan: p.plan, age: p.age, email: p.email } } })));
  await ingest(server, companies.map(({ key, ...set }) => groupIdentify('company', key, set)));
  // Another type of the project, and companies of another project: neither is counted.
  await ingest(server, [groupIdentify('team', 't1', { plan: 'pro' }), groupIdentify('team', 't2', { plan: 'free' })]);
  const other = await createTenant(server, 'elsewhere');
  await ingest(server, [groupIdentify('company', 'x1', { plan: 'pro', size: 3 })], other.projectKey);
});
after(async () => {
  await server.stop();
});

const radius = (body: unknown) => server.api('/api/projects/@current/feature_flags/user_blast_radius/', { method: 'POST', body });

test('counts the persons a condition matches, of all persons, as a plain count of the seeded ones does', async () => {
  const cases: Array<[unknown[], (p: (typeof persons)[number]) => boolean]> = [
    [[], () => true],
    [[{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }], (p) => p.plan === 'pro'],
    [[{ key: 'plan', value: ['pro', 'team'], operator: 'exact', type: 'person' }, { key: 'age', value: 30, operator: 'gte', type: 'person' }], (p) => p.plan !== 'free' && p.age >= 30],
    [[{ key: 'email', value: 'acme.com', operator: 'icontains', type: 'person' }], (p) => p.email.includes('acme.com')],
    [[{ key: 'email', value: '^p1', operator: 'regex', type: 'person' }], (p) => /^p1/.test(p.email)],
    [[{ key: 'nickname', operator: 'is_not_set', type: 'person' }], () => true],
  ];
  for (const [properties, matches] of cases) {
    const answer = await expectOk(await radius({ condition: { properties, rollout_percentage: 50 } }));
    assert.deepEqual(answer, { users_affected: persons.filter(matches).length, total_users: persons.length }, JSON.stringify(properties));
  }
});

test('a cohort in the condition counts its members', async () => {
  const cohort = await expectOk(await server.api('/api/projects/@current/cohorts/', { method: 'POST', body: { name: 'picked', is_static: true, csv: 'p1\np2\np3\n' } }), 201);
  const answer = await expectOk(await radius({ condition: { properties: [{ key: 'id', value: cohort.id, type: 'cohort' }, { key: 'plan', value: 'pro', operator: 'exact', type: 'person' }] } }));
  // p1 is the only pro among p1–p3.
  assert.deepEqual(answer, { users_affected: 1, total_users: persons.length });
});

test('bad conditions are 400s naming the field', async () => {
  await expectError(await radius({}), 400, 'required', 'condition');
  await expectError(await radius({ condition: { properties: {} } }), 400, 'invalid_input', 'condition.properties');
  await expectError(await radius({ condition: { properties: [{ key: 'plan', value: 'x', operator: 'sounds_like', type: 'person' }] } }), 400, 'invalid_input', 'condition.properties.0.operator');
  await expectError(await radius({ condition: { properties: [{ key: 'id', value: 999999, type: 'cohort' }] } }), 400, 'invalid_input', 'condition.properties');
});

/** A group property filter as the flag editor sends it, and what it means for a company. */
type GroupCase = { filter: Record<string, unknown>; holds: (c: Company) => boolean };

const plans = fc.subarray(['free', 'pro', 'team', 'enterprise'], { minLength: 1 });
const groupCase: fc.Arbitrary<GroupCase> = fc.oneof(
  plans.map((values) => ({ filter: { key: 'plan', value: values, operator: 'exact' }, holds: (c: Company) => values.includes(c.plan) })),
  fc.constantFrom('free', 'pro').map((plan) => ({ filter: { key: 'plan', value: plan, operator: 'is_not' }, holds: (c: Company) => c.plan !== plan })),
  fc.integer({ min: -1, max: 50 }).map((n) => ({ filter: { key: 'size', value: n, operator: 'gt' }, holds: (c: Company) => c.size !== undefined && c.size > n })),
  fc.integer({ min: 0, max: 51 }).map((n) => ({ filter: { key: 'size', value: String(n), operator: 'lte' }, holds: (c: Company) => c.size !== undefined && c.size <= n })),
  fc.constantFrom('is_set', 'is_not_set').map((operator) => ({ filter: { key: 'size', value: operator, operator }, holds: (c: Company) => (c.size !== undefined) === (operator === 'is_set') })),
  fc.integer({ min: 0, max: 120 }).map((n) => ({ filter: { key: 'name', value: String(n), operator: 'icontains' }, holds: (c: Company) => c.name.includes(String(n)) })),
  fc.constant({ filter: { key: 'name', value: '^Company 1[0-9]$', operator: 'regex' }, holds: (c: Company) => /^Company 1[0-9]$/.test(c.name) }),
);

test("a group flag's condition counts the groups of its type its group properties match, as a plain reference does", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(groupCase, { maxLength: 3 }), async (cases) => {
      const properties = cases.map(({ filter }) => ({ ...filter, type: 'group', group_type_index: 0 }));
      const answer = await expectOk(await radius({ condition: { properties, rollout_percentage: 30 }, group_type_index: 0 }));
      const expected = companies.filter((c) => cases.every(({ holds }) => holds(c))).length;
      assert.deepEqual(answer, { users_affected: expected, total_users: companies.length }, JSON.stringify(properties));
    }),
    { numRuns: 40 },
  );
  // The other type: its own two groups.
  const teams = await expectOk(await radius({ condition: { properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'group', group_type_index: 1 }] }, group_type_index: 1 }));
  assert.deepEqual(teams, { users_affected: 1, total_users: 2 });
  // A type nothing was sent for: none of none.
  assert.deepEqual(await expectOk(await radius({ condition: { properties: [] }, group_type_index: 3 })), { users_affected: 0, total_users: 0 });
});

test("bad group conditions are 400s naming the field", async () => {
  const plan = { key: 'plan', value: 'pro', operator: 'exact', type: 'group', group_type_index: 0 };
  await expectError(await radius({ condition: { properties: [plan] }, group_type_index: 5 }), 400, 'invalid_input', 'group_type_index');
  await expectError(await radius({ group_type_index: 0 }), 400, 'required', 'condition');
  await expectError(await radius({ condition: { properties: [{ key: 'plan', value: 'pro', type: 'person' }] }, group_type_index: 0 }), 400, 'invalid_choice', 'condition.properties.0.type');
  await expectError(await radius({ condition: { properties: [plan, { key: 'id', value: 1, type: 'cohort' }] }, group_type_index: 0 }), 400, 'invalid_choice', 'condition.properties.1.type');
  await expectError(await radius({ condition: { properties: [{ ...plan, group_type_index: 1 }] }, group_type_index: 0 }), 400, 'invalid_input', 'condition.properties.0.group_type_index');
  await expectError(await radius({ condition: { properties: [{ ...plan, operator: 'sounds_like' }] }, group_type_index: 0 }), 400, 'invalid_input', 'condition.properties.0.operator');
  await expectError(await radius({ condition: { properties: [{ ...plan, key: '' }] }, group_type_index: 0 }), 400, 'required', 'condition.properties.0.key');
});
