/**
 * The PostgreSQL persons, groups and dashboards stores (store/postgres/) beyond what the API
 * suites show: the persons list against a plain-JS reference (fast-check, both of its plans, with
 * and without property filters), migrations 3 and 4 on persons already stored (integer ids, the
 * search's trigram indexes), two nodes placing tiles on one dashboard at once, and each node
 * resuming only its own deletions, and a flush planned on a person the other node changed since.
 * Runs only when the cluster tests are on (test/helpers/cluster.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { JsonObject } from '../../src/kernel/json.js';
import { PostgresMetaStore } from '../../src/store/postgres/meta-store.js';
import { migrations } from '../../src/store/postgres/migrations.js';
import { DefinitionCache } from '../../src/ingestion/plan/definitions.js';
import { plan, snapshotRequest, type PendingEvent } from '../../src/ingestion/plan/plan.js';
import { PersonsChangedError } from '../../src/store/errors.js';
import { clusterPostgresUrl } from '../helpers/cluster.js';
import { incoming } from '../helpers/plan-fixtures.js';
import { admin, databaseFor } from '../helpers/postgres-databases.js';
import { newTempDir } from '../helpers/server.js';

const clusterUrl = clusterPostgresUrl();
const skip = clusterUrl === null ? 'the cluster tests are off (test/helpers/cluster.ts)' : false;

const open = (url: string, node: string) => PostgresMetaStore.open({ url, node, maxConnections: 4 });

interface Person {
  uuid: string;
  properties: JsonObject;
  created_at: string;
  distinctId: string;
}

describe('the persons list', { skip }, () => {
  const PERSONS = 400;
  const people: Person[] = [];
  let store: PostgresMetaStore;

  before(async () => {
    const url = await databaseFor(clusterUrl!, newTempDir());
    store = await open(url, 'list');
    const words = ['Ann', 'bob', 'CARL', 'dee', 'Anna_Lee', '50%off', 'x"y', 'zoë'];
    for (let i = 0; i < PERSONS; i++) {
      const email = i % 7 === 0 ? undefined : `${words[i % words.length]}${i}@Example${i % 3}.com`;
      const name = i % 5 === 0 ? undefined : `${words[(i * 3) % words.length]} ${i}`;
      people.push({
        uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        properties: { ...(email && { email }), ...(name && { name }), other: words[i % 3] },
        // Several persons share a created_at: the uuid decides among them.
        created_at: new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 3) * 1000).toISOString(),
        distinctId: `d-${i}`,
      });
    }
    await admin(url, async (client) => {
      await client.query(
        `INSERT INTO persons (project_id, uuid, properties, is_identified, created_at, version)
         SELECT 1, u, p, false, c, 0 FROM unnest($1::text[], $2::json[], $3::text[]) AS x(u, p, c)`,
        [people.map((p) => p.uuid), people.map((p) => JSON.stringify(p.properties)), people.map((p) => p.created_at)],
      );
      await client.query('INSERT INTO person_distinct_ids SELECT 1, d, u FROM unnest($1::text[], $2::text[]) AS x(d, u)', [
        people.map((p) => p.distinctId),
        people.map((p) => p.uuid),
      ]);
    });
  });
  after(async () => {
    await store?.close();
  });

  /** The page the API must show: matches newest first (then by uuid, descending), lower() folding every script. */
  function reference(search: string | null, other: string | null, limit: number, offset: number): string[] {
    const contains = (value: unknown) => typeof value === 'string' && search !== null && value.toLowerCase().includes(search.toLowerCase());
    return people
      .filter((p) => search === null || contains(p.properties.email) || contains(p.properties.name) || p.distinctId === search)
      .filter((p) => other === null || p.properties.other === other)
      .sort((a, b) => (a.created_at === b.created_at ? (a.uuid < b.uuid ? 1 : -1) : a.created_at < b.created_at ? 1 : -1))
      .slice(offset, offset + limit)
      .map((p) => p.uuid);
  }

  test('search and property-filter pages agree with the reference', async () => {
    const searches = fc.oneof(
      fc.constantFrom('ann', 'ANN', 'example', 'Example1', '@', 'lee', 'a_l', '50%', '%', '_', 'x"y', 'zoë', 'ZOË', 'd-17', 'd-1', 'nobody', ' ', 'carl 4'),
      fc.string({ minLength: 1, maxLength: 3 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.option(searches, { nil: null }),
        fc.option(fc.constantFrom('Ann', 'bob', 'CARL'), { nil: null }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 0, max: 60 }),
        async (search, other, limit, offset) => {
          const matches = other === null ? null : (properties: JsonObject) => properties.other === other;
          const page = await store.persons.list({ projectId: 1, distinctId: null, email: null, search, matches, limit, offset });
          const expected = reference(search, other, limit + 1, offset);
          const label = `search ${JSON.stringify(search)} other ${other} limit ${limit} offset ${offset}`;
          assert.deepEqual(page.results.map((p) => p.uuid), expected.slice(0, limit), label);
          assert.equal(page.more, expected.length > limit, label);
        },
      ),
      { numRuns: 200 },
    );
  });

  test('distinct_id and email filters, alone and with a search; ids and uuids resolve alike', async () => {
    const list = (q: { distinctId?: string; email?: string; search?: string }) =>
      store.persons.list({ projectId: 1, distinctId: q.distinctId ?? null, email: q.email ?? null, search: q.search ?? null, matches: null, limit: 10, offset: 0 });
    assert.deepEqual((await list({ distinctId: 'd-23' })).results.map((p) => p.uuid), [people[23].uuid]);
    const email = people[22].properties.email as string;
    assert.deepEqual((await list({ email })).results.map((p) => p.uuid), [people[22].uuid]);
    assert.deepEqual((await list({ email: email.toUpperCase() })).results, [], 'email is exact');
    assert.deepEqual((await list({ distinctId: 'd-23', search: 'nobody' })).results, []);
    const person = (await list({ distinctId: 'd-23' })).results[0];
    assert.equal(person.distinct_ids[0], 'd-23');
    assert.deepEqual(await store.persons.resolve(1, [person.id, people[5].uuid, 2 ** 60, 'nobody']), [people[5].uuid, person.uuid].sort());
    assert.equal((await store.persons.get(1, person.id))?.uuid, person.uuid);
    assert.equal(await store.persons.get(2, person.id), null, "another project's person");
  });
});

