/**
 * The SQLite store's idle release (store/sqlite/meta-store.ts): its page cache is given back and
 * filled again by the next reads, which see what they saw before; a release while a statement
 * is iterating (an export between two awaits) is skipped, not thrown, and the iteration goes on.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { SqliteMetaStore } from '../../../src/store/sqlite/meta-store.js';

let dir: string;
let store: SqliteMetaStore;
const ROWS = 2_000;

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idle-memory-'));
  store = SqliteMetaStore.open(dir);
  const insert = store.db.prepare('INSERT INTO persons VALUES (1, ?, ?, 0, ?, 0)');
  store.db.transaction(() => {
    for (let i = 0; i < ROWS; i++) {
      insert.run(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, JSON.stringify({ i, pad: 'x'.repeat(500) }), new Date(Date.UTC(2026, 0, 1) + i).toISOString());
    }
  })();
});

after(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const sumOfI = () =>
  (store.db.prepare("SELECT sum(json_extract(properties, '$.i')) AS s FROM persons WHERE project_id = 1").get() as { s: number }).s;

test('reads after a release see what they saw before it', () => {
  const before = sumOfI();
  assert.equal(before, (ROWS * (ROWS - 1)) / 2);
  store.releaseIdleMemory();
  assert.equal(sumOfI(), before);
  store.releaseIdleMemory();
  store.releaseIdleMemory();
  assert.equal(sumOfI(), before);
});

test('a release while a statement iterates is skipped and the iteration finishes', () => {
  const rows = store.db.prepare('SELECT uuid FROM persons WHERE project_id = 1 ORDER BY uuid').iterate() as IterableIterator<{ uuid: string }>;
  let count = 0;
  for (const _ of rows) {
    if (count++ === 10) assert.doesNotThrow(() => store.releaseIdleMemory());
  }
  assert.equal(count, ROWS);
});

test('a closed store is left alone', async () => {
  const other = SqliteMetaStore.open(fs.mkdtempSync(path.join(os.tmpdir(), 'idle-memory-closed-')));
  await other.close();
  assert.doesNotThrow(() => other.releaseIdleMemory());
});
