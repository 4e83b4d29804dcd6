/**
 * `sightline export` / `import` between two embedded data folders (docs/export-import.md): every
 * API answer about persons, flags (and /flags answers), cohorts, actions, insights, dashboards,
 * definitions, groups, events and queries is the same on the imported folder; keys and the
 * owner's password work there; new ids follow the imported ones; an import into stores that
 * hold data, and an export over an archive, are refused without writing anything.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { expectOk, ingest } from '../helpers/api-fixtures.js';
import { login, OWNER_EMAIL, OWNER_PASSWORD } from '../helpers/sessions.js';
import { newTempDir, startServer, type TestServer } from '../helpers/server.js';
import { fill, OWNER_ENV, sightline, snapshot } from '../helpers/transfer.js';

// Embedded on both sides, whatever the cluster settings of the run.
const EMBEDDED = { ...OWNER_ENV, SIGHTLINE_POSTGRES_URL: '', SIGHTLINE_CLICKHOUSE_URL: '' };
const servers: TestServer[] = [];
after(async () => {
  for (const server of servers) await server.stop();
});

test('an embedded folder exported and imported into another answers every API request alike', async () => {
  const source = await startServer({ env: EMBEDDED });
  servers.push(source);
  const filled = await fill(source);
  const before = await snapshot(source, filled);
  assertMeaningful(before);
  const archive = path.join(newTempDir(), 'archive');
  const whileRunning = await sightline({ SIGHTLINE_DATA_DIR: source.dataDir }, ['export', '--out', archive]);
  assert.equal(whileRunning.code, 1);
  assert.match(whileRunning.stderr, /^export failed: the data folder .* is in use by a running server: stop it first/);
  assert.equal(await source.stop(), 0);

  const exported = await sightline({ SIGHTLINE_DATA_DIR: source.dataDir }, ['export', '--out', archive]);
  assert.equal(exported.code, 0, exported.stderr);
  const manifest = JSON.parse(fs.readFileSync(path.join(archive, 'manifest.json'), 'utf8'));
  assert.equal(manifest.format, 'sightline-archive');
  assert.equal(manifest.version, 1);
  assert.deepEqual(manifest.source, { metadata: 'sqlite', events: 'duckdb' });
  assert.equal(manifest.events.rows, filled.events + 1, 'every event of both projects');
  assert.equal(manifest.metadata.organizations.rows, 2);
  assert.ok(manifest.metadata.person_deletions.rows >= 1 && manifest.metadata.activity_log.rows >= 1, 'the deletion and its activity');
  assert.ok(manifest.metadata.cohort_people.rows >= 4, 'static and calculated members');
  // Keys and passwords only as hashes.
  const keys = fs.readFileSync(path.join(archive, 'metadata/personal_api_keys.ndjson'), 'utf8');
  assert.ok(!keys.includes(source.personalKey) && !keys.includes(filled.other.ownerKey));
  assert.ok(!fs.readFileSync(path.join(archive, 'metadata/users.ndjson'), 'utf8').includes(OWNER_PASSWORD));

  const again = await sightline({ SIGHTLINE_DATA_DIR: source.dataDir }, ['export', '--out', archive]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /not empty \(it holds an archive\)/);

  // A damaged archive: a missing file is found before anything is written; a bad line midway
  // says that the stores now hold part of it and what to do.
  const damaged = path.join(newTempDir(), 'damaged');
  fs.cpSync(archive, damaged, { recursive: true });
  fs.rmSync(path.join(damaged, 'metadata/cohorts.ndjson'));
  const missing = await sightline({ SIGHTLINE_DATA_DIR: newTempDir() }, ['import', '--from', damaged]);
  assert.equal(missing.code, 1);
  assert.equal(missing.stderr, 'import failed: metadata/cohorts.ndjson is missing from the archive\n');
  fs.cpSync(path.join(archive, 'metadata/cohorts.ndjson'), path.join(damaged, 'metadata/cohorts.ndjson'));
  const eventsFile = path.join(damaged, 'events/events-000001.ndjson');
  const lines = fs.readFileSync(eventsFile, 'utf8').split('\n');
  lines[99] = lines[99].slice(0, 40);
  fs.writeFileSync(eventsFile, lines.join('\n'));
  const halfDir = newTempDir();
  const half = await sightline({ SIGHTLINE_DATA_DIR: halfDir }, ['import', '--from', damaged]);
  assert.equal(half.code, 1);
  assert.match(half.stderr.trim().split('\n').pop()!, /^import failed: could not write the events: events\/events-000001\.ndjson line 100: not JSON .*The stores now hold part of the archive: empty them \(a new data folder;/);
  await assert.rejects(startServer({ dataDir: halfDir, env: EMBEDDED }), /Cannot start: an import into .* did not finish\. Empty the stores/);
  const retried = await sightline({ SIGHTLINE_DATA_DIR: halfDir }, ['import', '--from', archive]);
  assert.equal(retried.code, 1, 'never completed over a half import');
  assert.match(retried.stderr, /not empty/);

  const targetDir = newTempDir();
  const imported = await sightline({ SIGHTLINE_DATA_DIR: targetDir }, ['import', '--from', archive]);
  assert.equal(imported.code, 0, imported.stderr);
  assert.match(imported.stdout, new RegExp(`${filled.events + 1} events`));

  // Its own keys (never bootstrapped: the folder has organizations), the old ones used below.
  const target = await startServer({ dataDir: targetDir, env: EMBEDDED, projectKey: source.projectKey, personalKey: source.personalKey });
  servers.push(target);
  const afterImport = await snapshot(target, filled);
  for (const key of Object.keys(before)) assert.deepEqual(afterImport[key], before[key], key);

  // The owner's password hash came along; new objects get ids after the imported ones.
  assert.equal((await login(target, OWNER_EMAIL, OWNER_PASSWORD)).status, 200);
  const flags = (before.flags as { results: { id: number }[] }).results;
  const created = await expectOk(await target.api('/api/projects/@current/feature_flags/', { method: 'POST', body: { key: 'after-import', filters: { groups: [{ rollout_percentage: 100 }] } } }), 201);
  assert.ok(created.id > Math.max(...flags.map((flag) => flag.id)));
  await ingest(target, [{ event: 'after-import', distinct_id: 'ann' }]);
  const count = await expectOk(await target.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'HogQLQuery', query: 'select count() from events' } } }));
  assert.equal(count.results[0][0], filled.events + 1);
  assert.equal(await target.stop(), 0);

  // Stores that hold data are refused, and left as they were.
  const refused = await sightline({ SIGHTLINE_DATA_DIR: targetDir }, ['import', '--from', archive]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /^import failed: the configured stores are not empty \(organizations: 2, /);
  assert.equal(refused.stderr.trim().split('\n').length, 1, 'one line');
});

test('an import of a directory that is no finished archive says so', async () => {
  const dir = newTempDir();
  const result = await sightline({ SIGHTLINE_DATA_DIR: newTempDir() }, ['import', '--from', dir]);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /manifest\.json cannot be read: it is missing \(an export that did not finish\?\)/);
});

/** The snapshot compared holds data, not empty answers that would match anything. */
export function assertMeaningful(shot: Record<string, any>): void {
  assert.equal(shot.persons.length, 4, 'ann (with anon-1), ben, cat, dan');
  assert.equal(shot.events.length, 246, 'every event of the project (eve was deleted without hers)');
  const total = (series: any[]) => series.reduce((sum, s) => sum + s.data.reduce((a: number, b: number) => a + b, 0), 0);
  assert.ok(total(shot.trends) > 100, 'pageviews and daily purchasers');
  assert.ok(shot.byCohort.every((s: any) => total([s]) > 0), 'purchases of each cohort');
  assert.deepEqual(shot.flagAnswers.ann['pro-only'], [true, null]);
  assert.deepEqual(shot.flagAnswers.ben['listed'], [true, null]);
  assert.deepEqual(shot.flagAnswers.cat['listed'], [false, null]);
  assert.equal(shot.groups.results.length, 1);
}
