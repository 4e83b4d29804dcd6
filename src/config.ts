/**
 * Configuration: read from the environment exactly once at start-up into one typed object.
 * Nothing else in the code base reads `process.env`.
 */
import os from 'node:os';
import path from 'node:path';
import type { LogLevel } from './kernel/logger.js';
import { passwordProblem } from './sessions/passwords.js';
import { cgroupMemoryLimit, type MemoryLimitSource } from './kernel/memory-limit.js';
import { DEFAULT_MEMORY_LIMIT_MB, MIN_MEMORY_LIMIT_MB, planMemory, type MemoryPlan } from './kernel/memory-budget.js';

export interface Config {
  /** The memory budget the defaults below were derived from, where it came from, and the split (logged at start). */
  memory: MemoryPlan & { source: string; cgroupLimitMb: number | null };
  /** Shared memory for flush records until the event store has them, and how much of it may wait for the event store. */
  recordMemoryBytes: number;
  eventStoreMaxLagBytes: number;
  /** Distinct IPs whose GeoIP answers are remembered. */
  geoipCacheEntries: number;
  host: string;
  port: number;
  dataDir: string;
  logLevel: LogLevel;
  /** Largest accepted request body for capture routes, in bytes (compressed, as sent). */
  bodyLimitBytes: number;
  /** Largest decoded (decompressed) capture payload, in bytes; stops gzip bombs while inflating. */
  decodedLimitBytes: number;
  /** Largest single event (JSON bytes); larger events are dropped and counted. */
  maxEventBytes: number;
  /** Whether X-Forwarded-For is trusted for the client IP. */
  trustProxy: boolean;
  /** Metadata in this PostgreSQL database instead of the data folder's SQLite file (docs/scale-out-cluster.md). */
  postgresUrl: string | undefined;
  /** Events in ClickHouse instead of the data folder's DuckDB file (docs/scale-out-cluster.md). */
  clickhouse: { urls: string[]; cluster: string | null; database: string } | undefined;
  /** Set: capture appends to this NATS JetStream stream and ingestion consumes it (needs PostgreSQL). */
  nats: { urls: string[]; stream: string; partitions: number; publishTimeoutMs: number; maxBytes: number } | undefined;
  /** DuckDB's memory ceiling (its caches grow to 80% of RAM otherwise). */
  duckdbMemoryLimit: string;
  /** Threads DuckDB may use for one query or checkpoint (the calling thread included). */
  duckdbThreads: number;
  /** Time limit of an events query in ms (0 = none); exports have none. */
  queryTimeoutMs: number;
  /** DuckDB is closed after this long without event writes or queries (0 = kept open); the next one opens it. */
  eventStoreIdleCloseSeconds: number;
  /** Keys forced at bootstrap (deployments and tests rely on these). */
  bootstrapProjectApiKey: string | undefined;
  bootstrapPersonalApiKey: string | undefined;
  /** The first owner's e-mail and password (a password is generated and printed once when unset). */
  ownerEmail: string;
  ownerPassword: string | undefined;
  geoipEnabled: boolean;
  /** Drop events whose properties say they come from a bot (`$browser_type`, user-agent properties). */
  dropBotEvents: boolean;
  /** Group commit: flush at most this many ms after the first pending event... */
  flushIntervalMs: number;
  /** ...or as soon as this many events are pending. */
  flushMaxEvents: number;
  /** Capture answers 503 while more than this many events wait for a flush. */
  maxPendingEvents: number;
  /** Distinct ids whose persons ingestion keeps in memory between flushes (0 = no cache; always 0 with PostgreSQL). */
  personCacheSize: number;
  /** Acknowledged events the event store may lag behind before flushes wait for it. */
  eventStoreMaxLagEvents: number;
  /** Events whose timestamp is older than this many days are deleted (0 = kept for ever). */
  retentionDays: number;
  /** Seconds between retention passes (the first runs at start-up). */
  retentionIntervalSeconds: number;
  /** Seconds between scheduled recalculations of every dynamic cohort (0: only on change). */
  cohortRecalculationSeconds: number;
  /** Seconds a person deletion waits before the event file is compacted (deletions in that time share one compaction). */
  deletionCompactionDelaySeconds: number;
  /** Seconds a person deletion waits for other nodes' flushes from before it to reach a shared event store. */
  deletionNodeWaitSeconds: number;
  /** Worker threads answering /decide and /flags (0 = the main thread answers them). */
  flagThreads: number;
  /** Public base URL used in pagination links; derived from the request when unset. */
  publicUrl: string | undefined;
  /** Per personal API key, requests per minute on /api/ (0 = unlimited). */
  apiRateLimitPerMinute: number;
  /** Concurrent connection cap and slow-client timeouts. */
  maxConnections: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** Fault tests only (SIGHTLINE_TEST_KILL_AFTER_META_COMMIT): SIGKILL itself after this many metadata commits; 0 = never. */
  killAfterMetaCommits: number;
  /** How long SIGTERM may take to drain before the process exits anyway. */
  shutdownTimeoutMs: number;
  /** The longest drain window (serving with `Connection: close` while requests keep coming) before the listener closes. */
  shutdownDrainMs: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

function memorySize(env: Env, name: string, fallback: string): string {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d+(\.\d+)?\s*(KB|MB|GB|KiB|MiB|GiB)$/i.test(raw)) throw new ConfigError(`${name} must look like 256MB or 1GB, got "${raw}"`);
  return raw;
}

