/**
 * The persons list's search (store/sqlite/persons.ts) against a reference written in plain JS:
 * all of its plans (the newest persons' window, the trigram index, the whole table) must give
 * the page the reference gives, for searches that match many, few or no persons, at any page
 * and offset, also after persons changed their email or name or were deleted. The `veteran`
 * persons are the oldest and many: their search reads the index newest first (keys in the list
 * order, store/sqlite/person-search-keys.ts), also across persons of one millisecond, texts that
 * are no canonical timestamp, and a created_at moved earlier (a merge).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { SqliteMetaStore } from '../../../src/store/sqlite/meta-store.js';

const PERSONS = 400;
const VETERANS = 300;
let dir: string;
let store: SqliteMetaStore;
const people: { uuid: string; email: string | undefined; name: string | undefined; created_at: string; distinctId: string }[] = [];

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'person-search-'));
  store = SqliteMetaStore.open(dir);
  const insert = store.db.prepare('INSERT INTO persons VALUES (1, ?, ?, 0, ?, 0)');
  const id = store.db.prepare('INSERT INTO person_ids (project_id, uuid) VALUES (1, ?)');
  const distinct = store.db.prepare('INSERT INTO person_distinct_ids VALUES (1, ?, ?)');
  const words = ['Ann', 'bob', 'CARL', 'dee', 'Anna_Lee', '50%off', 'x"y', 'zoë'];
  store.db.transaction(() => {
    for (let i = 0; i < PERSONS; i++) {
      const uuid = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      const email = i % 7 === 0 ? undefined : `${words[i % words.length]}${i}@Example${i % 3}.com`;
      const name = i % 5 === 0 ? undefined : `${words[(i * 3) % words.length]} ${i}`;
      // Several persons share a created_at: the uuid decides among them.
      const created_at = new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 3) * 1000).toISOString();
      insert.run(uuid, JSON.stringify({ ...(email && { email }), ...(name && { name }), other: words[i % 3] }), created_at);
      id.run(uuid);
      distinct.run(`d-${i}`, uuid);
      people.push({ uuid, email, name, created_at, distinctId: `d-${i}` });
    }
    for (let j = 0; j < VETERANS; j++) {
      // Not in insertion order: the slots of a millisecond are not in uuid order.
      const uuid = `00000000-0000-4000-9000-${String((j * 7919) % 1009).padStart(12, "0")}`;
      const name = `Veteran ${j}`;
      // Four a millisecond; a few texts that are no canonical timestamp, or before 1970 (none of them `eteran 1`).
      const odd = j >= 250 ? ['2025-06-01 00:00:00', '+010000-01-01T00:00:00.000Z', '1969-12-31T23:59:59.000Z', 'soon'][j - 250] : undefined;
      const created_at = odd ?? new Date(Date.UTC(2025, 5, 1) + Math.floor(j / 4)).toISOString();
      insert.run(uuid, JSON.stringify({ name }), created_at);
      id.run(uuid);
      distinct.run(`v-${j}`, uuid);
      people.push({ uuid, email: undefined, name, created_at, distinctId: `v-${j}` });
    }
  })();
});
after(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function reference(search: string, limit: number, offset: number): string[] {
  const needle = search;
  const contains = (value: string | undefined) => value !== undefined && lowerAscii(value).includes(lowerAscii(needle));
  return people
    .filter((p) => contains(p.email) || contains(p.name) || p.distinctId === search)
    .sort((a, b) => (a.created_at === b.created_at ? (a.uuid < b.uuid ? 1 : -1) : a.created_at < b.created_at ? 1 : -1))
    .slice(offset, offset + limit)
    .map((p) => p.uuid);
}

/** SQLite's lower() folds ASCII letters only: the search is case-insensitive for ASCII (documented). */
const lowerAscii = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** Counts the searches that read the index newest first (the plan of many hits, none among the newest). */
function countNewestFirstReads(): { calls: number } {
  const counter = { calls: 0 };
  const persons = store.persons as unknown as { newestHits: (...args: unknown[]) => unknown };
  const original = persons.newestHits.bind(persons);
  persons.newestHits = (...args: unknown[]) => {
    counter.calls += 1;
    return original(...args);
  };
  return counter;
}

async function agreesWithReference(search: string, limit: number, offset: number): Promise<void> {
  const page = await store.persons.list({ projectId: 1, distinctId: null, email: null, search, matches: null, limit, offset });
  const expected = reference(search, limit + 1, offset);
  assert.deepEqual(page.results.map((p) => p.uuid), expected.slice(0, limit), `search ${JSON.stringify(search)} limit ${limit} offset ${offset}`);
  assert.equal(page.more, expected.length > limit);
}

test('a search many old persons match reads the index newest first, and pages agree with the reference', async () => {
  const reads = countNewestFirstReads();
  for (const search of ['veteran', 'VETERAN 1', 'eteran 1', 'eteran 2']) {
    for (let limit = 1; limit <= 12; limit += 1) {
      for (let offset = 0; offset <= 290; offset += limit * 7 + 3) await agreesWithReference(search, limit, offset);
    }
  }
  assert.ok(reads.calls > 20, `the newest-first plan ran ${reads.calls} times`);
  // The person whose distinct id is the search comes with the index's hits.
  await agreesWithReference('v-123', 5, 0);
});

