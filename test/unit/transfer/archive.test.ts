/**
 * The archive's lines (src/transfer/archive.ts) and the engine-neutral values of the metadata
 * rows (src/store/transfer-tables.ts): any event survives a line and back; any text survives the
 * line reader, plain or gzipped, however its lines fall across the file's chunks; both engines'
 * spellings of a value read as the same archive value.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { eventLine, eventOfLine, readLines } from '../../../src/transfer/archive.js';
import { neutralRow, pageStatement, transferTable, TRANSFER_TABLES } from '../../../src/store/transfer-tables.js';
import type { StoredEvent } from '../../../src/store/types.js';

// Any Unicode text (lone surrogates cannot be stored as UTF-8 by any engine).
const text = fc.string({ unit: 'grapheme' });
const when = fc.integer({ min: 0, max: 4_102_444_800_000 }).map((ms) => new Date(ms));
const event: fc.Arbitrary<StoredEvent> = fc.record({
  project_id: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  uuid: fc.uuid(),
  event: text,
  distinct_id: text,
  person_id: fc.option(fc.uuid(), { nil: null }),
  timestamp: when,
  created_at: when,
  properties_json: fc.dictionary(text, fc.jsonValue()).map((properties) => JSON.stringify(properties)),
  elements_chain: text,
  groups: fc.tuple(text, text, text, text, text),
});

test('an event written as a line reads back equal, and the line is one line of JSON', () => {
  fc.assert(
    fc.property(event, (e) => {
      const line = eventLine(e);
      assert.ok(line.endsWith('\n') && !line.slice(0, -1).includes('\n'));
      const back = eventOfLine(line.slice(0, -1), 'line 1');
      assert.deepEqual({ ...back, properties_json: JSON.parse(back.properties_json) }, { ...e, properties_json: JSON.parse(e.properties_json) });
    }),
    { numRuns: 300 },
  );
});

test('a line that is not an event of the format is refused with where it was', () => {
  assert.throws(() => eventOfLine('{"uuid": 1}', 'events-000001.ndjson line 7'), /events-000001\.ndjson line 7: not an event/);
  assert.throws(() => eventOfLine('{', 'x line 1'), /x line 1: not JSON/);
});

test('the line reader gives every line in order, plain and gzipped, whatever the batch size', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-lines-'));
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(text.map((s) => s.replaceAll('\n', ' ')).filter((s) => s !== ''), { maxLength: 300 }), fc.integer({ min: 1, max: 50 }), fc.boolean(), async (lines, batch, gzip) => {
        const body = lines.map((line) => `${line}\n`).join('');
        const file = path.join(dir, gzip ? 'f.ndjson.gz' : 'f.ndjson');
        fs.writeFileSync(file, gzip ? gzipSync(body) : body);
        const read: string[] = [];
        for await (const chunk of readLines(file, batch)) {
          assert.ok(chunk.length <= batch);
          read.push(...chunk);
        }
        assert.deepEqual(read, lines);
      }),
      { numRuns: 60 },
    );
    // Lines much longer than the reader's 1 MiB chunks, with multi-byte characters cut across them.
    const long = ['é'.repeat(1_500_000), 'x', '😀'.repeat(700_000)];
    const file = path.join(dir, 'long.ndjson');
    fs.writeFileSync(file, long.join('\n'));
    const read: string[] = [];
    for await (const chunk of readLines(file, 2)) read.push(...chunk);
    assert.deepEqual(read, long);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("SQLite's and PostgreSQL's spellings of a row read as one archive row", () => {
  const flags = transferTable('feature_flags');
  const sqlite = { id: 3, project_id: 1, key: 'k', name: '', filters: '{"groups":[]}', active: 1, deleted: 0, ensure_experience_continuity: 0, version: 2, created_by: null, created_at: 't', updated_at: 't' };
  const postgres = { ...sqlite, id: '3', filters: { groups: [] }, active: true, deleted: false, ensure_experience_continuity: false };
  assert.deepEqual(neutralRow(flags, sqlite), neutralRow(flags, postgres));
  assert.deepEqual(neutralRow(flags, sqlite).filters, { groups: [] });
  assert.equal(neutralRow(flags, postgres).active, true);
});

test('every table pages by its whole primary key, parents before children', () => {
  const names = TRANSFER_TABLES.map((table) => table.name);
  assert.equal(new Set(names).size, names.length);
  for (const table of TRANSFER_TABLES) for (const key of table.key) assert.ok(key in table.columns, `${table.name}.${key}`);
  const before = (parent: string, child: string) => assert.ok(names.indexOf(parent) < names.indexOf(child), `${parent} before ${child}`);
  before('organizations', 'projects');
  before('users', 'memberships');
  before('persons', 'cohort_people');
  before('cohorts', 'cohort_people');
  before('insights', 'dashboard_tiles');
  before('dashboards', 'dashboard_tiles');
  const page = pageStatement(transferTable('groups'), { columns: '*', from: 'groups' }, { project_id: 1, group_type_index: 0, group_key: 'a' }, 10, (n) => `$${n}`);
  assert.equal(page.sql, 'SELECT * FROM groups WHERE (project_id, group_type_index, group_key) > ($1, $2, $3) ORDER BY project_id, group_type_index, group_key LIMIT $4');
  assert.deepEqual(page.params, [1, 0, 'a', 10]);
});
