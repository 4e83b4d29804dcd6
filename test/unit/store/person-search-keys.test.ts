/**
 * The persons search index's keys (store/sqlite/person-search-keys.ts): persons indexed before
 * migration 9 keep being found, in the list's order, after it; and more persons in one
 * millisecond than it has slots still give the reference's pages.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { DatabaseSync, enhance } from '@photostructure/sqlite';
import { SLOTS } from '../../../src/store/sqlite/person-search-keys.js';
import { migrations } from '../../../src/store/sqlite/migrations.js';
import { SqliteMetaStore } from '../../../src/store/sqlite/meta-store.js';
import type { Sqlite } from '../../../src/store/sqlite/database.js';

interface Person {
  uuid: string;
  name: string;
  created_at: string;
}

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function newDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'person-search-keys-'));
  dirs.push(dir);
  return dir;
}

function insertPersons(db: Sqlite, persons: Person[]): void {
  const insert = db.prepare('INSERT INTO persons VALUES (1, ?, ?, 0, ?, 0)');
  const id = db.prepare('INSERT INTO person_ids (project_id, uuid) VALUES (1, ?)');
  db.transaction(() => {
    for (const p of persons) {
      insert.run(p.uuid, JSON.stringify({ name: p.name }), p.created_at);
      id.run(p.uuid);
    }
  })();
}

/** The list's order: created_at, then uuid, newest first. */
const newestFirst = (a: Person, b: Person) => (a.created_at === b.created_at ? (a.uuid < b.uuid ? 1 : -1) : a.created_at < b.created_at ? 1 : -1);

async function assertPages(store: SqliteMetaStore, persons: Person[], search: string, pages: [number, number][]): Promise<void> {
  const expected = persons.filter((p) => p.name.toLowerCase().includes(search)).sort(newestFirst);
  for (const [limit, offset] of pages) {
    const page = await store.persons.list({ projectId: 1, distinctId: null, email: null, search, matches: null, limit, offset });
    assert.deepEqual(page.results.map((p) => p.uuid), expected.slice(offset, offset + limit).map((p) => p.uuid), `${search} limit ${limit} offset ${offset}`);
    assert.equal(page.more, expected.length > offset + limit);
  }
}

const uuidOf = (prefix: number, n: number) => `00000000-0000-4000-${prefix}000-${String((n * 7919) % 99_991).padStart(12, '0')}`;

test('persons indexed before migration 9 are found in the list order after it', async () => {
  const dir = newDir();
  const old = enhance(new DatabaseSync(path.join(dir, 'meta.sqlite')));
  old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  for (const migration of migrations.filter((m) => m.version < 9)) {
    old.exec(migration.sql);
    old.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(migration.version, migration.name, new Date().toISOString());
  }
  // Old persons that a search matches (some in one millisecond, one not a canonical timestamp), then newer ones it does not.
  const persons: Person[] = [];
  for (let n = 0; n < 300; n++) persons.push({ uuid: uuidOf(8, n), name: `Pioneer ${n}`, created_at: n === 17 ? 'yesterday' : new Date(Date.UTC(2025, 0, 1) + Math.floor(n / 3)).toISOString() });
  for (let n = 0; n < 200; n++) persons.push({ uuid: uuidOf(9, n), name: `Newcomer ${n}`, created_at: new Date(Date.UTC(2026, 0, 1) + n).toISOString() });
  insertPersons(old, persons);
  old.close();

  const store = SqliteMetaStore.open(dir);
  try {
    await assertPages(store, persons, 'pioneer', [[1, 0], [2, 5], [10, 0], [10, 30], [7, 290], [100, 200]]);
    await assertPages(store, persons, 'newcomer', [[10, 0], [10, 195]]);
    // Persons added after the migration get keys from the triggers, in the same order.
    const later: Person[] = Array.from({ length: 50 }, (_, n) => ({ uuid: uuidOf(7, n), name: `Pioneer late ${n}`, created_at: new Date(Date.UTC(2025, 0, 1) + n).toISOString() }));
    insertPersons(store.db, later);
    await assertPages(store, [...persons, ...later], 'pioneer', [[1, 0], [3, 0], [10, 40], [5, 345]]);
  } finally {
    await store.close();
  }
});

test('more persons in one millisecond than it has slots: the rest are read by every search, pages stay right', async () => {
  const dir = newDir();
  const store = SqliteMetaStore.open(dir);
  try {
    const crowd: Person[] = Array.from({ length: SLOTS + 40 }, (_, n) => ({ uuid: uuidOf(8, n), name: `Crowd ${n}`, created_at: '2025-03-01T12:00:00.000Z' }));
    const older: Person[] = Array.from({ length: 30 }, (_, n) => ({ uuid: uuidOf(7, n), name: `Crowd old ${n}`, created_at: new Date(Date.UTC(2025, 0, 1) + n).toISOString() }));
    const newer: Person[] = Array.from({ length: 300 }, (_, n) => ({ uuid: uuidOf(9, n), name: `Other ${n}`, created_at: new Date(Date.UTC(2026, 0, 1) + n).toISOString() }));
    const persons = [...older, ...crowd, ...newer];
    insertPersons(store.db, persons);
    const outOfOrder = store.db.prepare('SELECT count(*) AS n FROM person_search_keys WHERE key >= 4611686018427387904').get() as { n: number };
    assert.equal(outOfOrder.n, 40, 'the persons past the slots are keyed out of order');
    await assertPages(store, persons, 'crowd', [[1, 0], [5, 3], [10, SLOTS + 20], [10, SLOTS + 35], [20, SLOTS + 60]]);
  } finally {
    await store.close();
  }
});