/** Checked at every start, so that a refused password never leaves the first owner without one. */
function ownerPassword(env: Env): string | undefined {
  // Not trimmed: spaces may belong to a passphrase.
  const value = env.SIGHTLINE_OWNER_PASSWORD || undefined;
  const problem = value === undefined ? null : passwordProblem(value);
  if (problem) throw new ConfigError(`SIGHTLINE_OWNER_PASSWORD: ${problem}`);
  return value;
}

/** A libpq-style URL; its password is never echoed back in the error. */
function postgresUrl(env: Env): string | undefined {
  const raw = env.SIGHTLINE_POSTGRES_URL?.trim();
  if (!raw) return undefined;
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    // reported below
  }
  if (!url || !['postgres:', 'postgresql:'].includes(url.protocol) || !url.hostname) {
    throw new ConfigError('SIGHTLINE_POSTGRES_URL must look like postgres://user:password@host:5432/database');
  }
  return raw;
}

/** Comma-separated URLs, each with a host and one of `protocols`; a ConfigError saying `problem` otherwise. */
function urlList(raw: string, protocols: string[], problem: string): string[] {
  const urls = raw.split(',').map((url) => url.trim()).filter(Boolean);
  for (const url of urls) {
    let parsed: URL | null = null;
    try {
      parsed = new URL(url);
    } catch {
      // reported below
    }
    if (!parsed || !protocols.includes(parsed.protocol) || !parsed.hostname) throw new ConfigError(problem);
  }
  return urls;
}

/**
 * SIGHTLINE_CLICKHOUSE_URL: one or more http(s) URLs, comma-separated (the first is used; a
 * Distributed table reaches the rest); SIGHTLINE_CLICKHOUSE_CLUSTER: the cluster name that makes
 * events a Distributed table; SIGHTLINE_CLICKHOUSE_DATABASE: the database (default sightline).
 */
function clickhouseSettings(env: Env): Config['clickhouse'] {
  const raw = env.SIGHTLINE_CLICKHOUSE_URL?.trim();
  if (!raw) return undefined;
  const urls = urlList(raw, ['http:', 'https:'], 'SIGHTLINE_CLICKHOUSE_URL must be http(s)://host:8123 URLs, comma-separated');
  const name = /^[A-Za-z_][A-Za-z0-9_]*$/;
  const cluster = env.SIGHTLINE_CLICKHOUSE_CLUSTER?.trim() || null;
  const database = env.SIGHTLINE_CLICKHOUSE_DATABASE?.trim() || 'sightline';
  if (cluster !== null && !name.test(cluster)) throw new ConfigError('SIGHTLINE_CLICKHOUSE_CLUSTER must be a cluster name of letters, digits and _');
  if (!name.test(database)) throw new ConfigError('SIGHTLINE_CLICKHOUSE_DATABASE must be a database name of letters, digits and _');
  return { urls, cluster, database };
}

/**
 * The JetStream log's settings. Partition ownership uses PostgreSQL's advisory locks, so the log is
 * a part of the distributed mode: without SIGHTLINE_POSTGRES_URL the setting is ignored (embedded
 * mode keeps its local flush log).
 */
