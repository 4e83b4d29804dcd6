/**
 * What the fault tests (test/cluster/faults-*.test.ts) share: capture load sent the way an SDK
 * sends it (a batch answered 503 or not answered at all is sent again, unchanged, after
 * Retry-After), the acknowledged uuids, and checks that the store holds each exactly once.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import type { ClusterSettings } from './cluster.js';
import { dropClickHouseAtExit } from './drop-at-exit.js';
import { databaseFor } from './postgres-databases.js';
import { newTempDir, type TestServer } from './server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface SentEvent {
  event: string;
  distinct_id: string;
  uuid: string;
  timestamp: string;
  properties?: Record<string, unknown>;
}

export const FAULT_EVENT = 'fault test';

/**
 * Settings for nodes that share a PostgreSQL database, a ClickHouse database (`database`) and a
 * NATS stream of `partitions`, all new and named after `kind`; both databases are dropped at exit.
 */
export async function sharedNodesEnv(settings: ClusterSettings, kind: string, partitions: number) {
  const tag = randomBytes(6).toString('hex');
  const database = `sightline_test_${kind}_${tag}`;
  const metaUrl = await databaseFor(settings.postgresUrl, newTempDir());
  dropClickHouseAtExit(settings.clickhouseUrls[0], settings.clickhouseCluster, database);
  const env = {
    SIGHTLINE_POSTGRES_URL: metaUrl,
    SIGHTLINE_CLICKHOUSE_URL: settings.clickhouseUrls.join(','),
    SIGHTLINE_CLICKHOUSE_CLUSTER: settings.clickhouseCluster,
    SIGHTLINE_CLICKHOUSE_DATABASE: database,
    SIGHTLINE_NATS_URL: settings.natsServers.join(','),
    SIGHTLINE_NATS_STREAM: `T_${kind.toUpperCase()}_${tag}`,
    SIGHTLINE_NATS_PARTITIONS: String(partitions),
  };
  return { database, metaUrl, env };
}

/**
 * Holds partitions of the NATS log's stream (every one of `partitions`, or `only`) from a PostgreSQL
 * session of the test's, as a node that consumes nothing would (log/partition-owner.ts takes the
 * same advisory locks): no node processes their batches until `release`. The holder counts as a
 * live node in the fair share.
 */
export async function holdPartitions(metaUrl: string, stream: string, partitions: number, only?: number[]): Promise<{ release(): Promise<void> }> {
  const holder = new pg.Client({ connectionString: metaUrl });
  await holder.connect();
  for (const p of only ?? Array.from({ length: partitions }, (_, i) => i)) await holder.query('SELECT pg_advisory_lock(hashtext($1), $2)', [stream, p]);
  let held = true;
  return {
    async release() {
      if (held) await holder.end();
      held = false;
    },
  };
}

export function batchOf(size: number, people = 13): SentEvent[] {
  return Array.from({ length: size }, (_, i) => ({ event: FAULT_EVENT, distinct_id: `person-${i % people}`, uuid: randomUUID(), timestamp: new Date().toISOString() }));
}

/** One capture answer as the load saw it. */
export interface Answer {
  at: number;
  status: number | 'no answer';
  ms: number;
}

export interface LoadOptions {
  /** A batch to send by client `client` (default: `batchOf(batchSize)`). */
  makeBatch?: (client: number) => SentEvent[];
  /**
   * Share of acknowledged batches whose second half is sent again at once (to the next node):
   * an SDK that timed out re-sends the same uuids in a batch of another shape.
   */
  resendShare?: number;
}

/**
 * Capture load from `clients` concurrent senders until `stop()`. A batch is retried as an SDK
 * does (same uuids) on 503 or a network failure; any other status than 200 fails the test. With
 * several nodes (`servers` may be a function giving the live ones), a retry after no answer goes
 * to the next node, as a load balancer would send it.
 */
export class CaptureLoad {
  readonly acknowledged: string[] = [];
  /** Every uuid sent, acknowledged or not (an unanswered batch may be stored). */
  readonly sent = new Set<string>();
  readonly answers: Answer[] = [];
  /** Batches of already acknowledged uuids sent again (`resendShare`), and how many of them were acknowledged. */
  readonly resent = { sent: 0, acknowledged: 0 };
  private stopping = false;
  private readonly running: Promise<void>[];
  private readonly targets: () => TestServer[];

  constructor(
    servers: TestServer[] | (() => TestServer[]),
    clients = 2,
    private readonly batchSize = 20,
    private readonly options: LoadOptions = {},
  ) {
    this.targets = typeof servers === 'function' ? servers : () => servers;
    this.running = Array.from({ length: clients }, (_, i) => this.client(i));
  }

  private async client(index: number): Promise<void> {
    let at = index;
    const next = (): TestServer | undefined => this.targets()[at % Math.max(1, this.targets().length)];
    while (!this.stopping) {
      const batch = this.options.makeBatch?.(index) ?? batchOf(this.batchSize);
      for (const e of batch) this.sent.add(e.uuid);
      // An SDK gives up on a batch after some retries; here it keeps trying until told to stop.
      while (!this.stopping) {
        const began = Date.now();
        const response = await this.send(next(), batch);
        this.answers.push({ at: began, status: response?.status ?? 'no answer', ms: Date.now() - began });
        if (response?.status === 200) {
          this.acknowledged.push(...batch.map((e) => e.uuid));
          break;
        }
        if (response && response.status !== 503) assert.fail(`capture answered ${response.status}: ${await response.text()}`);
        if (!response) at += 1;
        const retryAfter = Number(response?.headers.get('retry-after') ?? 0);
        await sleep(retryAfter > 0 ? Math.min(retryAfter * 1000, 2_000) : 200);
      }
      if (!this.stopping && Math.random() < (this.options.resendShare ?? 0)) {
        this.resent.sent += 1;
        at += 1;
        // Already acknowledged: only the answer counts, the uuids are in `acknowledged`.
        if ((await this.send(next(), batch.slice(batch.length >> 1)))?.status === 200) this.resent.acknowledged += 1;
      }
    }
  }

