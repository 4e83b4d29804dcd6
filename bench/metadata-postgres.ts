/**
 * The metadata store's engines side by side: /batch/ ingestion (acknowledged once the metadata
 * commit is done) and /decide on the embedded SQLite store and on PostgreSQL, in the same run.
 * Needs the local cluster's PostgreSQL (`npm run cluster:up`, or SIGHTLINE_CLUSTER_TESTS=1 with
 * SIGHTLINE_POSTGRES_URL). Run it with `npm run bench -- metadata-postgres`.
 */
import { clusterPostgresUrl } from '../test/helpers/cluster.js';
import { databaseFor } from '../test/helpers/postgres-databases.js';
import { newTempDir, type TestServer } from '../test/helpers/server.js';
import { batchBodies } from './ingest.js';
import { percentile, runLoad, type LoadResult } from './load.js';
import { startBenchServer } from './server.js';
import { fmt } from './format.js';

const PER_BODY = 1000;
const CLIENTS = 4;

interface Figures {
  ingest: LoadResult;
  decide: LoadResult;
}

async function measure(server: TestServer, bodies: Buffer[]): Promise<Figures> {
  const headers = { 'content-type': 'application/json', 'content-encoding': 'gzip' };
  let next = 0;
  const ingest = await runLoad({ url: `${server.url}/batch/`, connections: CLIENTS, headers, bodies: () => bodies[next++] ?? null });
  // Flags of users that exist (the batches made them), so every answer reads a stored person.
  const flag = { key: 'bench-flag', filters: { groups: [{ properties: [{ key: '$browser', value: ['Chrome'], operator: 'exact', type: 'person' }], rollout_percentage: 50 }] } };
  const created = await server.api('/api/projects/@current/feature_flags/', { method: 'POST', body: flag });
  if (created.status !== 201) throw new Error(`flag: ${created.status} ${await created.text()}`);
  let user = 0;
  const decide = await runLoad({
    url: `${server.url}/decide?v=3`,
    connections: 20,
    headers: { 'content-type': 'application/json' },
    bodies: () => Buffer.from(JSON.stringify({ api_key: server.projectKey, distinct_id: `user-${user++ % 2000}` })),
    durationMs: Number(process.env.BENCH_DECIDE_MS ?? 6000),
  });
  return { ingest, decide };
}

export async function benchMetadataPostgres(): Promise<string> {
  const clusterUrl = clusterPostgresUrl();
  if (!clusterUrl) return 'Skipped: no PostgreSQL (run `npm run cluster:up` first).';
  const BODIES = Number(process.env.BENCH_BATCH_BODIES ?? 60);
  const runs: [string, Figures][] = [];
  for (const engine of ['SQLite (embedded)', 'PostgreSQL 15 (local cluster)']) {
    const dataDir = newTempDir();
    // '' keeps the embedded store even though the cluster is up (test/helpers/server.ts).
    const postgresUrl = engine.startsWith('PostgreSQL') ? await databaseFor(clusterUrl, dataDir) : '';
    const server = await startBenchServer({ dataDir, env: { SIGHTLINE_POSTGRES_URL: postgresUrl, SIGHTLINE_LOG_LEVEL: 'info' } });
    try {
      process.stderr.write(`${engine}: ${BODIES} bodies of ${PER_BODY} events, then /decide…\n`);
      runs.push([engine, await measure(server, batchBodies(server.projectKey, BODIES, PER_BODY))]);
    } finally {
      await server.stop();
    }
  }
  const [, base] = runs[0];
  const rate = (r: LoadResult, per = 1) => ((r.statusCounts['200'] ?? 0) * per) / r.seconds;
  const lines = [
    `| metadata store | /batch/ events/s (1,000 a body, ${CLIENTS} clients) | vs SQLite | /decide req/s (20 connections) | p50 ms | p99 ms | vs SQLite | non-200 |`,
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const [engine, f] of runs) {
    lines.push(
      `| ${engine} | ${fmt(rate(f.ingest, PER_BODY))} | ${(rate(f.ingest, PER_BODY) / rate(base.ingest, PER_BODY)).toFixed(2)} | ${fmt(rate(f.decide))} | ` +
        `${percentile(f.decide.latenciesMs, 50).toFixed(1)} | ${percentile(f.decide.latenciesMs, 99).toFixed(1)} | ${(rate(f.decide) / rate(base.decide)).toFixed(2)} | ` +
        `${JSON.stringify({ ...f.ingest.statusCounts, ...Object.fromEntries(Object.entries(f.decide.statusCounts).map(([k, v]) => [`decide ${k}`, v])) })} |`,
    );
  }
  return lines.join('\n');
}