function natsSettings(env: Env, postgres: string | undefined): Config['nats'] {
  const raw = env.SIGHTLINE_NATS_URL?.trim();
  if (!raw || !postgres) return undefined;
  const urls = urlList(raw, ['nats:', 'tls:'], 'SIGHTLINE_NATS_URL must be nats://host:4222 URLs, comma-separated');
  const stream = env.SIGHTLINE_NATS_STREAM?.trim() || 'SIGHTLINE_INGEST';
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(stream)) throw new ConfigError('SIGHTLINE_NATS_STREAM must be a stream name of letters, digits, _ and -');
  return {
    urls,
    stream,
    partitions: integer(env, 'SIGHTLINE_NATS_PARTITIONS', 8, 1, 256),
    publishTimeoutMs: integer(env, 'SIGHTLINE_NATS_PUBLISH_TIMEOUT_MS', 5_000, 100, 60_000),
    maxBytes: integer(env, 'SIGHTLINE_NATS_MAX_MB', 1_024, 1, 1_048_576) * MB,
  };
}

const MB = 1024 * 1024;

/** Where the machine's facts come from (tests give their own). */
export interface Machine {
  cgroupLimit: () => MemoryLimitSource | null;
  totalMemoryBytes: number;
  cores: number;
}

const THIS_MACHINE: Machine = { cgroupLimit: () => cgroupMemoryLimit(), totalMemoryBytes: os.totalmem(), cores: os.availableParallelism() };

/**
 * The memory budget: SIGHTLINE_MEMORY_LIMIT_MB, else the cgroup's limit, else a small VM's
 * (never more than the machine has). Too little to run in is a configuration error.
 */
function memoryBudget(env: Env, machine: Machine): Config['memory'] {
  const cgroup = machine.cgroupLimit();
  const cgroupLimitMb = cgroup ? Math.floor(cgroup.bytes / MB) : null;
  const totalMb = Math.floor(machine.totalMemoryBytes / MB);
  const explicit = integer(env, 'SIGHTLINE_MEMORY_LIMIT_MB', 0, 1, 1_048_576);
  let limitMb: number;
  let source: string;
  if (explicit > 0) [limitMb, source] = [explicit, 'SIGHTLINE_MEMORY_LIMIT_MB'];
  else if (cgroupLimitMb !== null) [limitMb, source] = [Math.min(cgroupLimitMb, totalMb), `cgroup (${cgroup!.from})`];
  else [limitMb, source] = [Math.min(DEFAULT_MEMORY_LIMIT_MB, totalMb), `default: no memory limit found, sized for ${DEFAULT_MEMORY_LIMIT_MB} MB`];
  if (limitMb < MIN_MEMORY_LIMIT_MB) {
    throw new ConfigError(
      `Sightline needs at least ${MIN_MEMORY_LIMIT_MB} MB of memory, and this process may use ${limitMb} MB (${source}). Give it more memory` +
        (source === 'SIGHTLINE_MEMORY_LIMIT_MB' ? ' or raise SIGHTLINE_MEMORY_LIMIT_MB.' : '.'),
    );
  }
  return { ...planMemory(limitMb, machine.cores), source, cgroupLimitMb };
}

