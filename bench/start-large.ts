/**
 * `npm run bench -- start-large`: start time with a large data folder. The data set is made once
 * (and kept in BENCH_LARGE_DIR, default <tmp>/sightline-large-<events>): BENCH_LARGE_EVENTS
 * (10,000,000) synthetic events written straight into the event store with SQL (time printed),
 * then copied aside.
 *
 * - ready on /_health, the data set as it is (three starts);
 * - ready after a crash with a flush log to replay: a burst of /batch/ traffic of about the
 *   event store's lag bound is sent, the segments of the flush log are hard-linked aside as they
 *   appear, and the server is killed (SIGKILL). The event store is then put back to its copy from
 *   before the burst and the log's segments back in place, so that the event store lacks every
 *   flush of the burst and start-up has all of them to read and queue again.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, START_ENV, START_NODE_ARGS } from '../test/helpers/server.js';
import { batchBodies } from './ingest.js';
import { runLoad } from './load.js';
import { CREATE_PENDING_EVENTS, INSERT_PENDING_EVENTS, PENDING_EVENTS } from '../src/store/duckdb/materialized.js';
import { fmt } from './format.js';
import { startedDataDir } from './server.js';
import { timeToReady, stopChild } from './footprint.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const EVENTS = Number(process.env.BENCH_LARGE_EVENTS ?? 10_000_000);
const DIR = process.env.BENCH_LARGE_DIR ?? path.join(os.tmpdir(), `sightline-large-${EVENTS}`);
const KEYS = { projectKey: 'phc_largedataset000000000000', personalKey: 'phx_largedataset000000000000' };
const CHUNK = 1_000_000;

async function makeDataSet(): Promise<string> {
  const marker = path.join(DIR, 'made');
  if (fs.existsSync(marker)) return `data set reused from ${DIR} (${fs.readFileSync(marker, 'utf8').trim()})`;
  fs.rmSync(DIR, { recursive: true, force: true });
  fs.mkdirSync(DIR, { recursive: true });
  const started = performance.now();
  // The server makes the schemas and the project; then the events go in directly.
  await startedDataDir(DIR, KEYS);
  const instance = await DuckDBInstance.create(path.join(DIR, 'events.duckdb'), { threads: '2', memory_limit: '1GB' });
  const db = await instance.connect();
  // Through the store's pending table, so that the materialized columns are filled as it fills them.
  await db.run(CREATE_PENDING_EVENTS);
  for (let from = 0; from < EVENTS; from += CHUNK) {
    const to = Math.min(EVENTS, from + CHUNK);
    process.stderr.write(`events ${fmt(from)}–${fmt(to)}…\n`);
    await db.run(`
      INSERT INTO ${PENDING_EVENTS}
      SELECT 1, uuid(), ['$pageview', '$autocapture', 'signed_up', '$pageleave'][1 + i % 4], 'user-' || (i % 200000), NULL,
             TIMESTAMP '2026-01-01' + to_seconds(i // 20), TIMESTAMP '2026-01-01' + to_seconds(i // 20),
             json_object('$current_url', 'https://example.com/page/' || (i % 500) || '?ref=' || (i % 13), '$browser', ['Chrome', 'Firefox', 'Safari'][1 + i % 3],
                         '$os', ['Mac OS X', 'Windows', 'Linux', 'iOS'][1 + i % 4], '$session_id', 'sess-' || (i // 20), '$insert_id', 'ins-' || i,
                         '$geoip_country_code', ['GB', 'US', 'SE', 'DE'][1 + i % 4], 'plan', ['free', 'pro'][1 + i % 2], 'price', (i % 50) * 1.5,
                         '$raw_user_agent', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120 Safari/537.36'),
             '', '', '', '', '', '', 0
      FROM range(${from}, ${to}) t(i)`);
    await db.run(INSERT_PENDING_EVENTS);
  }
  await db.run('CHECKPOINT');
  db.closeSync();
  instance.closeSync();
  fs.copyFileSync(path.join(DIR, 'events.duckdb'), path.join(DIR, 'events.duckdb.before-burst'));
  const made = `${fmt(EVENTS)} events made in ${fmt((performance.now() - started) / 1000)} s, events.duckdb ${fmt(fs.statSync(path.join(DIR, 'events.duckdb')).size / 2 ** 20)} MB`;
  fs.writeFileSync(marker, made);
  return made;
}

let nextPort = 47_000 + Math.floor(Math.random() * 5_000);

async function readyMs(): Promise<{ ms: number; log: string }> {
  const port = nextPort++;
  const env = { SIGHTLINE_HOST: '127.0.0.1', SIGHTLINE_PORT: String(port), SIGHTLINE_DATA_DIR: DIR, SIGHTLINE_LOG_LEVEL: 'info' };
  const { ms, child, output } = await timeToReady([...START_NODE_ARGS, path.join(ROOT, 'dist/main.js'), 'serve'], { ...START_ENV, ...env }, (p) => `http://127.0.0.1:${p}/_health`, port);
  await stopChild(child);
  return { ms, log: output() };
}

/** A burst of about the lag bound, the log's segments kept aside, then SIGKILL; returns the log's size. */
async function crashWithLog(): Promise<{ bytes: number; events: number }> {
  const server = await startServer({ dataDir: DIR, entry: 'build', ...KEYS });
  const budget = JSON.parse(server.output().split('\n').find((l) => l.includes('"memory budget"')) ?? '{}') as { eventStoreMaxLagMb?: number };
  // ~4 KB a logged event (benchmark events after GeoIP).
  const events = Math.floor(((budget.eventStoreMaxLagMb ?? 64) * 2 ** 20) / 4096 / 1000) * 1000;
  const logDir = path.join(DIR, 'flush-log');
  const kept = path.join(DIR, 'flush-log-kept');
  fs.rmSync(kept, { recursive: true, force: true });
  fs.mkdirSync(kept);
  const keep = () => {
    for (const name of fs.readdirSync(logDir)) {
      if (!fs.existsSync(path.join(kept, name))) fs.linkSync(path.join(logDir, name), path.join(kept, name));
    }
  };
  const linker = setInterval(keep, 20);
  const bodies = batchBodies(server.projectKey, events / 1000, 1000);
  let next = 0;
  await runLoad({ url: `${server.url}/batch/`, connections: 2, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, bodies: () => bodies[next++] ?? null });
  keep();
  clearInterval(linker);
  await server.kill();
  fs.copyFileSync(path.join(DIR, 'events.duckdb.before-burst'), path.join(DIR, 'events.duckdb'));
  fs.rmSync(path.join(DIR, 'events.duckdb.wal'), { force: true });
  fs.rmSync(logDir, { recursive: true, force: true });
  fs.renameSync(kept, logDir);
  const bytes = fs.readdirSync(logDir).reduce((sum, name) => sum + fs.statSync(path.join(logDir, name)).size, 0);
  return { bytes, events };
}

export async function benchStartLarge(): Promise<string> {
  const made = await makeDataSet();
  // The data set as made: the event store holds everything, nothing to replay.
  fs.copyFileSync(path.join(DIR, 'events.duckdb.before-burst'), path.join(DIR, 'events.duckdb'));
  fs.rmSync(path.join(DIR, 'flush-log'), { recursive: true, force: true });
  const clean: number[] = [];
  for (let i = 0; i < 3; i++) clean.push((await readyMs()).ms);
  const burst = await crashWithLog();
  const replay = await readyMs();
  const replayed = /"flushes":(\d+)/.exec(replay.log.split('\n').find((l) => l.includes('replaying')) ?? '')?.[1] ?? '0';
  return [
    `${made}.`,
    '',
    '| start with the large data set | ready on /_health, ms |',
    '|---|---|',
    `| clean (three starts) | ${clean.map(fmt).join(', ')} |`,
    `| after a crash, ${fmt(burst.bytes / 2 ** 20)} MB of flush log (${fmt(burst.events)} events, ${replayed} flushes) for the event store to take again | ${fmt(replay.ms)} |`,
  ].join('\n');
}
