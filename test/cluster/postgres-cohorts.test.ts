/**
 * The PostgreSQL cohort store (store/postgres/cohorts.ts) with two nodes on one database, beyond
 * what the cohorts API suites show: uploads of both nodes to one static cohort at once leave a
 * membership whose `count` matches it, a calculation replaces the membership whole, a deleted
 * person leaves every cohort, and only one node at a time runs the scheduled round.
 * Runs only when the cluster tests are on (test/helpers/cluster.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PostgresMetaStore } from '../../src/store/postgres/meta-store.js';
import { clusterPostgresUrl } from '../helpers/cluster.js';
import { admin, databaseFor } from '../helpers/postgres-databases.js';
import { newTempDir } from '../helpers/server.js';

const clusterUrl = clusterPostgresUrl();
const skip = clusterUrl === null ? 'the cluster tests are off (test/helpers/cluster.ts)' : false;

const PERSONS = 300;
const uuidOf = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const STATIC = { name: 's', description: '', filters: {}, is_static: true, deleted: false };

describe('cohorts shared by two nodes', { skip }, () => {
  let url: string;
  let a: PostgresMetaStore;
  let b: PostgresMetaStore;
  let projectId: number;

  before(async () => {
    url = await databaseFor(clusterUrl!, newTempDir());
    a = await PostgresMetaStore.open({ url, node: 'a', maxConnections: 4 });
    b = await PostgresMetaStore.open({ url, node: 'b', maxConnections: 4 });
    const organization = await a.tenancy.createOrganization('cohorts');
    projectId = (await a.tenancy.createProject({ organizationId: organization.id, name: 'p', apiToken: 'phc_cohorts' })).id;
    await admin(url, async (client) => {
      await client.query(
        `INSERT INTO persons (project_id, uuid, properties, is_identified, created_at, version)
         SELECT $1, u, '{}', false, '2026-01-01T00:00:00.000Z', 0 FROM unnest($2::text[]) AS u`,
        [projectId, Array.from({ length: PERSONS }, (_, i) => uuidOf(i))],
      );
    });
  });
  after(async () => {
    await a?.close();
    await b?.close();
  });

  test('uploads from both nodes at once: every known person in, unknown ones out, count matching', async () => {
    const cohort = await a.cohorts.create(projectId, null, STATIC, [uuidOf(0)]);
    assert.equal(cohort.count, 1);
    const batches = Array.from({ length: 10 }, (_, n) => [...Array.from({ length: 30 }, (_, i) => uuidOf(n * 30 + i)), `missing-${n}`]);
    await Promise.all(batches.map((batch, n) => (n % 2 === 0 ? a : b).cohorts.addMembers(projectId, cohort.id, batch)));
    const members = await b.cohorts.memberSet(projectId, cohort.id);
    assert.equal(members.size, PERSONS);
    assert.equal((await a.cohorts.get(projectId, cohort.id))!.count, PERSONS);
    const page = await a.cohorts.members(projectId, cohort.id, { limit: 5, offset: 10 });
    assert.deepEqual(page, { count: PERSONS, results: [10, 11, 12, 13, 14].map(uuidOf) });
    assert.equal(await b.cohorts.removeMember(projectId, cohort.id, uuidOf(3)), true);
    assert.equal(await b.cohorts.removeMember(projectId, cohort.id, uuidOf(3)), false);
    assert.equal((await a.cohorts.get(projectId, cohort.id))!.count, PERSONS - 1);
  });

  test('a calculation replaces the membership whole, unless the definition moved on', async () => {
    const dynamic = await a.cohorts.create(projectId, null, { ...STATIC, name: 'd', is_static: false, filters: { properties: { type: 'AND', values: [] } } });
    const version = (await a.cohorts.startCalculation(projectId, dynamic.id))!;
    assert.equal(await b.cohorts.finishCalculation(projectId, dynamic.id, version, [uuidOf(1), uuidOf(2), 'gone']), true);
    assert.deepEqual([...(await a.cohorts.memberSet(projectId, dynamic.id))].sort(), [uuidOf(1), uuidOf(2)]);
    assert.equal((await a.cohorts.startCalculation(projectId, dynamic.id))!, version);
    await b.cohorts.update(projectId, dynamic.id, { filters: { properties: { type: 'OR', values: [] } } });
    assert.equal(await a.cohorts.finishCalculation(projectId, dynamic.id, version, [uuidOf(5)]), false);
    const after = (await a.cohorts.get(projectId, dynamic.id))!;
    assert.equal(after.count, 2);
    assert.equal(after.is_calculating, false);
    assert.deepEqual((await b.flags.cohortDefinitions(projectId)).map((c) => c.id), [(await a.cohorts.list(projectId))[0].id, dynamic.id]);
  });

  test('a deleted person leaves every cohort', async () => {
    const before = await a.cohorts.cohortsOf(projectId, uuidOf(1));
    assert.equal(before.length, 2);
    await b.persons.delete({ projectId, uuids: [uuidOf(1)], deleteEvents: false, afterFlushSeq: 0, userId: null });
    assert.deepEqual(await a.cohorts.cohortsOf(projectId, uuidOf(1)), []);
  });

  test('one node at a time runs the scheduled round; the other skips it', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = a.cohorts.asScheduler(async () => {
      await held;
      return 'a';
    });
    // Let node a take the lock before b tries.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(await b.cohorts.asScheduler(async () => 'b'), null);
    release();
    assert.equal(await first, 'a');
    assert.equal(await b.cohorts.asScheduler(async () => 'b'), 'b');
  });
});
