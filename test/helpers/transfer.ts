/**
 * What the export/import tests share: a server filled through the API with one of everything the
 * archive carries, a snapshot of the API's answers about it, and the CLI run as a user runs it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTenant, expectOk, ingest, walk, type Tenant } from './api-fixtures.js';
import { OWNER_EMAIL, OWNER_PASSWORD } from './sessions.js';
import type { TestServer } from './server.js';
import type { MetaStore } from '../../src/store/types.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A server whose owner has a password (the archive carries its hash). */
export const OWNER_ENV = { SIGHTLINE_OWNER_EMAIL: OWNER_EMAIL, SIGHTLINE_OWNER_PASSWORD: OWNER_PASSWORD, SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0' };

/** Runs `sightline <args>` with only the given settings; never throws. */
export function sightline(env: Record<string, string>, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SIGHTLINE_LOG_LEVEL: 'silent', ...env }, maxBuffer: 64 * 2 ** 20 },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

export interface Filled {
  other: Tenant;
  cohortIds: number[];
  dashboardId: number;
  /** Events sent to the main project. */
  events: number;
}

const USERS = ['ann', 'ben', 'cat', 'dan', 'eve'];
const DAY = 86_400_000;

/** One of everything: persons (one merged), groups, events over a week, flags, cohorts, an action, an insight on a dashboard, a deletion, another organization. */
export async function fill(server: TestServer): Promise<Filled> {
  await ingest(server, [
    { event: '$pageview', distinct_id: 'anon-1', properties: { $current_url: 'https://x.test/' } },
    { event: '$identify', distinct_id: 'ann', properties: { $anon_distinct_id: 'anon-1', $set: { email: 'ann@corp.test', plan: 'pro' } } },
    { event: '$identify', distinct_id: 'ben', properties: { $set: { email: 'ben@corp.test', plan: 'free' } } },
    { event: '$identify', distinct_id: 'cat', properties: { $set: { email: 'cat@home.test', plan: 'pro', name: 'Cat' } } },
    { event: '$identify', distinct_id: 'dan', properties: { $set: { email: 'dan@home.test' } } },
    { event: '$groupidentify', distinct_id: 'ann', properties: { $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme', seats: 12 } } },
  ]);
  const now = Date.now();
  const batch = [];
  for (let i = 0; i < 240; i++) {
    const user = USERS[i % USERS.length];
    batch.push({
      event: i % 3 === 0 ? 'purchase' : '$pageview',
      distinct_id: user,
      timestamp: new Date(now - (i % 7) * DAY - i * 60_000).toISOString(),
      properties: { amount: i % 17, $current_url: `https://x.test/p/${i % 4}`, $groups: user === 'ann' ? { company: 'acme' } : undefined, nested: { list: [i, 'ü', null] } },
    });
  }
  const response = await server.post('/batch/', { api_key: server.projectKey, batch });
  assert.equal(response.status, 200, await response.text());

  const base = '/api/projects/@current';
  const post = async (pathname: string, body: unknown) => expectOk(await server.api(`${base}${pathname}`, { method: 'POST', body }), 201);
  const pro = await post('/cohorts/', { name: 'Pro', filters: { properties: { type: 'AND', values: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }] } } });
  const listed = await post('/cohorts/', { name: 'Listed', is_static: true, csv: 'distinct_id\nben\ndan\n' });
  await calculated(server, pro.id);
  await post('/feature_flags/', { key: 'pro-only', filters: { groups: [{ properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }], rollout_percentage: 100 }] } });
  await post('/feature_flags/', { key: 'half', filters: { groups: [{ properties: [], rollout_percentage: 50 }] } });
  await post('/feature_flags/', { key: 'listed', filters: { groups: [{ properties: [{ key: 'id', value: listed.id, type: 'cohort' }], rollout_percentage: 100 }] } });
  await post('/feature_flags/', {
    key: 'colours',
    filters: { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants: [{ key: 'red', rollout_percentage: 50 }, { key: 'blue', rollout_percentage: 50 }] } },
  });
  await post('/actions/', { name: 'Bought', steps: [{ event: 'purchase' }] });
  const dashboard = await post('/dashboards/', { name: 'Main', description: 'everything' });
  await post('/insights/', {
    name: 'Purchases',
    query: { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'purchase' }], interval: 'day', dateRange: { date_from: '-7d' } } },
    dashboards: [dashboard.id],
  });
  // A deletion: its queue entry and activity go along.
  const eve = (await expectOk(await server.api(`${base}/persons/?distinct_id=eve`))).results[0];
  const deleted = await server.api(`${base}/persons/${eve.uuid}/`, { method: 'DELETE' });
  assert.ok(deleted.status < 300, await deleted.text());
  const other = await createTenant(server, 'other');
  await ingest(server, [{ event: 'elsewhere', distinct_id: 'zed', properties: { $set: { plan: 'pro' } } }], other.projectKey);
  return { other, cohortIds: [pro.id, listed.id], dashboardId: dashboard.id, events: 6 + batch.length };
}

