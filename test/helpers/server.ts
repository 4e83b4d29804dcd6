/**
 * Starts the real service as a child process on a temp data dir and a free port, the way a
 * user runs it, and talks HTTP to it. No mocks of our own stores anywhere.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { clusterPostgresUrl } from './cluster.js';
import { databaseFor } from './postgres-databases.js';
import { clickhouseEnvFor } from './clickhouse-databases.js';
import { chdbLaunchFor } from './chdb.js';
import { dropNatsStreamAtExit } from './drop-at-exit.js';
import { startRoundRobinProxy } from './round-robin-proxy.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * How package.json's `start` script runs the compiled server, so that benchmarks measure that
 * process: glibc with two malloc arenas instead of one per thread (DuckDB's and the worker
 * threads' freed memory stayed in arenas of their own) and fixed trim and mmap thresholds, and V8
 * young generations of 2 MB semi-spaces (the default 16 MB ones, in each isolate, stayed resident
 * after a burst). docs/configuration-memory.md says what each saves.
 */
export const START_ENV = { MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '131072', MALLOC_MMAP_THRESHOLD_: '131072' };
export const START_NODE_ARGS = ['--max-semi-space-size=2'];

export interface TestServer {
  url: string;
  /** Each node's own address (one; two with SIGHTLINE_TEST_NODES=2): per-process figures such as /metrics are read from every one. */
  nodeUrls: string[];
  port: number;
  dataDir: string;
  /** The settings that name the server's stores: a CLI run with them works on the same data. */
  storeEnv: Record<string, string>;
  projectKey: string;
  personalKey: string;
  process: ChildProcess;
  /** Everything the process printed so far (stdout + stderr). */
  output(): string;
  /** GET/POST/PATCH/DELETE an /api/ path with the personal key. */
  api(pathAndQuery: string, init?: { method?: string; body?: unknown; key?: string | null; headers?: Record<string, string> }): Promise<Response>;
  /** POST a JSON body to a capture path. */
  post(pathAndQuery: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  /** SIGTERM and wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
}

export interface StartOptions {
  dataDir?: string;
  env?: Record<string, string>;
  projectKey?: string;
  personalKey?: string;
  timeoutMs?: number;
  /** Extra node flags for the server process (e.g. --cpu-prof when profiling a benchmark). */
  nodeArgs?: string[];
  /**
   * `source` (the default): `src/` through tsx, as the tests run it. `build`: the compiled
   * `dist/` (built beforehand), as `npm start` runs it; benchmarks measure that, since tsx
   * alone adds ~80 MB of RSS.
   */
  entry?: 'source' | 'build';
  /** A command that runs node for us (e.g. one that first moves itself into a memory cgroup): node's path and arguments follow it. */
  launcher?: string[];
  /** One process even when SIGHTLINE_TEST_NODES=2 (a test about that process: its crash, its memory). */
  singleNode?: boolean;
}

/**
 * Temp directories made here are removed when the process exits (each test file runs in a
 * process of its own; a soak leaves gigabytes): SIGHTLINE_KEEP_TEMP_DIRS=1 keeps them to look
 * at. Tests stop their servers before that; a server still running then (a test that failed
 * midway) loses its directory.
 */
const tempDirs = new Set<string>();
/** Servers still running when the file's process exits (a test that failed midway; --test-force-exit) go with it. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
  if (process.env.SIGHTLINE_KEEP_TEMP_DIRS === '1') return;
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

export function newTempDir(prefix = 'sightline-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/** A JetStream stream name per data folder, so that test servers never read each other's batches. */
function streamFor(dataDir: string): string {
  return `T_${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}`;
}

/**
 * One server, or with SIGHTLINE_TEST_NODES=2 (and the cluster's PostgreSQL and ClickHouse, which the
 * nodes share) two nodes behind a round-robin proxy: the suites then check that every node is
 * equal, since consecutive requests of a test land on different nodes. `process` is the first
 * node's.
 */
export async function startServer(options: StartOptions = {}): Promise<TestServer> {
  const first = await startNode(options);
  const shared = first.storeEnv.SIGHTLINE_POSTGRES_URL !== undefined && first.storeEnv.SIGHTLINE_CLICKHOUSE_URL !== undefined;
  if (process.env.SIGHTLINE_TEST_NODES !== '2' || options.singleNode || !shared) return first;
  const { SIGHTLINE_DATA_DIR: _own, ...sharedEnv } = first.storeEnv;
  const secondDir = `${first.dataDir}-node2`;
  fs.mkdirSync(secondDir, { recursive: true });
  tempDirs.add(secondDir);
  let second: TestServer;
  try {
    second = await startNode({ ...options, dataDir: secondDir, projectKey: first.projectKey, personalKey: first.personalKey, env: { ...options.env, ...sharedEnv } });
  } catch (error) {
    await first.stop();
    throw error;
  }
  const proxy = await startRoundRobinProxy([first.url, second.url]);
  return {
    ...first,
    ...httpClient(proxy.url, first.personalKey),
    url: proxy.url,
    nodeUrls: [first.url, second.url],
    port: proxy.port,
    output: () => `${first.output()}\n--- second node ---\n${second.output()}`,
    async stop() {
      const [code] = await Promise.all([first.stop(), second.stop()]);
      await proxy.close();
      // A pass of the suites that never reached the second node would prove nothing about it.
      const counts = proxy.counts();
      if (counts[0] + counts[1] > 1 && counts.includes(0)) throw new Error(`the proxy sent every request to one node (${counts.join(' / ')})`);
      return code;
    },
    async kill() {
      await Promise.all([first.kill(), second.kill()]);
      await proxy.close();
    },
  };
}

async function startNode(options: StartOptions): Promise<TestServer> {
  const dataDir = options.dataDir ?? newTempDir();
  const projectKey = options.projectKey ?? `phc_test${randomBytes(12).toString('hex')}`;
  const personalKey = options.personalKey ?? `phx_test${randomBytes(12).toString('hex')}`;
  const build = options.entry === 'build';
  // With SIGHTLINE_TEST_EVENT_STORE=chdb, events go to a ClickHouse in the server's process (a preload, in TypeScript).
  const chdb = options.env?.SIGHTLINE_CLICKHOUSE_URL === undefined ? chdbLaunchFor(dataDir) : { env: {}, nodeArgs: [] };
  const tsx = build && chdb.nodeArgs.length === 0 ? [] : ['--import', 'tsx'];
  const entry = build ? [...START_NODE_ARGS, ...tsx, ...chdb.nodeArgs, path.join(ROOT, 'dist/main.js')] : [...tsx, ...chdb.nodeArgs, path.join(ROOT, 'src/main.ts')];
  const nodeCommand = [process.execPath, ...(options.nodeArgs ?? []), ...entry, 'serve'];
  const [command, ...args] = [...(options.launcher ?? []), ...nodeCommand];
  // With the cluster tests on, metadata goes to PostgreSQL: one database per data folder.
  const clusterPostgres = options.env?.SIGHTLINE_POSTGRES_URL === undefined ? clusterPostgresUrl() : null;
  const postgresEnv: Record<string, string> = clusterPostgres ? { SIGHTLINE_POSTGRES_URL: await databaseFor(clusterPostgres, dataDir) } : {};
  // With SIGHTLINE_TEST_EVENT_STORE=clickhouse, events go to the cluster's ClickHouse: one database per data folder.
  const clickhouseEnv = options.env?.SIGHTLINE_CLICKHOUSE_URL === undefined ? { ...clickhouseEnvFor(dataDir), ...chdb.env } : {};
  // With the cluster tests on, NATS set and SIGHTLINE_TEST_NATS_LOG=1, capture goes through a JetStream
  // stream of the server's own (test/cluster/natslog.test.ts sets its own; the other suites opt in).
  const natsEnv: Record<string, string> = clusterPostgres && process.env.SIGHTLINE_NATS_URL && process.env.SIGHTLINE_TEST_NATS_LOG === '1' ? { SIGHTLINE_NATS_URL: process.env.SIGHTLINE_NATS_URL, SIGHTLINE_NATS_STREAM: streamFor(dataDir) } : {};
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? os.tmpdir(),
    SIGHTLINE_HOST: '127.0.0.1',
    SIGHTLINE_PORT: '0',
    SIGHTLINE_DATA_DIR: dataDir,
    SIGHTLINE_LOG_LEVEL: 'info',
    SIGHTLINE_PROJECT_API_KEY: projectKey,
    SIGHTLINE_PERSONAL_API_KEY: personalKey,
    // NATS reserves a stream's bound on its servers' storage (10 GiB each in the local cluster):
    // a test's streams stay well below the 1 GiB default, and are deleted when its file ends.
    SIGHTLINE_NATS_MAX_MB: '256',
    ...(build ? START_ENV : {}),
    ...postgresEnv,
    ...clickhouseEnv,
    ...natsEnv,
    ...options.env,
  };
  if (env.SIGHTLINE_NATS_URL && env.SIGHTLINE_NATS_STREAM) dropNatsStreamAtExit(env.SIGHTLINE_NATS_URL.split(','), env.SIGHTLINE_NATS_STREAM);
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  running.add(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.once('exit', () => running.delete(child));

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // A server left running would keep the test file's process alive after its failure.
      child.kill('SIGKILL');
      reject(new Error(`server did not start in time:\n${output}`));
    }, options.timeoutMs ?? 60_000);
    const check = () => {
      const match = /"address":"(http:\/\/[^"]+)".*accepting traffic/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before accepting traffic:\n${output}`));
    });
  });

  // A crash is named where it happens: the test then fails with a bare 'fetch failed'.
  let stopRequested = false;
  child.once('exit', (code) => {
    if (!stopRequested && code !== 0 && code !== null) console.error(`the server at ${url} exited with ${code}; its last output:\n${output.slice(-4_000)}`);
  });

  const server: TestServer = {
    url,
    nodeUrls: [url],
    port: Number(new URL(url).port),
    dataDir,
    storeEnv: { SIGHTLINE_DATA_DIR: dataDir, ...postgresEnv, ...clickhouseEnv, ...natsEnv, ...pick(options.env, 'SIGHTLINE_POSTGRES_URL'), ...pick(options.env, 'SIGHTLINE_NATS_URL'), ...pick(options.env, 'SIGHTLINE_NATS_STREAM') },
    projectKey,
    personalKey,
    process: child,
    output: () => output,
    ...httpClient(url, personalKey),
    async stop() {
      stopRequested = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      stopRequested = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  return server;
}

/** `api` and `post` of a TestServer at `url`. */
function httpClient(url: string, personalKey: string): Pick<TestServer, 'api' | 'post'> {
  return {
    api(pathAndQuery, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      const key = init.key === undefined ? personalKey : init.key;
      if (key !== null) headers.authorization = `Bearer ${key}`;
      let body: string | undefined;
      if (init.body !== undefined) {
        headers['content-type'] ??= 'application/json';
        body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
      }
      return fetch(url + pathAndQuery, { method: init.method ?? 'GET', headers, body });
    },
    post(pathAndQuery, body, headers = {}) {
      return fetch(url + pathAndQuery, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' || body instanceof Uint8Array ? (body as string) : JSON.stringify(body),
      });
    },
  };
}

function pick(env: Record<string, string> | undefined, name: string): Record<string, string> {
  return env?.[name] === undefined ? {} : { [name]: env[name] };
}
