/**
 * Cohort conditions in flags: /flags and /decide answer them (no errorsWhileComputingFlags),
 * property cohorts from the request's merged properties, static and behavioural cohorts from
 * the stored membership, re-read after each recalculation or upload; the local-evaluation
 * definitions carry property cohorts inline, and posthog-node's local evaluation agrees with /flags.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PostHog } from 'posthog-node';
import { expectOk } from '../helpers/api-fixtures.js';
import { createFlag, decideFlags, evaluate, everyone, identify } from '../helpers/flags.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let local: PostHog;
const BASE = '/api/projects/@current/cohorts/';
let proCohort: any;
let staticCohort: any;
let nestedCohort: any;

const inCohort = (id: number, operator = 'in') => ({ key: 'id', type: 'cohort', value: id, operator });

async function create(body: unknown): Promise<any> {
  return expectOk(await server.api(BASE, { method: 'POST', body }), 201);
}

async function calculated(id: number): Promise<any> {
  for (let i = 0; i < 200; i++) {
    const cohort = await expectOk(await server.api(`${BASE}${id}/`));
    if (!cohort.is_calculating && cohort.last_calculation !== null) return cohort;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`cohort ${id} never finished calculating`);
}

async function flags(distinctId: string, personProperties: Record<string, unknown> = {}): Promise<{ errors: boolean; enabled: Record<string, boolean> }> {
  const answer = await evaluate(server, '/flags?v=2', { api_key: server.projectKey, distinct_id: distinctId, person_properties: personProperties });
  const enabled = Object.fromEntries(Object.entries(answer.flags as Record<string, { enabled: boolean }>).map(([key, flag]) => [key, flag.enabled]));
  return { errors: answer.errorsWhileComputingFlags, enabled };
}

before(async () => {
  server = await startServer({ env: { SIGHTLINE_GEOIP: 'false' } });
  await identify(server, 'pro-user', { plan: 'pro', email: 'p@corp.com' });
  await identify(server, 'free-user', { plan: 'free', email: 'f@corp.com' });
  await identify(server, 'other-user', { plan: 'pro', email: 'o@home.net' });
  proCohort = await create({ name: 'pro', filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', type: 'person', value: 'pro', operator: 'exact' }] }] } } });
  nestedCohort = await create({
    name: 'pro at corp',
    filters: { properties: { type: 'AND', values: [inCohort(proCohort.id), { key: 'email', type: 'person', value: 'corp.com', operator: 'icontains' }] } },
  });
  staticCohort = await create({ name: 'beta testers', is_static: true, csv: 'free-user\n' });
  await calculated(proCohort.id);
  await calculated(nestedCohort.id);
  await createFlag(server, everyone('pro-flag', [inCohort(proCohort.id)]));
  await createFlag(server, everyone('not-pro-flag', [inCohort(proCohort.id, 'not_in')]));
  await createFlag(server, everyone('nested-flag', [inCohort(nestedCohort.id)]));
  await createFlag(server, everyone('beta-flag', [inCohort(staticCohort.id)]));
  // A flag naming a cohort that does not exist is refused; one whose cohort is deleted later matches nobody.
  const refused = await server.api('/api/projects/@current/feature_flags/', { method: 'POST', body: everyone('ghost-flag', [inCohort(987654)]) });
  assert.equal(refused.status, 400);
  assert.equal((await refused.json()).attr, 'filters');
  const doomed = await create({ name: 'doomed', is_static: true, csv: 'pro-user\n' });
  await createFlag(server, everyone('ghost-flag', [inCohort(doomed.id)]));
  assert.equal((await server.api(`${BASE}${doomed.id}/`, { method: 'DELETE' })).status, 204);
});
after(async () => {
  await local?.shutdown(2000);
  await server?.stop();
});

test('/flags and /decide answer cohort conditions without errors', async () => {
  const pro = await flags('pro-user');
  assert.equal(pro.errors, false);
  assert.deepEqual(pro.enabled, { 'pro-flag': true, 'not-pro-flag': false, 'nested-flag': true, 'beta-flag': false, 'ghost-flag': false });
  const free = await flags('free-user');
  assert.deepEqual(free.enabled, { 'pro-flag': false, 'not-pro-flag': true, 'nested-flag': false, 'beta-flag': true, 'ghost-flag': false });
  const other = await flags('other-user');
  assert.deepEqual(other.enabled, { 'pro-flag': true, 'not-pro-flag': false, 'nested-flag': false, 'beta-flag': false, 'ghost-flag': false });
  const decide = await evaluate(server, '/decide?v=3', { api_key: server.projectKey, distinct_id: 'free-user' });
  assert.equal(decide.errorsWhileComputingFlags, false);
  assert.equal(decide.featureFlags['beta-flag'], true);
  assert.equal((await decideFlags(server, { distinct_id: 'pro-user' }))['pro-flag'], true);
  // Property cohorts read the request's overrides, as PostHog evaluates them.
  assert.equal((await flags('free-user', { plan: 'pro' })).enabled['pro-flag'], true);
  assert.equal((await flags('nobody-yet', { plan: 'pro' })).enabled['pro-flag'], true);
});

test('static membership changes are seen by the next request (cached memberships invalidated)', async () => {
  assert.equal((await flags('pro-user')).enabled['beta-flag'], false);
  await expectOk(await server.api(`${BASE}${staticCohort.id}/`, { method: 'PATCH', body: { csv: 'pro-user\n' } }));
  assert.equal((await flags('pro-user')).enabled['beta-flag'], true);
  const pro = (await expectOk(await server.api('/api/projects/@current/persons/?distinct_id=pro-user'))).results[0];
  await expectOk(await server.api(`${BASE}${staticCohort.id}/remove_person_from_static_cohort/`, { method: 'PATCH', body: { person_id: pro.uuid } }));
  assert.equal((await flags('pro-user')).enabled['beta-flag'], false);
  // A deleted cohort holds nobody.
  const response = await server.api(`${BASE}${staticCohort.id}/`, { method: 'DELETE' });
  assert.equal(response.status, 204);
  assert.equal((await flags('free-user')).enabled['beta-flag'], false);
});

test('behavioural cohorts in flags: read from the stored membership, fresh after recalculation', async () => {
  const buyers = await create({
    name: 'buyers',
    filters: { properties: { type: 'AND', values: [{ key: 'purchase', type: 'behavioral', value: 'performed_event', time_value: 7, time_interval: 'day' }] } },
  });
  await calculated(buyers.id);
  await createFlag(server, everyone('buyer-flag', [inCohort(buyers.id)]));
  assert.deepEqual([(await flags('pro-user')).enabled['buyer-flag'], (await flags('pro-user')).errors], [false, false]);
  const response = await server.post('/batch/', { api_key: server.projectKey, batch: [{ event: 'purchase', distinct_id: 'pro-user', properties: {} }] });
  assert.equal(response.status, 200);
  // Recalculated on change (a PATCH with the same definition) as the schedule would.
  await expectOk(await server.api(`${BASE}${buyers.id}/`, { method: 'PATCH', body: { filters: (await expectOk(await server.api(`${BASE}${buyers.id}/`))).filters } }));
  await calculated(buyers.id);
  assert.equal((await flags('pro-user')).enabled['buyer-flag'], true);
});

test('local evaluation: property cohorts inline in the definitions; posthog-node agrees with /flags', async () => {
  const definitions = await expectOk(await server.api(`/api/feature_flag/local_evaluation?token=${server.projectKey}&send_cohorts`));
  assert.deepEqual(Object.keys(definitions.cohorts).sort(), [String(proCohort.id), String(nestedCohort.id)].sort());
  assert.deepEqual(definitions.cohorts[String(proCohort.id)], proCohort.filters.properties);

  local = new PostHog(server.projectKey, { host: server.url, personalApiKey: server.personalKey, featureFlagsPollingInterval: 60_000 });
  assert.equal(await local.waitForLocalEvaluationReady(10_000), true);
  const cases: Record<string, unknown>[] = [
    { plan: 'pro', email: 'a@corp.com' },
    { plan: 'pro', email: 'a@home.net' },
    { plan: 'free', email: 'a@corp.com' },
    { plan: 'PRO', email: 'x@CORP.com' },
  ];
  for (const properties of cases) {
    const remote = (await flags('someone-new', properties)).enabled;
    for (const key of ['pro-flag', 'not-pro-flag', 'nested-flag']) {
      const answer = await local.getFeatureFlag(key, 'someone-new', { personProperties: properties, onlyEvaluateLocally: true });
      assert.equal(answer, remote[key], `${key} for ${JSON.stringify(properties)}`);
    }
  }
});
