/**
 * Events API at scale: BENCH_EVENTS (default 1,000,000) realistic events, then p50/p99
 * of the list, filters, an aggregating select and a 100,000-row CSV export over HTTP — each next
 * to the same statements run directly on DuckDB in this process, in the same run.
 *
 * Loading: events are generated here and written straight through DuckDbEventStore.write (the
 * appender path every ingestion flush takes) into a stopped server's data dir, with a person per
 * distinct id. That takes seconds where /batch/ would take minutes, and the query side is what is
 * measured. The file is then copied: the server reopens the original, and this process opens the
 * copy with the same engine settings for the direct baseline.
 *
 * "Direct, same statements" runs the events API's own query code (count statistics, windowed
 * page, persons) on the copy, with no HTTP, auth or JSON. "Naive SQL" is what one would write by
 * hand: count(*) plus ORDER BY timestamp DESC LIMIT over the same filters, no window, no count
 * cache. Run alone with `npm run bench -- events`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { v7 as uuidv7 } from 'uuid';
import { csvExport, groupedPage, planRequest, walkPage } from '../src/events/service.js';
import { runner } from '../src/events/run.js';
import { StatsCache } from '../src/events/stats.js';
import { pageQuery, statsQuery } from '../src/events/statements.js';
import { ir } from '../src/hogql/index.js';
import { readEventsQuery, readPaging, type RawQuery } from '../src/events/params.js';
import type { QueryPlan } from '../src/events/plan.js';
import { personLookup } from '../src/events/persons.js';
import { DuckDbEventStore } from '../src/store/duckdb/event-store.js';
import { encodeFlushRecord } from '../src/store/flush-record.js';
import { SqliteMetaStore } from '../src/store/sqlite/meta-store.js';
import type { EventStore, PersonRecord, StoredEvent } from '../src/store/types.js';
import { newTempDir, type TestServer } from '../test/helpers/server.js';
import { startBenchServer } from './server.js';
import { makeEvent } from './events-gen.js';
import { percentile } from './load.js';
import { fmt } from './format.js';
import { memoryOf } from '../test/helpers/process-memory.js';

const DISTINCT_IDS = 3000;
const BATCH = 50_000;
const DAY_MS = 86_400_000;
const SPAN_MS = 30 * DAY_MS;
const CHAIN = 'button.btn.btn-primary:nth-child="1"nth-of-type="1"text="Sign up";form:nth-child="2"nth-of-type="1";body:nth-child="1"nth-of-type="1"';
const ENV = { SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', SIGHTLINE_GEOIP: 'false', SIGHTLINE_LOG_LEVEL: 'info' };

const ms = (n: number) => (n < 10 ? n.toFixed(1) : n.toFixed(0));

/** Oldest first, about as ingestion would append them, with a few minutes of jitter. */
function storedEvent(projectId: number, i: number, total: number, start: number): StoredEvent {
  const raw = makeEvent(i, DISTINCT_IDS);
  const jitter = ((i * 7919) % 600_000) - 300_000;
  const timestamp = new Date(Math.min(start + SPAN_MS, start + (i / total) * SPAN_MS + jitter));
  return {
    project_id: projectId,
    uuid: uuidv7(),
    event: raw.event as string,
    distinct_id: raw.distinct_id as string,
    person_id: null,
    timestamp,
    created_at: timestamp,
    properties_json: JSON.stringify(raw.properties),
    elements_chain: raw.event === '$autocapture' ? CHAIN : '',
    groups: ['', '', '', '', ''],
  };
}

/** Events into DuckDB; a person per distinct id into both stores, as a flush would write them (also the web benchmark's data). */
export async function load(dataDir: string, projectId: number, total: number): Promise<number> {
  const started = performance.now();
  const start = Date.now() - SPAN_MS;
  const persons: PersonRecord[] = Array.from({ length: DISTINCT_IDS }, (_, d) => ({
    uuid: `00000000-0000-7000-8000-${String(d).padStart(12, '0')}`,
    project_id: projectId,
    properties: { email: `user-${d}@example.com` },
    is_identified: d % 2 === 0,
    created_at: new Date(start).toISOString(),
    version: 0,
  }));
  const ids = persons.map((p, d) => ({ project_id: projectId, distinct_id: `user-${d}`, person_uuid: p.uuid }));
  const none = { deletePersons: [], reassignDistinctIds: [], newGroupTypes: [], upsertGroups: [], propertyDefinitions: [], eventDefinitions: [], eventProperties: [], eventUuids: [] };
  const meta = SqliteMetaStore.open(dataDir);
  await meta.ingest.applyChanges({ ...none, flushSeq: 1, upsertPersons: persons, setDistinctIds: ids });
  await meta.close();
  const store = await DuckDbEventStore.open(dataDir);
  try {
    for (let from = 0, seq = 1; from < total; from += BATCH, seq++) {
      const events = Array.from({ length: Math.min(BATCH, total - from) }, (_, k) => storedEvent(projectId, from + k, total, start));
      const first = from === 0;
      const changes = { ...none, flushSeq: seq, upsertPersons: first ? persons : [], setDistinctIds: first ? ids : [] };
      const flush = encodeFlushRecord({ changes, events });
      await store.write({ flushes: [flush], from: 0, to: flush.events, after: seq - 1 });
    }
  } finally {
    await store.close();
  }
  return (performance.now() - started) / 1000;
}

