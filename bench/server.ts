/**
 * The server benchmarks measure: the compiled `dist/`, started as `npm start` starts it, built
 * once per benchmark process so that it matches the source being measured.
 */
import { execFileSync } from 'node:child_process';
import { loadConfig } from '../src/config.js';
import { DuckDbEventStore } from '../src/store/duckdb/event-store.js';
import { startServer, type StartOptions, type TestServer } from '../test/helpers/server.js';

let built = false;

/** What the harness sets itself: a benchmark never runs on the caller's data or port. */
const HARNESS_SETTINGS = new Set(['SIGHTLINE_HOST', 'SIGHTLINE_PORT', 'SIGHTLINE_DATA_DIR', 'SIGHTLINE_PROJECT_API_KEY', 'SIGHTLINE_PERSONAL_API_KEY']);

/** The other `SIGHTLINE_*` variables of the benchmark's environment, so a run can measure another setting: they win over the benchmark's own. */
const sightlineSettings = (): Record<string, string> =>
  Object.fromEntries(
    Object.entries(process.env).filter((entry): entry is [string, string] => entry[0].startsWith('SIGHTLINE_') && !HARNESS_SETTINGS.has(entry[0]) && entry[1] !== undefined),
  );

/** Builds `dist/` once per benchmark process. */
export function ensureBuilt(): void {
  if (built) return;
  execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
  built = true;
}

/**
 * The embedded mode unless the benchmark or this environment names a PostgreSQL: the test helper
 * would otherwise put the metadata on the local cluster's whenever the cluster is up.
 */
export async function startBenchServer(options: StartOptions = {}): Promise<TestServer> {
  ensureBuilt();
  return startServer({ ...options, env: { SIGHTLINE_POSTGRES_URL: '', ...options.env, ...sightlineSettings() }, entry: 'build' });
}

/**
 * The DuckDB threads and memory limit the benchmark's server runs with (its configuration from
 * this environment, as the server reads it), for hand-written SQL measured like for like.
 */
export function serverDuckSettings(): { threads: number; memoryLimit: string } {
  const config = loadConfig({ ...process.env });
  return { threads: config.duckdbThreads, memoryLimit: config.duckdbMemoryLimit };
}

/**
 * A data folder made by the server (project, keys), with the events file's schema in place for
 * a bench that writes events straight into DuckDB: the server opens that file at its first event.
 */
export async function startedDataDir(dataDir: string, options: StartOptions = {}): Promise<{ projectId: number }> {
  const server = await startBenchServer({ ...options, dataDir });
  const project = (await (await server.api('/api/projects/@current/')).json()) as { id: number };
  await server.stop();
  await (await DuckDbEventStore.open(dataDir)).close();
  return { projectId: project.id };
}
