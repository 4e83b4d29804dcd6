/**
 * What the NATS log's read-your-writes wait (one stream round trip, shared by the requests waiting
 * at the same moment) costs a read: `/flags` and a light API request on one node with the NATS log,
 * next to the same node on the local flush log (no wait) in the same run. Metadata in the local
 * cluster's PostgreSQL. Needs `npm run cluster:up`; run it with `npm run bench -- nats-reads`
 * (BENCH_NATS_READS_CONNECTIONS clients, 8 by default).
 */
import { randomBytes } from 'node:crypto';
import { clusterAvailability } from '../test/helpers/cluster.js';
import { databaseFor } from '../test/helpers/postgres-databases.js';
import { newTempDir, startServer, type TestServer } from '../test/helpers/server.js';
import { percentile, runLoad, type LoadResult } from './load.js';
import { fmt } from './format.js';

const CONNECTIONS = Number(process.env.BENCH_NATS_READS_CONNECTIONS ?? 8);
const DURATION_MS = Number(process.env.BENCH_NATS_READS_MS ?? 8_000);

function row(label: string, load: LoadResult, base: LoadResult | null): string {
  const rate = load.requests / load.seconds;
  const ratio = base ? (rate / (base.requests / base.seconds)).toFixed(2) : '1.00';
  const other = Object.entries(load.statusCounts).filter(([status]) => status !== '200');
  return `| ${label} | ${fmt(rate)} | ${ratio} | ${percentile(load.latenciesMs, 50).toFixed(2)} | ${percentile(load.latenciesMs, 99).toFixed(2)} | ${other.length ? JSON.stringify(Object.fromEntries(other)) : 'none'} |`;
}

async function loads(server: TestServer): Promise<{ flags: LoadResult; api: LoadResult }> {
  let i = 0;
  const flags = await runLoad({
    url: `${server.url}/flags/?v=2`,
    connections: CONNECTIONS,
    durationMs: DURATION_MS,
    headers: { 'content-type': 'application/json' },
    bodies: () => Buffer.from(JSON.stringify({ token: server.projectKey, distinct_id: `user-${i++}` })),
  });
  const api = await runLoad({
    url: `${server.url}/api/projects/@current/feature_flags/`,
    method: 'GET',
    connections: CONNECTIONS,
    durationMs: DURATION_MS,
    headers: { authorization: `Bearer ${server.personalKey}` },
    bodies: () => Buffer.alloc(0),
  });
  return { flags, api };
}

export async function benchNatsReads(): Promise<string> {
  const availability = clusterAvailability();
  if (!availability.enabled) return `Skipped: ${availability.reason} (run \`npm run cluster:up\` first).`;
  const { postgresUrl, natsServers } = availability.settings;
  const lines = [`| node, request (${CONNECTIONS} clients, ${DURATION_MS / 1000} s) | req/s | vs flush log | p50 ms | p99 ms | non-200 |`, '|---|---|---|---|---|---|'];
  const results: Record<string, { flags: LoadResult; api: LoadResult }> = {};
  for (const log of ['local flush log', 'NATS log']) {
    const dataDir = newTempDir();
    const nats: Record<string, string> = log === 'NATS log' ? { SIGHTLINE_NATS_URL: natsServers.join(','), SIGHTLINE_NATS_STREAM: `BENCH_${randomBytes(5).toString('hex')}` } : {};
    const server = await startServer({ dataDir, env: { SIGHTLINE_POSTGRES_URL: await databaseFor(postgresUrl, dataDir), SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', ...nats } });
    try {
      const flag = await server.api('/api/projects/@current/feature_flags/', { method: 'POST', body: { key: 'half', filters: { groups: [{ rollout_percentage: 50 }] } } });
      if (flag.status !== 201) throw new Error(`flag: ${flag.status} ${await flag.text()}`);
      process.stderr.write(`${log}: /flags and a light API request, ${DURATION_MS / 1000} s each…\n`);
      results[log] = await loads(server);
    } finally {
      await server.stop();
    }
  }
  const base = results['local flush log'];
  for (const [log, { flags, api }] of Object.entries(results)) {
    lines.push(row(`${log}, /flags`, flags, base.flags === flags ? null : base.flags));
    lines.push(row(`${log}, GET …/feature_flags/`, api, base.api === api ? null : base.api));
  }
  return lines.join('\n');
}
