/**
 * `npm run bench -- footprint`: how fast the compiled server starts and how much memory it holds.
 *
 * - ready: from spawning `node dist/main.js serve` on an empty data folder to the first 200 of
 *   `/_health` (polled every 10 ms), three starts, next to a bare `node -e` that only listens
 *   and answers (the baseline: what node itself costs).
 * - idle RSS 5 s after start, empty data folder.
 * Memory is the server's process tree (its event store runs in a child): RSS summed over it, the
 * peak as each process's VmHWM summed (test/helpers/process-memory.ts).
 * - peak RSS under the ingest benchmark's /batch/ load (1,000-event gzip bodies, 4 clients),
 *   sampled every 100 ms along with the V8 heap the server reports on /metrics.
 * - idle RSS one minute after that load ended.
 *
 * FOOTPRINT_IDLE_AFTER_SECONDS (60) shortens the last wait while iterating.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { newTempDir, START_ENV, START_NODE_ARGS } from '../test/helpers/server.js';
import { ensureBuilt, startBenchServer } from './server.js';
import { batchBodies } from './ingest.js';
import { runLoad } from './load.js';
import { fmt } from './format.js';
import { metric } from '../test/helpers/robustness.js';
import { memoryOf } from '../test/helpers/process-memory.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const IDLE_AFTER_SECONDS = Number(process.env.FOOTPRINT_IDLE_AFTER_SECONDS ?? 60);
const BODIES = Number(process.env.BENCH_BATCH_BODIES ?? 200);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const rssMb = (pid: number): number => memoryOf(pid).rssMb;

/** Milliseconds from spawning `args` until `url` answers 200. */
export async function timeToReady(
  args: string[],
  env: Record<string, string>,
  url: (port: number) => string,
  port: number,
): Promise<{ ms: number; child: ChildProcess; output: () => string }> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}: ${output}`);
    const ok = await fetch(url(port)).then((r) => r.ok, () => false);
    if (ok) return { ms: performance.now() - started, child, output: () => output };
    if (performance.now() - started > 60_000) throw new Error(`not ready after 60 s: ${output}`);
    await sleep(10);
  }
}

export const stopChild = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });

let nextPort = 41_000 + Math.floor(Math.random() * 10_000);

/** Ready times of the service on an empty data folder, and the bare-node baseline. */
async function readyTimes(runs: number): Promise<{ service: number[]; bare: number[]; idleMb: number }> {
  const service: number[] = [];
  const bare: number[] = [];
  let idleMb = NaN;
  const bareScript = "require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1')";
  for (let run = 0; run < runs; run++) {
    const port = nextPort++;
    const b = await timeToReady(['-e', bareScript], { PORT: String(port) }, (p) => `http://127.0.0.1:${p}/`, port);
    bare.push(b.ms);
    await stopChild(b.child);

    const dataDir = newTempDir('sightline-footprint-');
    const servicePort = nextPort++;
    const env = { ...sightlineEnv(), SIGHTLINE_HOST: '127.0.0.1', SIGHTLINE_PORT: String(servicePort), SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'warn' };
    const s = await timeToReady([...START_NODE_ARGS, path.join(ROOT, 'dist/main.js'), 'serve'], { ...START_ENV, ...env }, (p) => `http://127.0.0.1:${p}/_health`, servicePort);
    service.push(s.ms);
    if (run === runs - 1) {
      await sleep(5_000);
      idleMb = rssMb(s.child.pid!);
    }
    await stopChild(s.child);
  }
  return { service, bare, idleMb };
}

/** The `SIGHTLINE_*` settings of the benchmark's environment (a run can measure another setting). */
function sightlineEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[0].startsWith('SIGHTLINE_') && e[1] !== undefined));
}

interface Sample {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

async function sampleServer(url: string, pid: number): Promise<Sample> {
  const text = await fetch(`${url}/metrics`).then((r) => r.text(), () => '');
  const mb = (name: string, labels: Record<string, string> = {}) => (text ? metric(text, name, labels) / 2 ** 20 : NaN);
  return { rss: rssMb(pid), heapUsed: mb('nodejs_heap_size_used_bytes'), heapTotal: mb('nodejs_heap_size_total_bytes'), external: mb('nodejs_external_memory_bytes') };
}

export async function benchFootprint(): Promise<string> {
  const lines: string[] = [];
  const runs = Number(process.env.FOOTPRINT_STARTS ?? 3);
  // The starts below run dist/ directly: it must match the source being measured.
  ensureBuilt();
  const ready = await readyTimes(runs);
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  lines.push(
    '| start on an empty data folder | ready on /_health, ms (median of ' + runs + ') | all runs |',
    '|---|---|---|',
    `| bare node:http (\`node -e\`, listen and answer) | ${fmt(median(ready.bare))} | ${ready.bare.map(fmt).join(', ')} |`,
    `| Sightline (\`node dist/main.js serve\`) | ${fmt(median(ready.service))} | ${ready.service.map(fmt).join(', ')} |`,
    '',
  );

  const server = await startBenchServer({ env: { SIGHTLINE_LOG_LEVEL: 'info' } });
  const pid = server.process.pid!;
  try {
    await sleep(5_000);
    const idleBefore = await sampleServer(server.url, pid);
    process.stderr.write(`generating ${BODIES} gzip bodies of 1,000 events…\n`);
    const bodies = batchBodies(server.projectKey, BODIES, 1000);
    const headers = { 'content-type': 'application/json', 'content-encoding': 'gzip' };
    let next = 0;
    const samples: Sample[] = [];
    let loading = true;
    const sampler = (async () => {
      while (loading) {
        samples.push(await sampleServer(server.url, pid));
        await sleep(100);
      }
    })();
    const load = await runLoad({ url: `${server.url}/batch/`, connections: 4, headers, bodies: () => bodies[next++] ?? null });
    // The event store catches up after the last answer; that is part of the load.
    await server.api(`/api/projects/@current/events/?limit=1`);
    loading = false;
    await sampler;
    const peak = samples.reduce((max, s) => (s.rss > max.rss ? s : max), samples[0]);
    const hwm = memoryOf(pid).hwmMb;
    process.stderr.write(`load done (${fmt((load.requests * 1000) / load.seconds)} events/s); waiting ${IDLE_AFTER_SECONDS} s…\n`);
    await sleep(IDLE_AFTER_SECONDS * 1000);
    const idleAfter = await sampleServer(server.url, pid);
    const row = (name: string, s: Sample, rss = s.rss) => `| ${name} | ${fmt(rss)} | ${fmt(s.heapUsed)} / ${fmt(s.heapTotal)} | ${fmt(s.external)} |`;
    lines.push(
      '| server memory (process tree) | RSS MB | V8 heap used / total MB (main thread) | external MB |',
      '|---|---|---|---|',
      row('idle, 5 s after start (empty data folder)', idleBefore),
      row(`peak of the /batch/ load (${fmt(load.requests)} × 1,000 events, 4 clients; sampled every 100 ms)`, peak),
      `| peak (VmHWM, summed over the tree) | ${fmt(hwm)} | | |`,
      row(`idle, ${IDLE_AFTER_SECONDS} s after the load`, idleAfter),
      '',
      `load: ${fmt((load.requests * 1000) / load.seconds)} events/s, answers ${JSON.stringify(load.statusCounts)}; idle RSS 5 s after a start without the harness: ${fmt(ready.idleMb)} MB`,
    );
  } finally {
    await server.stop();
  }
  return lines.join('\n');
}
