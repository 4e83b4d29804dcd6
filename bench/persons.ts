/**
 * Persons (issue targets at 1M persons: list with search p99 < 50 ms; deleting a person with
 * 10,000 events < 1 s to accepted). Here with BENCH_PERSONS (100,000) persons, the size a
 * couple of minutes allows: the list with `search` (a substring of the email that one person
 * matches, the target's; one that many persons match, newest ones among them; one that many
 * match but none of the newest), next to the list without search and a `distinct_id` lookup
 * measured in the same run; then a deletion of a person with 10,000 events: time to the 202, and
 * to `finished` (gone from every query). The SQLite run's persons are made once and kept in
 * BENCH_PERSONS_DIR (default <tmp>/sightline-persons-<persons>). With the local cluster up
 * (`npm run cluster:up`), the same again with metadata in its PostgreSQL (a fresh database),
 * after the SQLite run of the same process.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startBenchServer } from './server.js';
import { clusterPostgresUrl } from '../test/helpers/cluster.js';
import { databaseFor } from '../test/helpers/postgres-databases.js';
import { newTempDir, type TestServer } from '../test/helpers/server.js';
import { percentile } from './load.js';
import { fmt } from './format.js';

const PERSONS = Number(process.env.BENCH_PERSONS ?? 100_000);
const PER_BATCH = 2_000;
const REQUESTS = 60;
const WARMUP = 10;
const VICTIM_EVENTS = 10_000;
const DIR = process.env.BENCH_PERSONS_DIR ?? path.join(os.tmpdir(), `sightline-persons-${PERSONS}`);
const KEYS = { projectKey: 'phc_benchpersons0000000000000000', personalKey: 'phx_benchpersons0000000000000000' };

async function timed(run: (i: number) => Promise<void>): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < WARMUP + REQUESTS; i++) {
    const started = performance.now();
    await run(i);
    if (i >= WARMUP) latencies.push(performance.now() - started);
  }
  return latencies;
}

interface Figures {
  plain: number[];
  byDistinctId: number[];
  search: number[];
  searchMany: number[];
  searchManyOld: number[];
  acceptedMs: number;
  finishedMs: number;
}

async function measure(server: TestServer, made: string | null): Promise<Figures> {
  const post = async (batch: unknown[]) => {
    const response = await server.post('/batch/', { api_key: server.projectKey, batch });
    if (response.status !== 200) throw new Error(`ingest failed: ${response.status} ${await response.text()}`);
  };
  for (let start = 0; start < PERSONS && !(made && fs.existsSync(made)); start += PER_BATCH) {
    await post(
      Array.from({ length: PER_BATCH }, (_, k) => ({
        event: '$identify',
        distinct_id: `user-${start + k}`,
        properties: { $set: { email: `user${start + k}@example${(start + k) % 50}.com`, name: `User ${start + k}`, plan: (start + k) % 3 ? 'free' : 'pro' } },
      })),
    );
  }
  const get = async (path: string) => {
    const response = await server.api(path);
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
  };
  const base = '/api/projects/@current/persons/';
  const plain = await timed(() => get(base));
  const byDistinctId = await timed((i) => get(`${base}?distinct_id=user-${(i * 7919) % PERSONS}`));
  const search = await timed((i) => get(`${base}?search=${encodeURIComponent(`user${(i * 7919) % PERSONS}@`)}`));
  // example1 and example10–19: 11 of the 50 domains, the newest persons among them.
  const searchMany = await timed((i) => get(`${base}?search=example1${i % 2 ? '' : `&offset=${100 * (i % 5)}`}`));
  // user1…user8: a ninth of the persons each at 1M, none of the newest (they are user9…).
  const searchManyOld = await timed((i) => get(`${base}?search=user${1 + (i % 8)}`));

  for (let start = 0; start < VICTIM_EVENTS; start += PER_BATCH) {
    await post(Array.from({ length: PER_BATCH }, (_, k) => ({ event: 'clicked', distinct_id: 'victim', properties: { n: start + k, $set: { email: 'victim@example.com' } } })));
  }
  const victim = ((await (await server.api(`${base}?distinct_id=victim`)).json()) as { results: { id: number }[] }).results[0];
  const started = performance.now();
  const response = await server.api(`${base}${victim.id}/?delete_events=true`, { method: 'DELETE' });
  const acceptedMs = performance.now() - started;
  const { status_url: statusUrl } = (await response.json()) as { status_url: string };
  for (;;) {
    const status = (await (await server.api(statusUrl.slice(server.url.length))).json()) as { status: string };
    if (status.status !== 'pending') break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { plain, byDistinctId, search, searchMany, searchManyOld, acceptedMs, finishedMs: performance.now() - started };
}

export async function benchPersons(): Promise<string> {
  const clusterUrl = clusterPostgresUrl();
  const engines = clusterUrl ? ['SQLite', 'PostgreSQL'] : ['SQLite'];
  const runs: [string, Figures][] = [];
  for (const engine of engines) {
    // SQLite's persons are kept between runs; PostgreSQL gets a fresh database each time.
    const kept = engine === 'SQLite';
    if (kept) fs.mkdirSync(DIR, { recursive: true });
    const dataDir = kept ? DIR : newTempDir();
    const made = kept ? path.join(DIR, 'made.json') : null;
    // '' keeps the embedded store even though the cluster is up (test/helpers/server.ts).
    const postgresUrl = engine === 'PostgreSQL' ? await databaseFor(clusterUrl!, dataDir) : '';
    const server = await startBenchServer({ dataDir, ...KEYS, env: { SIGHTLINE_GEOIP: 'false', SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', SIGHTLINE_POSTGRES_URL: postgresUrl } });
    try {
      process.stderr.write(`${engine}: ${fmt(PERSONS)} persons${made && fs.existsSync(made) ? ` (kept in ${DIR})` : ''}…\n`);
      runs.push([engine, await measure(server, made)]);
    } finally {
      await server.stop();
    }
  }
  const row = (name: string, latencies: number[]) => `| ${name} | ${percentile(latencies, 50).toFixed(2)} | ${percentile(latencies, 99).toFixed(2)} |`;
  const lines = [`${fmt(PERSONS)} persons; ${REQUESTS} requests each, one at a time, after ${WARMUP} warm-up requests.`, '', '| metadata store: request | p50 ms | p99 ms |', '|---|---|---|'];
  for (const [engine, f] of runs) {
    lines.push(
      row(`${engine}: baseline: list, first page, no filter`, f.plain),
      row(`${engine}: baseline: list ?distinct_id= (indexed)`, f.byDistinctId),
      row(`${engine}: list ?search= (email substring, one person)`, f.search),
      row(`${engine}: list ?search=example1 (22 % of persons, newest among them; pages 1–5)`, f.searchMany),
      row(`${engine}: list ?search=user1…8 (11 % each, none of the newest)`, f.searchManyOld),
    );
  }
  lines.push('');
  for (const [engine, f] of runs) {
    lines.push(`${engine}: deleting a person with ${fmt(VICTIM_EVENTS)} events (\`?delete_events=true\`): 202 after ${f.acceptedMs.toFixed(0)} ms, finished (gone from every query) after ${f.finishedMs.toFixed(0)} ms.`);
  }
  return lines.join('\n');
}
