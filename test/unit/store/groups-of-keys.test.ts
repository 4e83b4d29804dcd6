/**
 * GroupStore.ofKeys (the groups an ActorsQuery of groups shows) in both metadata stores: the
 * groups of one type and project among the keys, whatever characters the keys hold, none for
 * keys without a group, and no other project's or type's. PostgreSQL runs on a private server
 * of the test's own (skipped where PostgreSQL 15 is not installed).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { SqliteMetaStore } from '../../../src/store/sqlite/meta-store.js';
import { PostgresMetaStore } from '../../../src/store/postgres/meta-store.js';
import type { GroupStore } from '../../../src/store/types.js';
import { PrivatePostgres } from '../../helpers/private-postgres.js';
import { admin } from '../../helpers/postgres-databases.js';

const KEYS = ['acme', "o'brien & co", 'üñí', '%', 'a,b', '["x"]'];
/** project, type index, key, properties: the rows every store gets. */
const ROWS: [number, number, string, Record<string, unknown>][] = [
  ...KEYS.map((key, i): [number, number, string, Record<string, unknown>] => [1, 0, key, { n: i }]),
  [2, 0, 'acme', { other: 'project' }],
  [1, 1, 'acme', { other: 'type' }],
];

async function checkOfKeys(groups: GroupStore): Promise<void> {
  const found = await groups.ofKeys(1, 0, [...KEYS, 'missing']);
  assert.deepEqual(found.map((g) => g.group_key).sort(), [...KEYS].sort());
  const acme = found.find((g) => g.group_key === 'acme')!;
  assert.deepEqual(acme.properties, { n: 0 });
  assert.equal(acme.group_type_index, 0);
  assert.equal(acme.created_at, '2025-01-01T00:00:00.000Z');
  assert.deepEqual(await groups.ofKeys(1, 0, []), []);
  assert.deepEqual((await groups.ofKeys(2, 0, ['acme', "o'brien & co"])).map((g) => g.properties), [{ other: 'project' }]);
  assert.deepEqual((await groups.ofKeys(1, 1, KEYS)).map((g) => g.properties), [{ other: 'type' }]);
}

test('SQLite: ofKeys reads the groups of one type among the keys', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'groups-of-keys-'));
  const store = SqliteMetaStore.open(dir);
  try {
    const insert = store.db.prepare('INSERT INTO groups (project_id, group_type_index, group_key, properties, created_at) VALUES (?, ?, ?, ?, ?)');
    for (const [project, index, key, properties] of ROWS) insert.run(project, index, key, JSON.stringify(properties), '2025-01-01T00:00:00.000Z');
    await checkOfKeys(store.groups);
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

describe('PostgreSQL', { skip: !fs.existsSync('/usr/lib/postgresql/15/bin/initdb') && 'PostgreSQL 15 is not installed' }, () => {
  let server: PrivatePostgres | undefined;
  after(async () => {
    await server?.dispose();
  });

  test('ofKeys reads the groups of one type among the keys', { timeout: 120_000 }, async () => {
    server = await PrivatePostgres.create();
    const store = await PostgresMetaStore.open({ url: server.url, node: 'test', maxConnections: 2 });
    try {
      await admin(server.url, async (client) => {
        for (const [project, index, key, properties] of ROWS) {
          await client.query('INSERT INTO groups (project_id, group_type_index, group_key, properties, created_at) VALUES ($1, $2, $3, $4, $5)', [project, index, key, JSON.stringify(properties), '2025-01-01T00:00:00.000Z']);
        }
      });
      await checkOfKeys(store.groups);
    } finally {
      await store.close();
    }
  });
});