describe('migrations 3 and 4 on a database that has persons', { skip }, () => {
  test('every person stored before it gets an integer id of its own', async () => {
    const url = await databaseFor(clusterUrl!, newTempDir());
    await admin(url, async (client) => {
      await client.query('CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)');
      for (const migration of migrations.filter((m) => m.version <= 2)) {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations VALUES ($1, $2, $3)', [migration.version, migration.name, new Date().toISOString()]);
      }
      await client.query(
        "INSERT INTO persons (project_id, uuid, properties, created_at) SELECT 1, 'p' || i, '{}', '2026-01-01T00:00:00.000Z' FROM generate_series(1, 50) AS i",
      );
    });
    assert.deepEqual(await PostgresMetaStore.migrate(url), migrations.filter((m) => m.version > 2).map((m) => m.version));
    const store = await open(url, 'migrated');
    try {
      const page = await store.persons.list({ projectId: 1, distinctId: null, email: null, search: null, matches: null, limit: 100, offset: 0 });
      const ids = page.results.map((p) => p.id);
      assert.equal(ids.length, 50);
      assert.equal(new Set(ids).size, 50);
      for (const person of page.results) assert.equal((await store.persons.get(1, person.id))?.uuid, person.uuid);
      const indexes = await admin(url, async (client) => (await client.query("SELECT indexname FROM pg_indexes WHERE tablename = 'persons' AND indexname LIKE '%trigrams' ORDER BY 1")).rows);
      assert.deepEqual(indexes.map((row) => row.indexname), ['persons_email_trigrams', 'persons_name_trigrams'], 'the search has its trigram indexes (pg_trgm)');
    } finally {
      await store.close();
    }
  });
});

