/**
 * The insights benchmark on ClickHouse (BENCH_INSIGHTS_STORE=chdb): ClickHouse 26.7 in process
 * (npm `chdb`, installed in test/chdb/ by scripts/test-chdb.sh). The compiled server runs with a
 * preload (chdb-preload.ts) that puts its events on a chdb folder in the data folder;
 * the events are written with INSERT … SELECT FROM numbers() straight into that folder while the
 * server is stopped (the same formulas as the DuckDB mode), then merged (chdb has no background
 * merges; a server's would leave one part per partition), and the hand-written SQL runs in this
 * process on a copy of the folder (chdb locks its folder; one per process at a time).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StartOptions } from '../test/helpers/server.js';
import { fmt } from './format.js';
import { CHUNK, DAYS, DIR, EVENTS, KEYS, NAMES, PERSONS, type DataSet } from './insights-data.js';
import { startBenchServer } from './server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PRELOAD = path.join(ROOT, 'bench/chdb-preload.ts');
const SERVER_FOLDER = path.join(DIR, 'clickhouse');
const DIRECT_FOLDER = path.join(DIR, 'clickhouse-direct');
const DB = 'sightline';

interface ChdbSession {
  queryAsync(query: string, options?: { format?: string }): Promise<{ text(): string }>;
  close(): void;
}

export interface ChdbHand {
  rows(sql: string): Promise<Record<string, unknown>[]>;
  close(): void;
}

function openSession(folder: string): ChdbSession {
  if (!fs.existsSync(path.join(ROOT, 'test/chdb/node_modules/chdb'))) throw new Error('chdb is not installed: npm install --prefix test/chdb --no-save (scripts/test-chdb.sh)');
  const { Session } = createRequire(path.join(ROOT, 'test/chdb/package.json'))('chdb') as { Session: new (folder: string) => ChdbSession };
  return new Session(folder);
}

/** The server's settings and node flags for its events in chdb on the data folder's ClickHouse folder. */
export function chdbServerOptions(): StartOptions {
  return {
    env: { SIGHTLINE_CLICKHOUSE_URL: 'http://chdb.in-process', SIGHTLINE_CLICKHOUSE_DATABASE: DB, SIGHTLINE_TEST_CHDB_DIR: SERVER_FOLDER },
    nodeArgs: ['--import', 'tsx', '--import', PRELOAD],
  };
}

/** The hand-written SQL's connection, on the copy of the server's folder. */
export function openChdbHand(): ChdbHand {
  const session = openSession(DIRECT_FOLDER);
  return {
    async rows(sql) {
      const text = (await session.queryAsync(sql, { format: 'JSONEachRow' })).text();
      return text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
    },
    close: () => session.close(),
  };
}

const list = (values: string[]) => `[${values.map((v) => `'${v}'`).join(', ')}]`;

/**
 * The data set in ClickHouse: the server makes the project and the schema (its migrations), then
 * the mirror and the events go in with INSERT … SELECT from numbers() in 1M-row statements, timed.
 */
