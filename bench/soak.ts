/**
 * `npm run soak`: a long steady run against a real server. A short warm-up measures the
 * highest /batch/ throughput; then, for SOAK_MINUTES (default 10), /batch/ runs at half of it,
 * open loop (requests leave on schedule, whatever the answers take), with /decide?v=3 and
 * events-list traffic alongside. The server's RSS is sampled every 10 s. Printed as markdown:
 * RSS trend (must stay flat), p99 per minute (must stay within 2× of minute 1), errors (must be
 * 0), and stored events == acknowledged events at the end. Exits 1 when a criterion fails.
 *
 * SOAK_MINUTES, SOAK_WARMUP_SECONDS (30), SOAK_BATCH_EVENTS (100), SOAK_DECIDE_PER_SECOND (20),
 * SOAK_LIST_PER_SECOND (2), SOAK_EVENTS_PER_SECOND (a fixed steady rate instead of half the
 * warm-up's maximum, which itself moves by a quarter on a noisy machine).
 *
 * `--memory 512M` runs the server in a memory cgroup of that size (memory-cgroup.ts), which it
 * sizes itself for; the report then adds the cgroup's OOM kills and peak use. A 503 is not an
 * error when it carries Retry-After (SDKs retry it) and comes while the server is saturated,
 * i.e. in the warm-up at full speed; in the steady phase, at half of that, it is one. A server
 * that refuses to start (too little memory for it) is reported as such, with its message.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import type { TestServer } from '../test/helpers/server.js';
import { startBenchServer } from './server.js';
import { makeEvent } from './events-gen.js';
import { percentile } from './load.js';
import { fileMb } from './format.js';
import { memoryCgroup, parseMemory, type MemoryCgroup } from './memory-cgroup.js';
import { memoryOf } from '../test/helpers/process-memory.js';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const WARMUP_SECONDS = Number(process.env.SOAK_WARMUP_SECONDS ?? 30);
const BATCH_EVENTS = Number(process.env.SOAK_BATCH_EVENTS ?? 100);
const DECIDE_PER_SECOND = Number(process.env.SOAK_DECIDE_PER_SECOND ?? 20);
const LIST_PER_SECOND = Number(process.env.SOAK_LIST_PER_SECOND ?? 2);
/** A fixed steady rate (events/s) instead of half the warm-up's maximum, for comparing two builds at the same load. */
const FIXED_EVENTS_PER_SECOND = process.env.SOAK_EVENTS_PER_SECOND ? Number(process.env.SOAK_EVENTS_PER_SECOND) : null;
if (FIXED_EVENTS_PER_SECOND !== null && !(FIXED_EVENTS_PER_SECOND > 0)) throw new Error('SOAK_EVENTS_PER_SECOND must be a positive number');
const RSS_EVERY_MS = 10_000;
const memoryArg = process.argv.indexOf('--memory');
const MEMORY_BYTES = memoryArg >= 0 ? parseMemory(process.argv[memoryArg + 1] ?? '') : null;
/** In-flight cap per traffic kind: past it the server is not keeping up, counted as an error. */
const MAX_IN_FLIGHT = 256;

type Kind = 'batch' | 'decide' | 'list';

interface Outcome {
  kind: Kind;
  /** Minute of the steady phase (0-based); -1 in the warm-up. */
  minute: number;
  ms: number;
  status: number;
}