describe('two nodes on one database', { skip }, () => {
  let url: string;
  let a: PostgresMetaStore;
  let b: PostgresMetaStore;
  let projectId: number;
  let userId: number;

  before(async () => {
    url = await databaseFor(clusterUrl!, newTempDir());
    a = await open(url, 'node-a');
    b = await open(url, 'node-b');
    const organization = await a.tenancy.createOrganization('nodes');
    userId = (await a.tenancy.createUser({ email: 'nodes@example.test' })).id;
    projectId = (await a.tenancy.createProject({ organizationId: organization.id, name: 'p', apiToken: 'phc_nodes' })).id;
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  test('tiles placed at once from both nodes never share a slot', async () => {
    const dashboard = await a.dashboards.createDashboard(projectId, userId, { name: 'd', description: '', pinned: false, filters: {}, tags: [], deleted: false });
    const insights = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        a.dashboards.createInsight(projectId, userId, { name: `i${i}`, description: '', query: { kind: 'TrendsQuery' }, favorited: false, tags: [], deleted: false }),
      ),
    );
    await Promise.all(insights.map((insight, i) => (i % 2 ? a : b).dashboards.placeTile(dashboard.id, insight.id)));
    const slots = (await a.dashboards.tilesOfDashboard(dashboard.id)).map((tile) => tile.layouts.sm);
    assert.equal(slots.length, 12);
    for (let i = 0; i < slots.length; i++) {
      for (let j = i + 1; j < slots.length; j++) {
        const [s, t] = [slots[i], slots[j]];
        const apart = s.x + s.w <= t.x || t.x + t.w <= s.x || s.y + s.h <= t.y || t.y + t.h <= s.y;
        assert.ok(apart, `tiles ${i} and ${j} overlap: ${JSON.stringify([s, t])}`);
      }
    }
  });

  test("a node resumes its own open deletions, not another node's (their flush sequences are that node's)", async () => {
    await admin(url, async (client) => {
      await client.query("INSERT INTO persons (project_id, uuid, properties, created_at) VALUES ($1, 'gone-a', '{}', 't'), ($1, 'gone-b', '{}', 't')", [projectId]);
      await client.query("INSERT INTO person_distinct_ids VALUES ($1, 'da', 'gone-a'), ($1, 'db', 'gone-b')", [projectId]);
    });
    const [byA] = await a.persons.delete({ projectId, uuids: ['gone-a'], deleteEvents: true, afterFlushSeq: 7, userId });
    const [byB] = await b.persons.delete({ projectId, uuids: ['gone-b'], deleteEvents: false, afterFlushSeq: 3, userId });
    assert.deepEqual(byA.distinct_ids, ['da']);
    assert.deepEqual((await a.persons.openDeletions()).map((d) => d.id), [byA.id]);
    assert.deepEqual((await b.persons.openDeletions()).map((d) => d.id), [byB.id]);
    await a.persons.finishDeletion(byA.id, new Date().toISOString());
    assert.deepEqual((await a.persons.deletion(projectId, byA.id))?.distinct_ids, [], 'a finished deletion keeps no distinct ids');
    assert.deepEqual((await a.persons.unpurgedDeletions()).map((d) => d.id), [byA.id]);
    assert.deepEqual(await b.persons.unpurgedDeletions(), []);
    const log = await b.persons.activity(projectId, 'Person', 'gone-a', 10, 0);
    assert.equal(log.count, 1);
    assert.equal(log.results[0].activity, 'deleted');
    assert.equal(await a.persons.get(projectId, 'gone-a'), null);
  });

  test('a flush planned on a person the other node changed since is refused whole; planned again, it keeps both changes', async () => {
    const flushOf = async (store: PostgresMetaStore, events: PendingEvent['event'][], seq: number) => {
      const batch = events.map((event) => ({ projectId, anonymizeIps: false, event }));
      const request = snapshotRequest(batch);
      const snapshot = await store.ingest.loadSnapshot(request);
      const read = snapshot.personsRead;
      const planned = plan(batch, snapshot, seq, { definitions: new DefinitionCache(), now: new Date() });
      return () => store.ingest.applyChanges({ ...planned.changes, personsRead: read });
    };
    const personOf = async (distinctId: string) => (await a.ingest.personsOf(projectId, [distinctId])).get(distinctId)?.person;
    await (await flushOf(a, [incoming('$pageview', 'anon-1')], 1))();

    // Both planned from the same state: node A merges the anonymous id into a user, node B sets a property on it.
    const identify = await flushOf(a, [incoming('$identify', 'user-1', { $anon_distinct_id: 'anon-1', $set: { email: 'u@example.test' } })], 2);
    const setOnAnon = await flushOf(b, [incoming('$pageview', 'anon-1', { $set_once: { first_visit: 'yes' } })], 1);
    await identify();
    await assert.rejects(setOnAnon(), PersonsChangedError);
    const merged = await personOf('anon-1');
    assert.equal(merged?.is_identified, true, 'the refused flush wrote nothing over the merge');

    await (await flushOf(b, [incoming('$pageview', 'anon-1', { $set_once: { first_visit: 'yes' } })], 2))();
    const after = await personOf('user-1');
    assert.equal(after?.uuid, merged?.uuid);
    assert.equal(after?.is_identified, true);
    assert.deepEqual([after?.properties.email, after?.properties.first_visit], ['u@example.test', 'yes']);
  });
});