test('a created_at moved earlier or later (a merge) moves the person in the search', async () => {
  const moved = people.find((p) => p.name === 'Veteran 101')!;
  for (const created_at of ['2025-05-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z', 'not a time']) {
    store.db.prepare('UPDATE persons SET created_at = ? WHERE project_id = 1 AND uuid = ?').run(created_at, moved.uuid);
    moved.created_at = created_at;
    for (const [limit, offset] of [[1, 0], [3, 0], [5, 10], [2, 296]]) {
      await agreesWithReference('veteran', limit, offset);
      await agreesWithReference('eteran 1', limit, offset);
    }
  }
  const keys = store.db.prepare('SELECT count(*) AS n FROM person_search_keys WHERE project_id = 1 AND uuid = ?').get(moved.uuid) as { n: number };
  assert.equal(keys.n, 1, 'one key for the moved person');
});

test('distinct_id and email filters agree with the reference, alone and with a search', async () => {
  const byDistinct = (await store.persons.list({ projectId: 1, distinctId: 'd-23', email: null, search: null, matches: null, limit: 10, offset: 0 })).results;
  assert.deepEqual(byDistinct.map((p) => p.uuid), [people[23].uuid]);
  const email = people[22].email!;
  const byEmail = (await store.persons.list({ projectId: 1, distinctId: null, email, search: null, matches: null, limit: 10, offset: 0 })).results;
  assert.deepEqual(byEmail.map((p) => p.uuid), [people[22].uuid]);
  assert.deepEqual((await store.persons.list({ projectId: 1, distinctId: null, email: email.toUpperCase(), search: null, matches: null, limit: 10, offset: 0 })).results, [], 'email is exact');
  const both = await store.persons.list({ projectId: 1, distinctId: 'd-23', email: null, search: 'nobody', matches: null, limit: 10, offset: 0 });
  assert.deepEqual(both.results, []);
  const matching = await store.persons.list({ projectId: 1, distinctId: 'd-23', email: null, search: people[23].email!.slice(0, 3), matches: null, limit: 10, offset: 0 });
  assert.deepEqual(matching.results.map((p) => p.uuid), [people[23].uuid]);
});

test('the trigram index follows changed emails and names and deleted persons', async () => {
  const search = (text: string) => store.persons.list({ projectId: 1, distinctId: null, email: null, search: text, matches: null, limit: 10, offset: 0 });
  const renamed = people[40];
  store.db.prepare('UPDATE persons SET properties = ? WHERE project_id = 1 AND uuid = ?').run(JSON.stringify({ email: 'Quentin@Rare.example', name: 'Q Rarename' }), renamed.uuid);
  const gone = people[41];
  store.db.prepare('DELETE FROM person_ids WHERE project_id = 1 AND uuid = ?').run(gone.uuid);
  store.db.prepare('DELETE FROM persons WHERE project_id = 1 AND uuid = ?').run(gone.uuid);
  assert.deepEqual((await search('quentin@rare')).results.map((p) => p.uuid), [renamed.uuid], 'the new email is found');
  assert.deepEqual((await search('rarename')).results.map((p) => p.uuid), [renamed.uuid], 'the new name is found');
  assert.deepEqual((await search(renamed.email!)).results, [], 'the old email is gone');
  assert.deepEqual((await search(gone.email!)).results, [], 'a deleted person is gone');
  const indexed = store.db.prepare("SELECT count(*) AS n FROM persons_search WHERE persons_search MATCH '\"rarename\"'").get() as { n: number };
  assert.equal(indexed.n, 1, 'one row in the index for the renamed person');
  renamed.email = 'Quentin@Rare.example';
  renamed.name = 'Q Rarename';
  people.splice(people.indexOf(gone), 1);
});

test('search pages agree with the reference (after those changes)', async () => {
  const searches = fc.oneof(
    fc.constantFrom('ann', 'ANN', 'example', 'Example1', '@', 'lee', 'a_l', '50%', '%', '_', 'x"y', 'zoë', 'ZOË', 'd-17', 'd-1', 'nobody', ' ', 'carl 4', 'veteran', 'eran 1', 'v-7'),
    fc.string({ minLength: 1, maxLength: 3 }),
  );
  await fc.assert(
    fc.asyncProperty(searches, fc.integer({ min: 1, max: 30 }), fc.integer({ min: 0, max: 60 }), async (search, limit, offset) => {
      const page = await store.persons.list({ projectId: 1, distinctId: null, email: null, search, matches: null, limit, offset });
      const expected = reference(search, limit + 1, offset);
      assert.deepEqual(page.results.map((p) => p.uuid), expected.slice(0, limit), `search ${JSON.stringify(search)} limit ${limit} offset ${offset}`);
      assert.equal(page.more, expected.length > limit);
    }),
    { numRuns: 300 },
  );
});