export async function makeChdbDataSet(): Promise<DataSet> {
  const marker = path.join(DIR, 'made.json');
  if (fs.existsSync(marker)) return JSON.parse(fs.readFileSync(marker, 'utf8')) as DataSet;
  fs.rmSync(DIR, { recursive: true, force: true });
  fs.mkdirSync(DIR, { recursive: true });
  const server = await startBenchServer({ dataDir: DIR, ...KEYS, ...chdbServerOptions() });
  const projectId = ((await (await server.api('/api/projects/@current/')).json()) as { id: number }).id;
  await server.stop();
  const end = Date.now();
  const endUs = end * 1000;
  const session = openSession(SERVER_FOLDER);
  try {
    // The mirror as the store writes it: lower-case uuid text, one distinct id per person.
    await session.queryAsync(`
      INSERT INTO ${DB}.persons (project_id, id, properties, is_identified, created_at, is_deleted, version)
      SELECT ${projectId}, lower(toString(generateUUIDv4(number))), concat('{"email":"user-', toString(number), '@example.com","plan":"', ${list(['free', 'pro'])}[1 + number % 2], '"}'),
             1, ${endUs - (DAYS + 1) * 86_400_000_000}, 0, 1
      FROM numbers(${PERSONS})`);
    await session.queryAsync(`
      INSERT INTO ${DB}.person_distinct_ids (project_id, distinct_id, person_id, is_deleted, version)
      SELECT project_id, splitByChar('@', JSONExtractString(properties, 'email'))[1], id, 0, 1 FROM ${DB}.persons WHERE project_id = ${projectId}`);
    const started = performance.now();
    for (let from = 0; from < EVENTS; from += CHUNK) {
      const to = Math.min(EVENTS, from + CHUNK);
      process.stderr.write(`events ${fmt(from)}–${fmt(to)}…\n`);
      // The materialized columns are left out: their DEFAULT fills them from the properties on insert.
      await session.queryAsync(`
        INSERT INTO ${DB}.events (project_id, uuid, event, distinct_id, stored_person_id, timestamp, created_at, properties, elements_chain,
                                  \`$group_0\`, \`$group_1\`, \`$group_2\`, \`$group_3\`, \`$group_4\`, flush_seq, node)
        SELECT ${projectId}, lower(toString(generateUUIDv4(i))), ${list(NAMES)}[1 + (i * 7) % ${NAMES.length}], concat('user-', toString((i * 2654435761) % ${PERSONS})), NULL,
               ${endUs} - ((i * 40503) % ${DAYS * 86_400}) * 1000000, ${endUs},
               concat('{"$current_url":"https://example.com/page/', toString(i % 500), '","$browser":"', ${list(['Chrome', 'Firefox', 'Safari'])}[1 + i % 3],
                      '","$os":"', ${list(['Mac OS X', 'Windows', 'Linux', 'iOS'])}[1 + i % 4], '","$session_id":"sess-', toString(intDiv(i, 20)),
                      '","$geoip_country_code":"', ${list(['GB', 'US', 'SE', 'DE'])}[1 + i % 4], '","plan":"', ${list(['free', 'pro'])}[1 + i % 2],
                      '","price":', toString((i % 50) * 1.5), '}'),
               '', '', '', '', '', '', 0, ''
        FROM (SELECT number AS i FROM numbers(${from}, ${to - from}))`);
    }
    const seconds = (performance.now() - started) / 1000;
    // A ClickHouse server merges the parts of each partition in the background, and FINAL then has
    // nothing left to merge; chdb runs no background merges, so the 10 inserts' parts would stay
    // and every FINAL read would merge them (9× a plain count, docs/benchmarks.md).
    const merging = performance.now();
    for (const table of ['events', 'persons', 'person_distinct_ids']) await session.queryAsync(`OPTIMIZE TABLE ${DB}.${table} FINAL`);
    const mergeSeconds = (performance.now() - merging) / 1000;
    const parts = (await session.queryAsync(`SELECT count() FROM system.parts WHERE database = '${DB}' AND table = 'events' AND active`, { format: 'TSV' })).text().trim();
    session.close();
    fs.cpSync(SERVER_FOLDER, DIRECT_FOLDER, { recursive: true });
    const data: DataSet = {
      note: `${fmt(EVENTS)} events of ${fmt(PERSONS)} persons, ${NAMES.length} names over ${DAYS} days, inserted into chdb 26.7 with INSERT … SELECT FROM numbers() in ${fmt(CHUNK)}-row statements: ${fmt(seconds)} s, ${fmt(EVENTS / seconds)} events/s; then merged as a server's background merges would (OPTIMIZE … FINAL, ${fmt(mergeSeconds)} s, ${parts} parts)`,
      end,
    };
    fs.writeFileSync(marker, JSON.stringify(data));
    return data;
  } catch (error) {
    session.close();
    throw error;
  }
}
