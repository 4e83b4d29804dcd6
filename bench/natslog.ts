/**
 * The NATS JetStream log next to the local flush log, one node, in the same run: the acknowledged
 * rate (events/s answered 200 by /batch/) and the processed rate (events/s until every one of them
 * can be queried). Both runs keep metadata in the local cluster's PostgreSQL and events in DuckDB;
 * only the log differs. Needs `npm run cluster:up`. Run it with `npm run bench -- natslog`.
 */
import { randomBytes } from 'node:crypto';
import { clusterAvailability } from '../test/helpers/cluster.js';
import { databaseFor } from '../test/helpers/postgres-databases.js';
import { newTempDir, startServer, type TestServer } from '../test/helpers/server.js';
import { batchBodies } from './ingest.js';
import { runLoad } from './load.js';
import { fmt } from './format.js';

const PER_BODY = 1000;
const CLIENTS = 4;

async function storedEvents(server: TestServer): Promise<number> {
  const response = await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'HogQLQuery', query: 'select count() from events' }, refresh: 'force_blocking' } });
  if (response.status !== 200) throw new Error(`count: ${response.status} ${await response.text()}`);
  return Number(((await response.json()) as { results: number[][] }).results[0][0]);
}

async function measure(server: TestServer, bodies: Buffer[]): Promise<{ acked: number; ackedPerS: number; processedPerS: number; other: Record<string, number> }> {
  const headers = { 'content-type': 'application/json', 'content-encoding': 'gzip' };
  let next = 0;
  const started = Date.now();
  const load = await runLoad({ url: `${server.url}/batch/`, connections: CLIENTS, headers, bodies: () => bodies[next++] ?? null });
  const acked = (load.statusCounts['200'] ?? 0) * PER_BODY;
  while ((await storedEvents(server)) < acked) await new Promise((resolve) => setTimeout(resolve, 100));
  const processedSeconds = (Date.now() - started) / 1000;
  const { ['200']: _ok, ...other } = load.statusCounts;
  return { acked, ackedPerS: acked / load.seconds, processedPerS: acked / processedSeconds, other };
}

export async function benchNatsLog(): Promise<string> {
  const availability = clusterAvailability();
  if (!availability.enabled) return `Skipped: ${availability.reason} (run \`npm run cluster:up\` first).`;
  const { postgresUrl, natsServers } = availability.settings;
  const BODIES = Number(process.env.BENCH_BATCH_BODIES ?? 60);
  const lines = [`| log | acknowledged events/s (1,000 a body, ${CLIENTS} clients) | processed events/s | vs flush log (ack / processed) | non-200 |`, '|---|---|---|---|---|'];
  let base: { ackedPerS: number; processedPerS: number } | null = null;
  for (const log of ['local flush log', 'NATS JetStream (R3, 8 partitions)']) {
    const dataDir = newTempDir();
    const nats: Record<string, string> = log.startsWith('NATS') ? { SIGHTLINE_NATS_URL: natsServers.join(','), SIGHTLINE_NATS_STREAM: `BENCH_${randomBytes(5).toString('hex')}` } : {};
    const server = await startServer({ dataDir, env: { SIGHTLINE_POSTGRES_URL: await databaseFor(postgresUrl, dataDir), ...nats } });
    try {
      process.stderr.write(`${log}: ${BODIES} bodies of ${PER_BODY} events…\n`);
      const figures = await measure(server, batchBodies(server.projectKey, BODIES, PER_BODY));
      base ??= figures;
      lines.push(
        `| ${log} | ${fmt(figures.ackedPerS)} | ${fmt(figures.processedPerS)} | ${(figures.ackedPerS / base.ackedPerS).toFixed(2)} / ${(figures.processedPerS / base.processedPerS).toFixed(2)} | ${JSON.stringify(figures.other)} |`,
      );
    } finally {
      await server.stop();
    }
  }
  return lines.join('\n');
}
