/**
 * Ingestion benchmarks: /batch/ with gzip bodies of 1,000 realistic events, and
 * single-event /i/v0/e/ requests on 50 connections — each next to a bare node:http baseline
 * that only gunzips and parses the same bodies, measured in the same run.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { startBenchServer } from './server.js';
import { makeEvent } from './events-gen.js';
import { percentile, runLoad, type LoadResult } from './load.js';
import { runSocketLoad } from './socket-load.js';
import { fmt } from './format.js';
import { metric } from '../test/helpers/robustness.js';
import { memoryOf } from '../test/helpers/process-memory.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export async function startBaseline(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/baseline-server.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      const match = /listening (\d+)/.exec(chunk.toString());
      if (match) resolve(Number(match[1]));
    });
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}

const peakRssMb = (pid: number) => memoryOf(pid).hwmMb;

export function batchBodies(token: string, count: number, perBody: number): Buffer[] {
  const bodies: Buffer[] = [];
  let i = 0;
  for (let b = 0; b < count; b++) {
    const batch = [];
    for (let e = 0; e < perBody; e++) batch.push(makeEvent(i++, 3000));
    bodies.push(zlib.gzipSync(JSON.stringify({ api_key: token, batch, sent_at: new Date().toISOString() })));
  }
  return bodies;
}

export function singleBody(token: string, i: number): Buffer {
  const event = makeEvent(i, 3000);
  (event.properties as Record<string, unknown>).token = token;
  (event.properties as Record<string, unknown>).distinct_id = event.distinct_id;
  delete event.distinct_id;
  return zlib.gzipSync(JSON.stringify({ api_key: token, batch: [event], sent_at: new Date().toISOString() }));
}

async function storedEvents(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return metric(text, 'sightline_events_ingested_total');
}

export async function benchIngest(): Promise<string> {
  const lines: string[] = [];
  const BODIES = Number(process.env.BENCH_BATCH_BODIES ?? 200);
  const PER_BODY = 1000;
  const CLIENTS = 4;
  const server = await startBenchServer({ env: { SIGHTLINE_LOG_LEVEL: 'info' } });
  try {
    process.stderr.write(`generating ${BODIES} gzip bodies of ${PER_BODY} events…\n`);
    const bodies = batchBodies(server.projectKey, BODIES, PER_BODY);
    const headers = { 'content-type': 'application/json', 'content-encoding': 'gzip' };

    const baseline = await startBaseline();
    let next = 0;
    const base = await runLoad({ url: `${baseline.url}/batch/`, connections: CLIENTS, headers, bodies: () => bodies[next++] ?? null });
    baseline.stop();

    next = 0;
    const service = await runLoad({ url: `${server.url}/batch/`, connections: CLIENTS, headers, bodies: () => bodies[next++] ?? null });
    const stored = await storedEvents(server.url);
    const acknowledged = (service.statusCounts['200'] ?? 0) * PER_BODY;
    const batchRss = peakRssMb(server.process.pid!);
    lines.push(
      '| /batch/ gzip, 1,000 events/body, 4 clients | events/s | vs baseline |',
      '|---|---|---|',
      `| bare node:http (gunzip + JSON.parse only) | ${fmt((base.requests * PER_BODY) / base.seconds)} | 1.00 |`,
      `| Sightline (durably stored) | ${fmt(acknowledged / service.seconds)} | ${((acknowledged / service.seconds) / ((base.requests * PER_BODY) / base.seconds)).toFixed(2)} |`,
      '',
      `acknowledged ${fmt(acknowledged)} events, stored ${fmt(stored)}, non-200 answers: ${JSON.stringify(service.statusCounts)}, peak RSS ${batchRss.toFixed(0)} MB`,
      '',
    );

    // Single events, 50 connections, fixed duration.
    const DURATION = Number(process.env.BENCH_SINGLE_MS ?? 8000);
    // Bodies built beforehand and sent from raw sockets: gzipping per request, or node:http's
    // client, would make the generator (on the same two cores) the bottleneck.
    const pool = Array.from({ length: 40_000 }, (_, k) => singleBody(server.projectKey, 10_000_000 + k));
    let i = 0;
    const single = () => pool[i++ % pool.length];
    const textHeaders = { 'content-type': 'text/plain' };
    const baseline2 = await startBaseline();
    const baseSingle = await runSocketLoad({ url: `${baseline2.url}/i/v0/e/`, connections: 50, headers: textHeaders, bodies: single, durationMs: DURATION });
    baseline2.stop();
    const serviceSingle = await runSocketLoad({ url: `${server.url}/i/v0/e/`, connections: 50, headers: textHeaders, bodies: single, durationMs: DURATION });
    const row = (name: string, r: LoadResult, ratio: string) =>
      `| ${name} | ${fmt(r.requests / r.seconds)} | ${percentile(r.latenciesMs, 50).toFixed(1)} | ${percentile(r.latenciesMs, 99).toFixed(1)} | ${ratio} |`;
    lines.push(
      '| /i/v0/e/ single event, 50 connections (raw sockets) | req/s | p50 ms | p99 ms | vs baseline |',
      '|---|---|---|---|---|',
      row('bare node:http (gunzip + JSON.parse only)', baseSingle, '1.00'),
      row('Sightline (durably stored)', serviceSingle, ((serviceSingle.requests / serviceSingle.seconds) / (baseSingle.requests / baseSingle.seconds)).toFixed(2)),
      '',
      `non-200 answers: ${JSON.stringify(serviceSingle.statusCounts)}, errors ${serviceSingle.errors}, peak RSS of the service over both runs ${peakRssMb(server.process.pid!).toFixed(0)} MB`,
    );
  } finally {
    await server.stop();
  }
  return lines.join('\n');
}