class Client {
  readonly outcomes: Outcome[] = [];
  readonly errors: string[] = [];
  readonly inFlight: Record<Kind, number> = { batch: 0, decide: 0, list: 0 };
  acknowledgedEvents = 0;
  /** 503s with Retry-After (back-pressure), in the warm-up (minute -1) and the steady phase. */
  readonly backPressure = { warmup: 0, steady: 0 };
  // Idle sockets are closed after 30 s, well before the server's keep-alive timeout (65 s): with
  // no timeout of its own, node's agent ignores the one the server announces, keeps them for
  // good, and now and then sends a request on one the server is closing (ECONNRESET).
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 512, timeout: 30_000 });
  private readonly target: URL;

  constructor(private readonly server: TestServer) {
    this.target = new URL(server.url);
  }

  send(kind: Kind, minute: number, method: string, path: string, body: Buffer | null, headers: Record<string, string>, events = 0): Promise<void> {
    if (this.inFlight[kind] >= MAX_IN_FLIGHT) {
      this.errors.push(`${kind}: more than ${MAX_IN_FLIGHT} requests in flight (server not keeping up)`);
      return Promise.resolve();
    }
    this.inFlight[kind]++;
    const started = process.hrtime.bigint();
    return new Promise<void>((resolve) => {
      const done = (status: number, error?: string, retryAfter?: string, code?: string) => {
        this.inFlight[kind]--;
        this.outcomes.push({ kind, minute, ms: Number(process.hrtime.bigint() - started) / 1e6, status });
        if (error) this.errors.push(`${kind}: ${error}`);
        else if (status === 503 && retryAfter && minute < 0) this.backPressure.warmup++;
        else if (status === 503 && retryAfter) {
          this.backPressure.steady++;
          this.errors.push(`${kind}: HTTP 503 (with Retry-After) while not saturated`);
        } else if (status !== 200) this.errors.push(`${kind}: HTTP ${status}${code ? ` ${code}` : ''}`);
        else if (kind === 'batch') this.acknowledgedEvents += events;
        resolve();
      };
      const request = http.request(
        {
          host: this.target.hostname,
          port: this.target.port,
          path,
          method,
          agent: this.agent,
          headers: body ? { ...headers, 'content-length': String(body.length) } : headers,
        },
        (response) => {
          // An error's body says which one (its `code`); a 200's is not needed.
          const chunks: Buffer[] = [];
          if (response.statusCode === 200) response.resume();
          else response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => done(response.statusCode ?? 0, undefined, response.headers['retry-after'], errorCode(chunks)));
          response.on('error', (error) => done(0, error.message));
        },
      );
      request.on('error', (error) => done(0, error.message));
      request.end(body ?? undefined);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The API error's `code`, if the body is one. */
function errorCode(chunks: Buffer[]): string | undefined {
  try {
    const code: unknown = (JSON.parse(Buffer.concat(chunks).toString()) as { code?: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/** Least-squares slope of y over x. */
function slope(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const num = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const den = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return den === 0 ? NaN : num / den;
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : 'n/a');

/**
 * gzip /batch/ bodies without uuids (the server assigns fresh ones, so every event is new) and
 * with an `offset` instead of a timestamp: bodies are reused for the whole run, and events must
 * happen when they are sent, as live traffic does, not all within the second the pool was made.
 */
function batchPool(token: string, count: number): Buffer[] {
  const pool: Buffer[] = [];
  let i = 0;
  for (let b = 0; b < count; b++) {
    const batch = Array.from({ length: BATCH_EVENTS }, () => {
      const event = makeEvent(i++, 5000);
      delete event.uuid;
      delete event.timestamp;
      event.offset = i % 1000;
      return event;
    });
    pool.push(zlib.gzipSync(JSON.stringify({ api_key: token, batch })));
  }
  return pool;
}

async function api(server: TestServer, path: string, body?: unknown): Promise<any> {
  const response = await withRetry(() => server.api(path, body === undefined ? {} : { method: 'POST', body }));
  const text = await response.text();
  if (!response.ok) throw new Error(`${path} → ${response.status} ${text}`);
  return JSON.parse(text);
}

/**
 * One retry when the connection drops before any byte of the answer arrived: a keep-alive socket
 * the server closed after its idle timeout is normal HTTP, and fetch does not retry it by itself.
 * Any other failure, or a second drop, is reported as an error.
 */
async function withRetry(send: () => Promise<Response>): Promise<Response> {
  try {
    return await send();
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    if (cause?.code !== 'UND_ERR_SOCKET') throw error;
    return send();
  }
}

async function main(): Promise<void> {
  const cgroup: MemoryCgroup | null = MEMORY_BYTES === null ? null : memoryCgroup(MEMORY_BYTES);
  if (cgroup) process.stderr.write(`server in a memory cgroup: ${cgroup.how}\n`);
  let server: TestServer;
  try {
    server = await startBenchServer({
      // info: the helper waits for the "accepting traffic" line; requests are not logged anyway.
      // SOAK_LOG_LEVEL=debug with SOAK_SERVER_LOG=<file> keeps every flush's timings for diagnosis.
      env: { SIGHTLINE_LOG_LEVEL: process.env.SOAK_LOG_LEVEL ?? 'info', SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0' },
      launcher: cgroup?.launcher,
    });
  } catch (error) {
    cgroup?.remove();
    const refusal = /Configuration error: (.*)/.exec((error as Error).message)?.[1];
    if (!refusal) throw error;
    process.stdout.write(`# Soak: the server refused to start\n\n${cgroup ? `In ${cgroup.how}: ` : ''}${refusal}\n`);
    process.exitCode = 2;
    return;
  }
  const pid = server.process.pid!;
  const memoryLog = () => server.output().split('\n').find((line) => line.includes('"memory budget"')) ?? '';
  const client = new Client(server);
  const batchHeaders = { 'content-type': 'text/plain', 'content-encoding': 'gzip' };
  const pool = batchPool(server.projectKey, 200);
  let next = 0;
  const nextBatch = () => pool[next++ % pool.length];

  try {
    // Flags for /decide to evaluate: a rollout, a property match and a multivariate one.
    await api(server, '/api/projects/@current/feature_flags/', { key: 'soak-rollout', filters: { groups: [{ rollout_percentage: 30 }] } });
    await api(server, '/api/projects/@current/feature_flags/', {
      key: 'soak-pro',
      filters: { groups: [{ properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }], rollout_percentage: 100 }] },
    });
    await api(server, '/api/projects/@current/feature_flags/', {
      key: 'soak-variant',
      filters: { groups: [{ rollout_percentage: 100 }], multivariate: { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 50 }] } },
    });

    const json = { 'content-type': 'application/json' };
    const pending = new Set<Promise<void>>();
    const track = (p: Promise<void>) => {
      pending.add(p);
      void p.finally(() => pending.delete(p));
    };
    /** Open loop: `fire` is called perSecond times a second from `from` to `to`, whatever the answers take. */
    const schedule = async (from: number, to: number, perSecond: number, fire: (i: number) => Promise<void>) => {
      let i = 0;
      while (Date.now() < to) {
        const due = Math.floor(((Date.now() - from) / 1000) * perSecond);
        while (i < due) track(fire(i++));
        await sleep(Math.max(1, Math.min(50, 1000 / perSecond / 2)));
      }
    };
    let minuteOf = () => -1;
    const sideTraffic = (from: number, to: number) => [
      schedule(from, to, DECIDE_PER_SECOND, (i) =>
        client.send('decide', minuteOf(), 'POST', '/decide?v=3', Buffer.from(JSON.stringify({ api_key: server.projectKey, distinct_id: `user-${i % 5000}` })), json),
      ),
      schedule(from, to, LIST_PER_SECOND, (i) =>
        client.send('list', minuteOf(), 'GET', `/api/projects/@current/events/?limit=100${i % 2 ? '&event=%24pageview' : ''}`, null, { authorization: `Bearer ${server.personalKey}` }),
      ),
    ];

    // Warm-up: /batch/ closed loop on 8 connections, with the side traffic already running, to
    // find the highest /batch/ rate this machine sustains for this mix.
    process.stderr.write(`warm-up: ${WARMUP_SECONDS} s of /batch/ at full speed…\n`);
    const warmStart = Date.now();
    const warmupEnd = warmStart + WARMUP_SECONDS * 1000;
    let warmupBatches = 0;
    await Promise.all([
      ...Array.from({ length: 8 }, async () => {
        while (Date.now() < warmupEnd) {
          await client.send('batch', -1, 'POST', '/batch/', nextBatch(), batchHeaders, BATCH_EVENTS);
          warmupBatches++;
        }
      }),
      ...sideTraffic(warmStart, warmupEnd),
    ]);
    const maxBatchesPerSecond = warmupBatches / ((Date.now() - warmStart) / 1000);
    const rate = FIXED_EVENTS_PER_SECOND === null ? maxBatchesPerSecond / 2 : FIXED_EVENTS_PER_SECOND / BATCH_EVENTS;
    await Promise.all(pending);
    process.stderr.write(`max ${fmt(maxBatchesPerSecond * BATCH_EVENTS)} events/s; soaking ${MINUTES} min at ${fmt(rate * BATCH_EVENTS)} events/s…\n`);

    // Steady phase: each kind of traffic on its own schedule.
    const steadyStart = Date.now();
    const steadyEnd = steadyStart + MINUTES * 60_000;
    minuteOf = () => Math.min(MINUTES - 1, Math.floor((Date.now() - steadyStart) / 60_000));
    const rss: [number, number][] = [];
    // The DuckDB file and WAL sizes show whether checkpoints keep up with the appends.
    const duckFile = path.join(server.dataDir, 'events.duckdb');
    const storage: [number, number, number][] = [];
    const sample = () => {
      const minute = (Date.now() - steadyStart) / 60_000;
      rss.push([minute, memoryOf(pid).rssMb]);
      storage.push([minute, fileMb(duckFile), fileMb(`${duckFile}.wal`)]);
    };
    const sampler = (async () => {
      while (Date.now() < steadyEnd) {
        sample();
        await sleep(RSS_EVERY_MS);
      }
      sample();
    })();
    await Promise.all([
      schedule(steadyStart, steadyEnd, rate, () => client.send('batch', minuteOf(), 'POST', '/batch/', nextBatch(), batchHeaders, BATCH_EVENTS)),
      ...sideTraffic(steadyStart, steadyEnd),
      sampler,
    ]);
    await Promise.all(pending);

    // Stored == acknowledged: every 200 means "on disk".
    // A server that cannot answer these any more is a result too: reported, not a crash.
    let stored = NaN;
    let ingested = NaN;
    try {
      const counted = await api(server, `/api/projects/@current/events/?after=2000-01-01&select=${encodeURIComponent(JSON.stringify(['count()']))}`);
      stored = Number(counted.results[0][0]);
      const metricsText = await (await fetch(`${server.url}/metrics`)).text();
      ingested = Number(/^sightline_events_ingested_total (\d+)/m.exec(metricsText)?.[1] ?? NaN);
    } catch (error) {
      client.errors.push(`final count: ${(error as Error).message} (${String((error as { cause?: unknown }).cause ?? '')})`);
    }

    // Report.
    const steady = client.outcomes.filter((o) => o.minute >= 0);
    const lines: string[] = [];
    lines.push(`# Soak: ${MINUTES} min`, '');
    lines.push(
      `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}, Node ${process.version}; ${new Date().toISOString()}`,
      '',
      `Warm-up max (with the side traffic): ${fmt(maxBatchesPerSecond * BATCH_EVENTS)} events/s (${fmt(maxBatchesPerSecond, 1)} /batch/ req/s of ${BATCH_EVENTS} events). Steady: ${fmt(rate * BATCH_EVENTS)} events/s, ${DECIDE_PER_SECOND} /decide/s, ${LIST_PER_SECOND} events-list/s.`,
      '',
    );
    lines.push('| minute | /batch/ req | /batch/ p50 ms | /batch/ p99 ms | p99 vs minute 1 | /decide p99 ms | events list p99 ms | RSS MB (end) | DuckDB file / WAL MB (end) |', '|---|---|---|---|---|---|---|---|---|');
    const p99 = (kind: Kind, minute: number) => percentile(steady.filter((o) => o.kind === kind && o.minute === minute).map((o) => o.ms), 99);
    const first = p99('batch', 0);
    let worstRatio = 0;
    for (let minute = 0; minute < MINUTES; minute++) {
      const batch = steady.filter((o) => o.kind === 'batch' && o.minute === minute).map((o) => o.ms);
      const ratio = p99('batch', minute) / first;
      worstRatio = Math.max(worstRatio, ratio);
      const rssAtEnd = rss.filter(([t]) => t <= minute + 1).at(-1)?.[1] ?? NaN;
      const [, fileAtEnd, walAtEnd] = storage.filter(([t]) => t <= minute + 1).at(-1) ?? [0, NaN, NaN];
      lines.push(
        `| ${minute + 1} | ${fmt(batch.length)} | ${fmt(percentile(batch, 50), 1)} | ${fmt(p99('batch', minute), 1)} | ${fmt(ratio, 2)}× | ${fmt(p99('decide', minute), 1)} | ${fmt(p99('list', minute), 1)} | ${fmt(rssAtEnd)} | ${fmt(fileAtEnd)} / ${fmt(walAtEnd)} |`,
      );
    }
    const rssSlope = slope(rss);
    const rssValues = rss.map(([, v]) => v);
    const rssMean = rssValues.reduce((sum, v) => sum + v, 0) / rssValues.length;
    // Flat: no trend of more than 1 % of the mean a minute (10 % over ten minutes).
    const rssFlat = rssSlope <= rssMean / 100;
    const errorsByKind = new Map<string, number>();
    for (const error of client.errors) errorsByKind.set(error, (errorsByKind.get(error) ?? 0) + 1);
    const group = cgroup?.usage(pid) ?? null;
    const budget = memoryLog() ? (JSON.parse(memoryLog()) as Record<string, unknown>) : {};
    const checks: [string, boolean, string][] = [
      ...(group
        ? ([['no OOM kill in the cgroup', group.oomKills === 0 && server.process.signalCode === null, `${group.oomKills} OOM kills; cgroup peak ${fmt(group.peakMb)} MB (page cache included) of ${fmt(MEMORY_BYTES! / 2 ** 20)} MB`]] as [string, boolean, string][])
        : []),
      ['503s carry Retry-After, and come only while saturated (warm-up)', client.backPressure.steady === 0, `warm-up ${fmt(client.backPressure.warmup)}, steady ${fmt(client.backPressure.steady)}`],
      ['RSS flat (trend at most 1 % of the mean per minute)', rssFlat, `${fmt(rssSlope, 1)} MB/min, mean ${fmt(rssMean)} MB`],
      ['p99 of /batch/ within 2× of minute 1, every minute', worstRatio <= 2, `worst ${fmt(worstRatio, 2)}×`],
      ['errors', client.errors.length === 0, client.errors.length === 0 ? '0' : [...errorsByKind].map(([e, n]) => `${n} × ${e}`).join('; ')],
      ['stored == acknowledged', stored === client.acknowledgedEvents, `stored ${fmt(stored)} (metrics: ${fmt(ingested)}), acknowledged ${fmt(client.acknowledgedEvents)}`],
    ];
    if (cgroup) lines.push('', `Server in ${cgroup.how}. Its memory budget: ${JSON.stringify(Object.fromEntries(Object.entries(budget).filter(([k]) => !['level', 'time', 'pid', 'hostname', 'msg'].includes(k))))}.`);
    lines.push(
      '',
      `RSS: ${fmt(rssValues[0])} MB at the start of the steady phase, ${fmt(rssValues.at(-1)!)} MB at the end, max ${fmt(Math.max(...rssValues))} MB; trend ${fmt(rssSlope, 2)} MB/min over ${rss.length} samples (every ${RSS_EVERY_MS / 1000} s).`,
      '',
      '| criterion | result | detail |',
      '|---|---|---|',
      ...checks.map(([name, ok, detail]) => `| ${name} | ${ok ? 'PASS' : 'FAIL'} | ${detail} |`),
      '',
    );
    process.stdout.write(lines.join('\n'));
    if (checks.some(([, ok]) => !ok)) process.exitCode = 1;
  } finally {
    client.close();
    const code = await server.stop();
    cgroup?.remove();
    if (process.env.SOAK_SERVER_LOG) fs.writeFileSync(process.env.SOAK_SERVER_LOG, server.output());
    if (code !== 0) {
      process.stderr.write(`server exited with ${code}\n${server.output().slice(-3000)}\n`);
      process.exitCode = 1;
    }
  }
}

await main();
