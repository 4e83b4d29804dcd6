/**
 * Scale-out ingestion, measured: 1, 2 and 3 Sightline nodes sharing the local cluster's PostgreSQL,
 * ClickHouse (2 shards) and NATS JetStream (R3), next to one embedded node (SQLite + DuckDB, local
 * flush log) in the same run. Each run sends the same gzipped /batch/ bodies spread evenly over its
 * nodes; *acknowledged* = events answered 200 per second, *processed* = events per second until a
 * count query sees every one. The CPU seconds each part took (its process trees, from /proc) give
 * the per-core rates a sizing model needs. Needs `npm run cluster:up`; `npm run bench -- cluster-scale`.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { clusterAvailability, type ClusterSettings } from '../test/helpers/cluster.js';
import { databaseFor } from '../test/helpers/postgres-databases.js';
import { newTempDir, startServer, type TestServer } from '../test/helpers/server.js';
import { batchBodies } from './ingest.js';
import { runLoad } from './load.js';
import { cpuSeconds, cpuSpent } from './process-cpu.js';
import { ensureBuilt } from './server.js';
import { fmt } from './format.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PER_BODY = 1000;
const CLIENTS_PER_NODE = 2;
const PARTS = ['sightline', 'postgres', 'clickhouse', 'nats', 'zookeeper', 'load generator'] as const;

interface Run {
  label: string;
  nodes: number;
  acked: number;
  ackedPerS: number;
  processedPerS: number;
  perNodeAckedPerS: number[];
  cpu: Record<string, number>;
  other: Record<string, number>;
}

/** The pids of the local cluster's parts, from the pid files cluster.sh keeps. */
function clusterPids(): Record<string, number[]> {
  const dir = path.resolve(ROOT, process.env.SIGHTLINE_CLUSTER_DIR ?? '.cluster');
  const pidOf = (file: string) => Number(fs.readFileSync(path.join(dir, file), 'utf8').split('\n')[0]);
  const some = (prefix: string) =>
    fs
      .readdirSync(dir)
      .filter((name) => name.startsWith(prefix))
      .map((name) => pidOf(`${name}/pid`));
  return { postgres: [pidOf('postgres/data/postmaster.pid')], clickhouse: some('clickhouse-'), nats: some('nats-'), zookeeper: [pidOf('zookeeper/pid')] };
}

function snapshot(nodes: TestServer[], cluster: Record<string, number[]>): Record<string, number> {
  const seconds = cpuSeconds({ sightline: nodes.map((node) => node.process.pid!), ...cluster });
  const own = process.cpuUsage();
  return { ...seconds, 'load generator': (own.user + own.system) / 1e6 };
}

async function storedEvents(server: TestServer): Promise<number> {
  const response = await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'HogQLQuery', query: 'select count() from events' }, refresh: 'force_blocking' } });
  if (response.status !== 200) throw new Error(`count: ${response.status} ${await response.text()}`);
  return Number(((await response.json()) as { results: number[][] }).results[0][0]);
}

/** Sends `bodies` spread over `nodes` (CLIENTS_PER_NODE connections each) and waits until every acknowledged event is stored. */
async function measure(label: string, nodes: TestServer[], bodies: Buffer[], cluster: Record<string, number[]>): Promise<Run> {
  const headers = { 'content-type': 'application/json', 'content-encoding': 'gzip' };
  const before = snapshot(nodes, cluster);
  const started = Date.now();
  const loads = await Promise.all(
    nodes.map((node, n) => {
      const own = bodies.filter((_, i) => i % nodes.length === n);
      let next = 0;
      return runLoad({ url: `${node.url}/batch/`, connections: CLIENTS_PER_NODE, headers, bodies: () => own[next++] ?? null });
    }),
  );
  const ackSeconds = (Date.now() - started) / 1000;
  const ackedOf = (statusCounts: Record<string, number>) => (statusCounts['200'] ?? 0) * PER_BODY;
  const acked = loads.reduce((sum, load) => sum + ackedOf(load.statusCounts), 0);
  while ((await storedEvents(nodes[0])) < acked) await new Promise((resolve) => setTimeout(resolve, 250));
  const processedSeconds = (Date.now() - started) / 1000;
  const cpu = cpuSpent(before, snapshot(nodes, cluster));
  const other: Record<string, number> = {};
  for (const load of loads) for (const [status, count] of Object.entries(load.statusCounts)) if (status !== '200') other[status] = (other[status] ?? 0) + count;
  return { label, nodes: nodes.length, acked, ackedPerS: acked / ackSeconds, processedPerS: acked / processedSeconds, perNodeAckedPerS: loads.map((load) => ackedOf(load.statusCounts) / load.seconds), cpu, other };
}

