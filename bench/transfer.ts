/**
 * `sightline export` / `import` rates (docs/export-import.md): a data folder of BENCH_TRANSFER_EVENTS
 * realistic events (≈1 KB of properties each, bench/events-gen.ts) exported to an archive (plain
 * and gzipped) and imported into a new embedded folder, and, with the local cluster up, into
 * PostgreSQL + ClickHouse and exported from there. Each is the compiled CLI run as a user runs
 * it (its start included). Baseline, same run: the same kind of events sent through /batch/ (the
 * other way to move events into a server). `npm run bench -- transfer`.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { clusterAvailability } from '../test/helpers/cluster.js';
import { databaseFor } from '../test/helpers/postgres-databases.js';
import { newTempDir } from '../test/helpers/server.js';
import { ThreadedEventStore } from '../src/store/duckdb/threaded.js';
import type { StoredEvent } from '../src/store/types.js';
import { makeEvent } from './events-gen.js';
import { batchBodies } from './ingest.js';
import { runLoad } from './load.js';
import { serverDuckSettings, startBenchServer } from './server.js';
import { fmt } from './format.js';

const EVENTS = Number(process.env.BENCH_TRANSFER_EVENTS ?? 200_000);
const CAPTURED_BODIES = 20;
const PER_BODY = 1_000;
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const run = promisify(execFile);

/** GNU time reports the command's peak RSS (KiB) on the last line of stderr. */
const TIME = '/usr/bin/time';

/** Seconds and peak RSS (MiB, NaN without GNU time) of one CLI run. */
async function cli(env: Record<string, string>, args: string[]): Promise<{ seconds: number; rssMb: number }> {
  const node = [process.execPath, path.join(ROOT, 'dist/main.js'), ...args];
  const [command, ...rest] = fs.existsSync(TIME) ? [TIME, '-f', '%M', ...node] : node;
  const started = performance.now();
  const { stderr } = await run(command, rest, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SIGHTLINE_LOG_LEVEL: 'warn', ...env },
    maxBuffer: 64 * 2 ** 20,
  });
  const seconds = (performance.now() - started) / 1000;
  return { seconds, rssMb: fs.existsSync(TIME) ? Number(stderr.trim().split('\n').pop()) / 1024 : NaN };
}

/** The rest of the folder's events, written straight into its event store (set-up, not measured). */
async function seed(dataDir: string, count: number): Promise<void> {
  const store = await ThreadedEventStore.open(dataDir, serverDuckSettings());
  try {
    const now = Date.now();
    for (let at = 0; at < count; at += store.writeUnit) {
      const batch: StoredEvent[] = [];
      for (let i = at; i < Math.min(count, at + store.writeUnit); i++) {
        const e = makeEvent(i, 3000, now) as { event: string; distinct_id: string; uuid: string; timestamp: string; properties: object };
        const timestamp = new Date(Date.parse(e.timestamp) - (i % 30) * 86_400_000);
        batch.push({ project_id: 1, uuid: e.uuid, event: e.event, distinct_id: e.distinct_id, person_id: null, timestamp, created_at: timestamp, properties_json: JSON.stringify(e.properties), elements_chain: '', groups: ['', '', '', '', ''] });
      }
      await store.importEvents(batch);
    }
  } finally {
    await store.close();
  }
}

export async function benchTransfer(): Promise<string> {
  const sourceDir = newTempDir();
  const server = await startBenchServer({ dataDir: sourceDir, env: { SIGHTLINE_POSTGRES_URL: '', SIGHTLINE_CLICKHOUSE_URL: '', SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0' } });
  const bodies = batchBodies(server.projectKey, CAPTURED_BODIES, PER_BODY);
  let next = 0;
  const load = await runLoad({ url: `${server.url}/batch/`, connections: 4, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, bodies: () => bodies[next++] ?? null });
  if (load.errors > 0) throw new Error(`capture: ${JSON.stringify(load.statusCounts)}`);
  await server.stop();
  const captured = CAPTURED_BODIES * PER_BODY;
  await seed(sourceDir, EVENTS - captured);

  const rows: string[] = ['| step | events | seconds | events/s | vs baseline | peak RSS |', '|---|---|---|---|---|---|'];
  const baseline = captured / load.seconds;
  const row = (step: string, { seconds, rssMb }: { seconds: number; rssMb: number }) =>
    rows.push(`| ${step} | ${fmt(EVENTS)} | ${seconds.toFixed(1)} | ${fmt(EVENTS / seconds)} | ${(EVENTS / seconds / baseline).toFixed(1)}× | ${fmt(rssMb)} MB |`);
  rows.push(`| baseline: the events sent through \`/batch/\` (1,000 a request, 4 clients) | ${fmt(captured)} | ${load.seconds.toFixed(1)} | ${fmt(baseline)} | 1.0× | — |`);

  const embedded = { SIGHTLINE_DATA_DIR: sourceDir, SIGHTLINE_POSTGRES_URL: '', SIGHTLINE_CLICKHOUSE_URL: '' };
  const archive = path.join(newTempDir(), 'archive');
  row('export, embedded (SQLite + DuckDB) → NDJSON', await cli(embedded, ['export', '--out', archive]));
  row('export, embedded → gzipped NDJSON', await cli(embedded, ['export', '--out', path.join(newTempDir(), 'archive'), '--gzip']));
  row('import NDJSON → a new embedded folder', await cli({ SIGHTLINE_DATA_DIR: newTempDir(), SIGHTLINE_POSTGRES_URL: '', SIGHTLINE_CLICKHOUSE_URL: '' }, ['import', '--from', archive]));

  const cluster = clusterAvailability();
  if (cluster.enabled) {
    const dir = newTempDir();
    const database = `sightline_bench_transfer_${randomBytes(4).toString('hex')}`;
    const env = {
      SIGHTLINE_DATA_DIR: dir,
      SIGHTLINE_POSTGRES_URL: await databaseFor(cluster.settings.postgresUrl, dir),
      SIGHTLINE_CLICKHOUSE_URL: cluster.settings.clickhouseUrls.join(','),
      SIGHTLINE_CLICKHOUSE_CLUSTER: cluster.settings.clickhouseCluster,
      SIGHTLINE_CLICKHOUSE_DATABASE: database,
    };
    try {
      row('import NDJSON → PostgreSQL + ClickHouse (2 shards)', await cli(env, ['import', '--from', archive]));
      row('export, PostgreSQL + ClickHouse → NDJSON', await cli(env, ['export', '--out', path.join(newTempDir(), 'archive')]));
    } finally {
      await fetch(cluster.settings.clickhouseUrls[0], { method: 'POST', body: `DROP DATABASE IF EXISTS \`${database}\` ON CLUSTER \`${cluster.settings.clickhouseCluster}\`` }).catch(() => {});
    }
  } else {
    rows.push(`\n(PostgreSQL + ClickHouse skipped: ${cluster.reason})`);
  }
  return rows.join('\n');
}