/** Up to 30 timed runs after 2 warm-ups, within a time budget (at least `minRuns`). */
async function timed(run: () => Promise<void>, budgetMs = 6_000, minRuns = 5): Promise<{ cold: number; runs: number[] }> {
  const once = async () => {
    const t0 = performance.now();
    await run();
    return performance.now() - t0;
  };
  const cold = await once();
  await once();
  const runs: number[] = [];
  const deadline = performance.now() + budgetMs;
  while (runs.length < 30 && (runs.length < minRuns || performance.now() < deadline)) runs.push(await once());
  return { cold, runs };
}


interface Case {
  name: string;
  query: RawQuery;
}

export async function benchEvents(): Promise<string> {
  const total = Number(process.env.BENCH_EVENTS ?? 1_000_000);
  const dataDir = newTempDir('sightline-bench-events-');
  const directDir = newTempDir('sightline-bench-direct-');
  let server: TestServer = await startBenchServer({ dataDir, env: ENV });
  const keys = { projectKey: server.projectKey, personalKey: server.personalKey };
  const projectId = ((await (await server.api('/api/projects/@current/')).json()) as { id: number }).id;
  await server.stop();

  process.stderr.write(`loading ${fmt(total)} events…\n`);
  const loadSeconds = await load(dataDir, projectId, total);
  fs.copyFileSync(path.join(dataDir, 'events.duckdb'), path.join(directDir, 'events.duckdb'));
  server = await startBenchServer({ dataDir, env: ENV, ...keys });
  const direct = await DuckDbEventStore.open(directDir);
  // SQLite takes a second process alongside the server, as the CLI does.
  const meta = SqliteMetaStore.open(dataDir);
  const persons = personLookup(meta.ingest);
  const lines: string[] = [];
  try {
    const cases: Case[] = [
      { name: 'latest 100', query: {} },
      { name: '`event=signed_up`', query: { event: 'signed_up' } },
      { name: 'property filter `plan = pro`', query: { properties: JSON.stringify([{ key: 'plan', value: 'pro' }]) } },
      { name: '`distinct_id=user-77`', query: { distinct_id: 'user-77' } },
      { name: '`select` event, count() over all events', query: { select: JSON.stringify(['event', 'count()']) } },
    ];
    const plan = (query: RawQuery) => planRequest(readEventsQuery(query, projectId, new Date()), async () => new Map(), readPaging(query, 'json'));
    lines.push(
      `${fmt(total)} events over 30 days, ${DISTINCT_IDS} persons; loaded in ${loadSeconds.toFixed(0)} s (${fmt(total / loadSeconds)} events/s) through DuckDbEventStore.write; DuckDB file ${fmt(fs.statSync(path.join(directDir, 'events.duckdb')).size / 2 ** 20)} MiB.`,
      '',
      '| request (JSON, limit 100) | API p50 ms | API p99 ms | API first request ms | direct, same statements p50 / p99 ms | API ÷ direct (p50) | naive SQL p50 ms |',
      '|---|---|---|---|---|---|---|',
    );
    const directCache = new StatsCache();
    for (const c of cases) {
      process.stderr.write(`${c.name}…\n`);
      const url = `/api/projects/${projectId}/events/?${new URLSearchParams(c.query as Record<string, string>)}`;
      const api = await timed(async () => {
        const response = await server.api(url);
        if (response.status !== 200) throw new Error(`${url}: ${response.status} ${await response.text()}`);
        await response.arrayBuffer();
      });
      const same = await timed(async () => {
        const p = await plan(c.query);
        const run = runner(direct, p.hogqlAttr);
        if (p.select?.grouped) await groupedPage(run, p, 100, 0);
        else await walkPage(run, persons, p, readPaging({}, 'json'), directCache, direct.pageBytes);
      });
      const naive = await timed(() => naiveSql(direct, plan, c.query), 3_000, 3);
      const p50 = (t: { runs: number[] }) => percentile(t.runs, 50);
      lines.push(
        `| ${c.name} | ${ms(p50(api))} | ${ms(percentile(api.runs, 99))} | ${ms(api.cold)} | ${ms(p50(same))} / ${ms(percentile(same.runs, 99))} | ${(p50(api) / p50(same)).toFixed(2)} | ${ms(p50(naive))} |`,
      );
    }

    process.stderr.write('csv…\n');
    const CSV_ROWS = 100_000;
    const rssBefore = memoryOf(server.process.pid!).rssMb;
    const csvApi = await timed(async () => {
      const response = await server.api(`/api/projects/${projectId}/events/?format=csv&limit=${CSV_ROWS}`);
      let bytes = 0;
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
      if (response.status !== 200 || bytes === 0) throw new Error(`csv: ${response.status}`);
    }, 10_000, 3);
    const serverPeak = memoryOf(server.process.pid!).hwmMb;
    const csvDirect = await timed(async () => {
      const p = await plan({});
      let rows = 0;
      for await (const chunk of direct.stream(direct.dialect.print(pageQuery(p, { limit: CSV_ROWS, offset: 0, cursor: null, since: null, withPersonId: true })), 1000)) rows += chunk.length;
      if (rows !== Math.min(CSV_ROWS, total)) throw new Error(`direct csv rows ${rows}`);
    }, 10_000, 3);
    const csvDirectEncoded = await timed(async () => {
      for await (const text of await csvExport(direct, await plan({}), readPaging({ limit: String(CSV_ROWS) }, 'csv'))) void text;
    }, 10_000, 3);
    const rate = (t: { runs: number[] }) => fmt(Math.min(CSV_ROWS, total) / (percentile(t.runs, 50) / 1000));
    lines.push(
      '',
      `| CSV export, ${fmt(CSV_ROWS)} newest events, properties flattened | p50 ms | p99 ms | rows/s (p50) |`,
      '|---|---|---|---|',
      `| API over HTTP (query, person join, CSV text, streamed) | ${ms(percentile(csvApi.runs, 50))} | ${ms(percentile(csvApi.runs, 99))} | ${rate(csvApi)} |`,
      `| direct: same query streamed from DuckDB, rows only | ${ms(percentile(csvDirect.runs, 50))} | ${ms(percentile(csvDirect.runs, 99))} | ${rate(csvDirect)} |`,
      `| direct: same query + the same CSV encoder, no HTTP | ${ms(percentile(csvDirectEncoded.runs, 50))} | ${ms(percentile(csvDirectEncoded.runs, 99))} | ${rate(csvDirectEncoded)} |`,
      '',
      `Server RSS before the exports ${fmt(rssBefore)} MiB; peak RSS of the server process over the whole run ${fmt(serverPeak)} MiB (DuckDB memory_limit 256MB).`,
      `Runs per figure: up to 30 after 2 warm-ups within a time budget (at least 5; 3 for naive SQL and CSV); "first request" is the cold run (no count cache yet). Load average at the end: ${os.loadavg().map((n) => n.toFixed(1)).join(' ')}.`,
    );
  } finally {
    await direct.close();
    await meta.close();
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(directDir, { recursive: true, force: true });
  }
  return lines.join('\n');
}

/** count(*) and a plain top-N over the same compiled filters: no window, no cache. */
async function naiveSql(store: EventStore, plan: (q: RawQuery) => Promise<QueryPlan>, query: RawQuery): Promise<void> {
  const p = await plan(query);
  const select = p.select;
  if (select?.grouped) {
    const columns = select.exprs.map((expr, i) => ({ expr, name: `c${i}` }));
    const grouped = ir.select({
      columns,
      from: { kind: 'table', table: 'events', alias: 'e', projectId: p.projectId },
      where: p.where,
      groupBy: select.groupBy,
      orderBy: [{ expr: columns[1].expr, desc: true }],
      limit: ir.constant(101, 'Integer'),
    });
    await store.query(store.dialect.print(grouped));
    return;
  }
  await store.query(store.dialect.print(statsQuery(p, -1)));
  await store.query(store.dialect.print(pageQuery(p, { limit: 101, offset: 0, cursor: null, since: null })));
}
