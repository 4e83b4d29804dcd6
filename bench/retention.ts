/**
 * Retention (`SIGHTLINE_RETENTION_DAYS`): how long a pass takes to delete half of a store of
 * events spread over 60 days, and what it does to capture meanwhile. The pass runs as the server
 * starts, so the baseline is the same capture traffic (10-event /batch/ requests on one
 * connection) for as long, from a start of the same data without retention.
 */
import path from 'node:path';
import zlib from 'node:zlib';
import { makeEvent } from './events-gen.js';
import { percentile, runLoad, type LoadResult } from './load.js';
import { startBenchServer } from './server.js';
import { fileMb, fmt } from './format.js';
import { metric } from '../test/helpers/robustness.js';

const EVENTS = Number(process.env.BENCH_RETENTION_EVENTS ?? 400_000);
const DAY = 86_400_000;
const RETENTION_DAYS = 30;
const BATCH_HEADERS = { 'content-type': 'application/json', 'content-encoding': 'gzip' };

function gzipBatch(token: string, events: Record<string, unknown>[]): Buffer {
  return zlib.gzipSync(JSON.stringify({ api_key: token, batch: events }));
}

/** Bodies of 1,000 events, oldest first, timestamps spread evenly over the last 60 days. */
function historyBodies(token: string, now: number): Buffer[] {
  const bodies: Buffer[] = [];
  for (let start = 0; start < EVENTS; start += 1000) {
    const events = Array.from({ length: 1000 }, (_, k) => makeEvent(start + k, 3000, now - Math.floor(((EVENTS - start - k) / EVENTS) * 60 * DAY)));
    bodies.push(gzipBatch(token, events));
  }
  return bodies;
}

const row = (name: string, load: LoadResult) =>
  `| ${name} | ${fmt(load.requests)} | ${percentile(load.latenciesMs, 50).toFixed(1)} | ${percentile(load.latenciesMs, 99).toFixed(1)} |`;

export async function benchRetention(): Promise<string> {
  const first = await startBenchServer({ env: { SIGHTLINE_LOG_LEVEL: 'info' } });
  const { dataDir, projectKey, personalKey } = first;
  let history: Buffer[] = historyBodies(projectKey, Date.now());
  let next = 0;
  try {
    await runLoad({ url: `${first.url}/batch/`, connections: 4, headers: BATCH_HEADERS, bodies: () => history[next++] ?? null });
  } finally {
    await first.stop();
  }
  history = [];
  const duckFile = path.join(dataDir, 'events.duckdb');
  const metaFile = path.join(dataDir, 'meta.sqlite');
  const before = { duck: fileMb(duckFile), meta: fileMb(metaFile) };
  const recent = Array.from({ length: 5000 }, (_, i) => gzipBatch(projectKey, Array.from({ length: 10 }, (_, k) => makeEvent(EVENTS + i * 10 + k, 3000))));

  // The pass starts as the server does; capture runs alongside until its log line.
  let passMs = 0;
  let deleted = NaN;
  let duringPass: LoadResult;
  const server = await startBenchServer({ dataDir, projectKey, personalKey, env: { SIGHTLINE_LOG_LEVEL: 'info', SIGHTLINE_RETENTION_DAYS: String(RETENTION_DAYS) } });
  try {
    const started = Date.now();
    let passDone = false;
    let sent = 0;
    const during = runLoad({ url: `${server.url}/batch/`, connections: 1, headers: BATCH_HEADERS, bodies: () => (passDone ? null : (recent[sent++] ?? null)) });
    while (!/retention: deleted events|retention pass failed/.test(server.output())) {
      if (Date.now() - started > 600_000) throw new Error('the retention pass did not end within 10 minutes');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    passMs = Date.now() - started;
    passDone = true;
    duringPass = await during;
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    deleted = metric(metrics, 'sightline_events_expired_total');
  } finally {
    await server.stop();
  }

  const plain = await startBenchServer({ dataDir, projectKey, personalKey, env: { SIGHTLINE_LOG_LEVEL: 'info' } });
  let baseline: LoadResult;
  try {
    const until = Date.now() + passMs;
    let sent = 0;
    baseline = await runLoad({ url: `${plain.url}/batch/`, connections: 1, headers: BATCH_HEADERS, bodies: () => (Date.now() > until ? null : (recent[sent++] ?? null)) });
  } finally {
    await plain.stop();
  }
  return [
    `${fmt(EVENTS)} events over 60 days, ${RETENTION_DAYS}-day retention: the pass at start-up deleted ${fmt(deleted)} in ${fmt(passMs)} ms ` +
      `(${((passMs * 1000) / deleted).toFixed(1)} µs an event, with capture running).`,
    `Files before the pass: events.duckdb ${fmt(before.duck)} MB, meta.sqlite ${fmt(before.meta)} MB (they do not shrink; new events reuse the space).`,
    '',
    `| /batch/ of 10 events, 1 connection, the first ${fmt(passMs)} ms after a start | requests | p50 ms | p99 ms |`,
    '|---|---|---|---|',
    row('with the retention pass running', duringPass),
    row('without retention (baseline)', baseline),
  ].join('\n');
}