async function embeddedRun(bodies: (key: string) => Buffer[]): Promise<Run> {
  // Empty store settings: metadata in SQLite, events in DuckDB, the local flush log.
  const server = await startServer({ entry: 'build', singleNode: true, env: { SIGHTLINE_POSTGRES_URL: '', SIGHTLINE_CLICKHOUSE_URL: '', SIGHTLINE_NATS_URL: '' } });
  try {
    return await measure('embedded (SQLite + DuckDB, flush log)', [server], bodies(server.projectKey), {});
  } finally {
    await server.stop();
  }
}

async function clusterRun(settings: ClusterSettings, nodeCount: number, bodies: (key: string) => Buffer[]): Promise<Run> {
  const firstDir = newTempDir();
  const clickhouseDatabase = `sightline_bench_${randomBytes(6).toString('hex')}`;
  const shared = {
    SIGHTLINE_POSTGRES_URL: await databaseFor(settings.postgresUrl, firstDir),
    SIGHTLINE_CLICKHOUSE_URL: settings.clickhouseUrls.join(','),
    SIGHTLINE_CLICKHOUSE_CLUSTER: settings.clickhouseCluster,
    SIGHTLINE_CLICKHOUSE_DATABASE: clickhouseDatabase,
    SIGHTLINE_NATS_URL: settings.natsServers.join(','),
    SIGHTLINE_NATS_STREAM: `BENCH_${randomBytes(5).toString('hex')}`,
  };
  const nodes: TestServer[] = [];
  try {
    for (let n = 0; n < nodeCount; n++) {
      const first = nodes[0];
      nodes.push(await startServer({ entry: 'build', singleNode: true, dataDir: n === 0 ? firstDir : newTempDir(), projectKey: first?.projectKey, personalKey: first?.personalKey, env: shared }));
    }
    return await measure(`${nodeCount} node${nodeCount > 1 ? 's' : ''}: PostgreSQL + ClickHouse + NATS`, nodes, bodies(nodes[0].projectKey), clusterPids());
  } finally {
    await Promise.all(nodes.map((node) => node.stop()));
    await fetch(settings.clickhouseUrls[0], { method: 'POST', body: `DROP DATABASE IF EXISTS \`${clickhouseDatabase}\` ON CLUSTER \`${settings.clickhouseCluster}\`` }).catch(() => {});
  }
}

const perThousand = (run: Run, part: string) => (run.cpu[part] === undefined ? '—' : ((run.cpu[part] / run.acked) * 1000).toFixed(3));
const totalCpu = (run: Run) => Object.values(run.cpu).reduce((sum, seconds) => sum + seconds, 0);

export async function benchClusterScale(): Promise<string> {
  const availability = clusterAvailability();
  if (!availability.enabled) return `Skipped: ${availability.reason} (run \`npm run cluster:up\` first).`;
  ensureBuilt();
  const bodyCount = Number(process.env.BENCH_BATCH_BODIES ?? 60);
  const nodeCounts = (process.env.BENCH_CLUSTER_NODES ?? '1,2,3').split(',').map(Number);
  const bodies = (key: string) => batchBodies(key, bodyCount, PER_BODY);
  process.stderr.write(`embedded: ${bodyCount} bodies of ${PER_BODY} events…\n`);
  const runs = [await embeddedRun(bodies)];
  for (const count of nodeCounts) {
    process.stderr.write(`${count} node(s): ${bodyCount} bodies of ${PER_BODY} events…\n`);
    runs.push(await clusterRun(availability.settings, count, bodies));
  }
  const base = runs[0];
  const rates = [
    `| run (${fmt(bodyCount * PER_BODY)} events, ${CLIENTS_PER_NODE} clients a node) | acknowledged events/s | per node | processed events/s | vs embedded (ack / processed) | events per CPU-second, all parts | non-200 |`,
    '|---|---|---|---|---|---|---|',
    ...runs.map(
      (run) =>
        `| ${run.label} | ${fmt(run.ackedPerS)} | ${run.perNodeAckedPerS.map(fmt).join(' / ')} | ${fmt(run.processedPerS)} | ${(run.ackedPerS / base.ackedPerS).toFixed(2)} / ${(run.processedPerS / base.processedPerS).toFixed(2)} | ${fmt(run.acked / totalCpu(run))} | ${Object.keys(run.other).length ? JSON.stringify(run.other) : 'none'} |`,
    ),
  ];
  const cpu = [
    `| run | ${PARTS.join(' | ')} | all parts |`,
    `|---|${PARTS.map(() => '---|').join('')}---|`,
    ...runs.map((run) => `| ${run.label} | ${PARTS.map((part) => perThousand(run, part)).join(' | ')} | ${((totalCpu(run) / run.acked) * 1000).toFixed(3)} |`),
  ];
  return [...rates, '', 'CPU seconds per 1,000 events, by part (from the start of the load until every event is stored):', '', ...cpu].join('\n');
}