async function calculated(server: TestServer, id: number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const cohort = await expectOk(await server.api(`/api/projects/@current/cohorts/${id}/`));
    if (!cohort.is_calculating && cohort.last_calculation !== null) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`cohort ${id} never finished calculating`);
}

/** Distinct ids the flag answers are compared for (eve was deleted; nobody was never seen). */
const FLAG_IDS = ['anon-1', 'ann', 'ben', 'cat', 'dan', 'eve', 'nobody'];

/** The API's answers about everything `fill` made, to compare two servers with. */
export async function snapshot(server: TestServer, filled: Filled): Promise<Record<string, unknown>> {
  const get = async (pathname: string, key?: string) => expectOk(await server.api(pathname, { key }));
  const base = '/api/projects/@current';
  const out: Record<string, unknown> = {};
  out.me = await get('/api/users/@me/');
  const organizations = await get('/api/organizations/');
  out.organizations = organizations;
  out.projects = await get('/api/projects/');
  out.project = await get(`${base}/`);
  out.members = await get(`/api/organizations/${organizations.results[0].id}/members/`);
  out.persons = (await walk(server, `${base}/persons/?limit=2`)).results;
  out.personActivity = await get(`${base}/persons/activity/`);
  out.flags = await get(`${base}/feature_flags/`);
  out.localEvaluation = await get(`${base}/feature_flags/local_evaluation`);
  // A server recalculates dynamic cohorts soon after its start: when is its own business.
  const cohorts = await get(`${base}/cohorts/`);
  for (const cohort of cohorts.results) cohort.last_calculation = cohort.last_calculation === null ? null : 'some time';
  out.cohorts = cohorts;
  for (const id of filled.cohortIds) out[`cohort ${id} persons`] = await get(`${base}/cohorts/${id}/persons/`);
  out.actions = await get(`${base}/actions/`);
  out.insights = await get(`${base}/insights/`);
  out.dashboard = await get(`${base}/dashboards/${filled.dashboardId}/`);
  out.eventDefinitions = await get(`${base}/event_definitions/?limit=100`);
  out.eventProperties = await get(`${base}/property_definitions/?type=event&limit=100`);
  out.personProperties = await get(`${base}/property_definitions/?type=person&limit=100`);
  out.groupTypes = await get(`${base}/groups_types/`);
  out.groups = await get(`${base}/groups/?group_type_index=0`);
  out.events = (await walk(server, `${base}/events/?limit=100`)).results;
  const query = async (q: unknown) => {
    const response = await server.api(`${base}/query/`, { method: 'POST', body: { query: q, refresh: 'force_blocking' } });
    assert.equal(response.status, 200, `${JSON.stringify(q)} → ${await response.clone().text()}`);
    return (await response.json()).results;
  };
  out.trends = await query({ kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }, { kind: 'EventsNode', event: 'purchase', math: 'dau' }], interval: 'day', dateRange: { date_from: '-8d' } });
  out.byCohort = await query({ kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'purchase' }], dateRange: { date_from: '-8d' }, breakdownFilter: { breakdown_type: 'cohort', breakdown: filled.cohortIds } });
  out.hogql = await query({ kind: 'HogQLQuery', query: 'select event, count(), sum(toFloat(properties.amount)), count(distinct person_id) from events group by event order by event' });
  // Persons as the event store joins them (its person mirror).
  out.byPlan = await query({ kind: 'HogQLQuery', query: "select person.properties.plan as plan, count() from events group by plan order by plan" });
  // (A trends breakdown by a person property needs window functions, which ClickHouse 18.16 lacks.)
  out.byEmail = await query({ kind: 'HogQLQuery', query: "select person.properties.email as email, count(), max(timestamp) from events where event = 'purchase' group by email order by email" });
  out.flagAnswers = {};
  for (const distinctId of FLAG_IDS) {
    const answer = await server.post('/flags?v=2', { api_key: server.projectKey, distinct_id: distinctId });
    assert.equal(answer.status, 200);
    const body = await answer.json();
    (out.flagAnswers as Record<string, unknown>)[distinctId] = Object.fromEntries(Object.entries(body.flags).map(([key, flag]: [string, any]) => [key, [flag.enabled, flag.variant]]));
  }
  out.otherProjects = await get('/api/projects/', filled.other.ownerKey);
  out.otherEvents = (await get(`/api/projects/${filled.other.projectId}/events/`, filled.other.ownerKey)).results;
  return withoutClock(out) as Record<string, unknown>;
}