export function loadConfig(env: Env = process.env, machine: Machine = THIS_MACHINE): Config {
  const memory = memoryBudget(env, machine);
  const bodyLimitBytes = integer(env, 'SIGHTLINE_BODY_LIMIT_BYTES', 20 * MB, 1024, 1024 * MB);
  const postgres = postgresUrl(env);
  return {
    memory,
    recordMemoryBytes: memory.recordMemoryBytes,
    eventStoreMaxLagBytes: memory.eventStoreMaxLagBytes,
    geoipCacheEntries: memory.geoipCacheEntries,
    host: env.SIGHTLINE_HOST?.trim() || '0.0.0.0',
    port: integer(env, 'SIGHTLINE_PORT', 8000, 0, 65535),
    dataDir: path.resolve(env.SIGHTLINE_DATA_DIR?.trim() || './data'),
    postgresUrl: postgres,
    clickhouse: clickhouseSettings(env),
    nats: natsSettings(env, postgres),
    logLevel: oneOf(env, 'SIGHTLINE_LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
    bodyLimitBytes,
    decodedLimitBytes: integer(env, 'SIGHTLINE_DECODED_LIMIT_BYTES', Math.max(bodyLimitBytes, memory.decodedLimitBytes), 1024, 4096 * MB),
    maxEventBytes: integer(env, 'SIGHTLINE_MAX_EVENT_BYTES', MB, 1024, 100 * MB),
    trustProxy: bool(env, 'SIGHTLINE_TRUST_PROXY', false),
    duckdbMemoryLimit: memorySize(env, 'SIGHTLINE_DUCKDB_MEMORY_LIMIT', `${memory.duckdbMemoryLimitMb}MB`),
    // One: a second DuckDB thread took a core from HTTP and the group commit whenever a
    // checkpoint or a query ran, which raised capture's p99 (docs/ingestion.md, "DuckDB threads").
    duckdbThreads: integer(env, 'SIGHTLINE_DUCKDB_THREADS', 1, 1, 256),
    queryTimeoutMs: integer(env, 'SIGHTLINE_QUERY_TIMEOUT_MS', 30_000, 0, 3_600_000),
    eventStoreIdleCloseSeconds: integer(env, 'SIGHTLINE_EVENT_STORE_IDLE_CLOSE_SECONDS', 30, 0, 86_400),
    bootstrapProjectApiKey: env.SIGHTLINE_PROJECT_API_KEY?.trim() || undefined,
    bootstrapPersonalApiKey: env.SIGHTLINE_PERSONAL_API_KEY?.trim() || undefined,
    ownerEmail: env.SIGHTLINE_OWNER_EMAIL?.trim() || 'admin@sightline.local',
    ownerPassword: ownerPassword(env),
    geoipEnabled: bool(env, 'SIGHTLINE_GEOIP', true),
    dropBotEvents: bool(env, 'SIGHTLINE_DROP_BOT_EVENTS', false),
    flushIntervalMs: integer(env, 'SIGHTLINE_FLUSH_INTERVAL_MS', 5, 0, 10_000),
    flushMaxEvents: integer(env, 'SIGHTLINE_FLUSH_MAX_EVENTS', memory.flushMaxEvents, 1, 1_000_000),
    maxPendingEvents: integer(env, 'SIGHTLINE_MAX_PENDING_EVENTS', memory.maxPendingEvents, 1, 100_000_000),
    // Off with a shared metadata store: other nodes change persons this cache would not see.
    personCacheSize: postgres ? 0 : integer(env, 'SIGHTLINE_PERSON_CACHE_SIZE', memory.personCacheSize, 0, 10_000_000),
    eventStoreMaxLagEvents: integer(env, 'SIGHTLINE_EVENT_STORE_MAX_LAG_EVENTS', 100_000, 1, 100_000_000),
    retentionDays: integer(env, 'SIGHTLINE_RETENTION_DAYS', 0, 0, 36_500),
    retentionIntervalSeconds: integer(env, 'SIGHTLINE_RETENTION_INTERVAL_SECONDS', 3_600, 1, 86_400),
    cohortRecalculationSeconds: integer(env, 'SIGHTLINE_COHORT_RECALCULATION_SECONDS', 900, 0, 604_800),
    deletionCompactionDelaySeconds: integer(env, 'SIGHTLINE_DELETION_COMPACTION_DELAY_SECONDS', 3_600, 0, 604_800),
    deletionNodeWaitSeconds: integer(env, 'SIGHTLINE_DELETION_NODE_WAIT_SECONDS', 60, 0, 3_600),
    // One per core, not one fewer: the main thread spends most of a flag request waiting for a
    // flag thread, and two threads on 2 cores served 7-13% more requests than one (docs/perf-log/).
    // Fewer where memory is short (memory-budget.ts).
    flagThreads: integer(env, 'SIGHTLINE_FLAG_THREADS', memory.flagThreads, 0, 64),
    publicUrl: env.SIGHTLINE_PUBLIC_URL?.trim().replace(/\/+$/, '') || undefined,
    apiRateLimitPerMinute: integer(env, 'SIGHTLINE_API_RATE_LIMIT_PER_MINUTE', 480, 0, 1_000_000),
    maxConnections: integer(env, 'SIGHTLINE_MAX_CONNECTIONS', 10_000, 1, 1_000_000),
    headersTimeoutMs: integer(env, 'SIGHTLINE_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
    requestTimeoutMs: integer(env, 'SIGHTLINE_REQUEST_TIMEOUT_MS', 60_000, 100, 3_600_000),
    shutdownTimeoutMs: integer(env, 'SIGHTLINE_SHUTDOWN_TIMEOUT_MS', 15_000, 100, 600_000),
    shutdownDrainMs: integer(env, 'SIGHTLINE_SHUTDOWN_DRAIN_MS', 2_000, 0, 300_000),
    killAfterMetaCommits: integer(env, 'SIGHTLINE_TEST_KILL_AFTER_META_COMMIT', 0, 0, 1_000_000_000),
  };
}
