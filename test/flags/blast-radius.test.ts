/**
 * The flag editor's preview (PostHog's user_blast_radius): how many persons a release
 * condition's properties match, of all persons — person properties with the engine's operators,
 * cohorts, an empty condition (everyone) — checked against a plain count of the seeded persons;
 * bad conditions are 400s naming the field.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { expectError, expectOk, ingest } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
const persons = Array.from({ length: 30 }, (_, i) => ({ id: `p${i}`, plan: ['free', 'pro', 'team'][i % 3], age: 18 + i, email: `p${i}@${i % 4 === 0 ? 'acme.com' : 'example.org'}` }));

before(async () => {
  server = await startServer();
  await ingest(server, persons.map((p) => ({ event: '$identify', distinct_id: p.id, properties: { $set: { plan: p.plan, age: p.age, email: p.email } } })));
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
  await expectError(await radius({ condition: { properties: [] }, group_type_index: 0 }), 400, 'invalid_choice', 'group_type_index');
});