/** When a result was computed (at each read) is no stored data. */
const CLOCK_KEYS = new Set(['last_refresh', 'next_allowed_client_refresh', 'cache_key', 'timings']);

function withoutClock(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutClock);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => !CLOCK_KEYS.has(key)).map(([key, inner]) => [key, withoutClock(inner)]));
}

/** Distinct ids whose order differs between byte order and a language's collation. */
const AWKWARD_IDS = ['a', 'B', 'b', 'A', '_x', 'é', 'e', ' ', '10', '9', 'Z', 'z', 'ä', 'ab', 'a b', 'a-b', 'a_b', '😀', 'ß', 'ss'];

/**
 * Writes rows through a metadata store's MetaTransfer and reads them back in pages of 7: each
 * row comes back once, equal, whatever the engine's collation does with the keys.
 */
export async function checkPaging(meta: MetaStore): Promise<void> {
  const ids: Record<string, unknown>[] = [];
  const persons: Record<string, unknown>[] = [];
  for (const [n, projectId] of [1, 2].entries()) {
    for (const [i, distinctId] of AWKWARD_IDS.entries()) {
      const uuid = `0192${String(n * 100 + i).padStart(4, '0')}-0000-7000-8000-000000000000`;
      persons.push({ project_id: projectId, uuid, id: 1000 + n * 100 + i, properties: { email: `${distinctId}@x.test`, list: [1, true, null] }, is_identified: i % 2 === 0, created_at: '2026-01-01T00:00:00.000Z', version: i });
      ids.push({ project_id: projectId, distinct_id: distinctId, person_uuid: uuid });
    }
  }
  await meta.transfer.writeRows('persons', persons);
  await meta.transfer.writeRows('person_distinct_ids', ids);
  for (const [table, written] of [['persons', persons], ['person_distinct_ids', ids]] as const) {
    const read: Record<string, unknown>[] = [];
    let pages = 0;
    for await (const page of meta.transfer.readTable(table, 7)) {
      assert.ok(page.length <= 7);
      read.push(...page);
      pages++;
    }
    assert.ok(pages >= 6, `${table}: paged`);
    const key = (row: Record<string, unknown>) => JSON.stringify([row.project_id, row.uuid ?? row.distinct_id]);
    assert.deepEqual([...read].sort((x, y) => key(x).localeCompare(key(y))), [...written].sort((x, y) => key(x).localeCompare(key(y))), table);
  }
  assert.deepEqual(
    Object.fromEntries(Object.entries(await meta.transfer.rowCounts()).filter(([, rows]) => rows > 0)),
    { persons: persons.length, person_distinct_ids: ids.length },
  );
}