  /** The answer, or null when there was none (or no node is up: every one is being restarted). */
  private send(server: TestServer | undefined, batch: SentEvent[]): Promise<Response | null> {
    if (!server) return Promise.resolve(null);
    return fetch(`${server.url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: server.projectKey, batch }),
      signal: AbortSignal.timeout(15_000),
    }).catch(() => null);
  }

  /** Answers in [from, to) (epoch ms), by status. */
  statuses(from = 0, to = Infinity): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const a of this.answers) if (a.at >= from && a.at < to) counts[a.status] = (counts[a.status] ?? 0) + 1;
    return counts;
  }

  /** Acknowledgements (200s) that began in [from, to). */
  acknowledgedBetween(from: number, to = Infinity): number {
    return this.answers.filter((a) => a.status === 200 && a.at >= from && a.at < to).length;
  }

  /** The first 200 that began at or after `from`, as ms after `from`; null when none. */
  firstAcknowledgedAfter(from: number): number | null {
    const first = this.answers.filter((a) => a.status === 200 && a.at >= from).sort((x, y) => x.at - y.at)[0];
    return first ? first.at + first.ms - from : null;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.running);
  }
}

function hogql(server: TestServer, query: string): Promise<Response> {
  return server.api('/api/projects/@current/query/', { method: 'POST', body: { query: { kind: 'HogQLQuery', query }, refresh: 'force_blocking' } });
}

/** [count(), count(distinct uuid)] of the fault test's events, through the query API. */
export async function counts(server: TestServer): Promise<[number, number]> {
  const response = await hogql(server, `select count(), count(distinct uuid) from events where event = '${FAULT_EVENT}'`);
  assert.equal(response.status, 200, await response.clone().text());
  const body = (await response.json()) as { results: [number, number][] };
  return [Number(body.results[0][0]), Number(body.results[0][1])];
}

/** Waits until the store holds `expected` distinct events, or the timeout; then counts once more (a late duplicate would show). */
export async function settledCounts(server: TestServer, expected: number, timeoutMs = 90_000): Promise<[number, number]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [, distinct] = await counts(server).catch(() => [0, 0]);
    if (distinct >= expected || Date.now() > deadline) {
      await sleep(1_000);
      return counts(server);
    }
    await sleep(250);
  }
}

/** How many of the uuids the store holds (asked in chunks: a query's text is bounded). */
export async function uuidsStored(server: TestServer, uuids: string[]): Promise<number> {
  let stored = 0;
  for (let i = 0; i < uuids.length; i += 2_000) {
    const list = uuids.slice(i, i + 2_000).map((u) => `'${u}'`).join(',');
    const response = await hogql(server, `select count(distinct uuid) from events where uuid in (${list})`);
    assert.equal(response.status, 200, await response.clone().text());
    stored += Number(((await response.json()) as { results: number[][] }).results[0][0]);
  }
  return stored;
}

/**
 * Every acknowledged event is stored, none twice; returns how long it took to get there. Waits for
 * these uuids, not for a count: the project's count also holds earlier phases' events, and reached
 * it before a dead node's batches came back.
 */
export async function assertStoredOnce(server: TestServer, acknowledged: string[], timeoutMs = 120_000): Promise<number> {
  const began = Date.now();
  let stored = await uuidsStored(server, acknowledged);
  while (stored < acknowledged.length && Date.now() - began < timeoutMs) {
    await sleep(500);
    stored = await uuidsStored(server, acknowledged);
  }
  const waited = Date.now() - began;
  assert.equal(stored, acknowledged.length, `every acknowledged event is stored (${stored} of ${acknowledged.length} after ${waited} ms)`);
  await sleep(1_000); // a late duplicate would show
  const [total, distinct] = await counts(server);
  assert.equal(total, distinct, 'no event is stored twice');
  return waited;
}

/** Runs scripts/cluster/cluster.sh (this checkout's cluster: its .cluster/ and port base). */
export async function clusterCommand(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)('bash', [path.join(ROOT, 'scripts/cluster/cluster.sh'), ...args], { cwd: ROOT, timeout: 120_000 });
  return stdout;
}

/** Polls `check` until it is true; how long that took (ms), or a failure after `timeoutMs`. */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<number> {
  const began = Date.now();
  for (;;) {
    if (await check().catch(() => false)) return Date.now() - began;
    if (Date.now() - began > timeoutMs) assert.fail(`${what} did not happen within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** A GET with a bound: the answer and how long it took, or a failure past `boundMs`. */
export async function timedGet(url: string, boundMs: number, init: RequestInit = {}): Promise<{ response: Response; body: unknown; ms: number }> {
  const began = Date.now();
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(boundMs) });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { response, body, ms: Date.now() - began };
}
