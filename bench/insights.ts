/**
 * `npm run bench -- insights`: the query API at scale. BENCH_INSIGHTS_EVENTS (default
 * 10,000,000) events — 50,000 persons, 30 event names, 90 days, realistic properties — are
 * written once with SQL straight into a stopped server's event store, in time order as ingestion
 * appends them (BENCH_INSIGHTS_LAYOUT=scattered: in no time order; insights-data.ts), kept in
 * BENCH_INSIGHTS_DIR (default <tmp>/sightline-insights-<events>-by-time, or -<events> when scattered) and reused, with the person
 * mirror (a person and a distinct id per user), and copied for the hand-written SQL. Then, over
 * HTTP with refresh force_blocking (no cache), p50/p99 of: the events API list (the baseline
 * every run has), HogQL count() by event and by day, trends total and DAU 30 days by day (in a
 * UTC project and in Europe/Paris), a 3-step funnel and an 8-week retention — each taking turns
 * with hand-written DuckDB SQL for the same numbers (on the copy, in this process, with the
 * server's DuckDB threads and memory limit), and whether both gave the same numbers. A kind not
 * registered in src/insights/kinds.ts is reported as absent. BENCH_INSIGHTS_STORE=chdb runs it all
 * with the events in ClickHouse 26.7 instead, beside hand-written ClickHouse SQL (insights-clickhouse.ts).
 */
import { DuckDBInstance } from '@duckdb/node-api';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { queryKinds } from '../src/insights/kinds.js';
import type { TestServer } from '../test/helpers/server.js';
import { CREATE_PENDING_EVENTS, INSERT_PENDING_EVENTS, PENDING_EVENTS } from '../src/store/duckdb/materialized.js';
import { fmt } from './format.js';
import { percentile } from './load.js';
import { serverDuckSettings, startBenchServer, startedDataDir } from './server.js';
import { alternating, funnelSql, retentionSql } from './insights-sql.js';
import { DIR, EVENTS, KEYS, PERSONS, CHUNK, DAYS, NAMES, STORE, LAYOUT, type DataSet } from './insights-data.js';
import * as ch from './insights-clickhouse-sql.js';
import { chdbServerOptions, makeChdbDataSet, openChdbHand } from './insights-clickhouse.js';
import { memoryOf } from '../test/helpers/process-memory.js';

const ROUNDS = Number(process.env.BENCH_INSIGHTS_ROUNDS ?? 15);
/** The events list scans every row group on this data set (~9 s a request): fewer rounds. */
const LIST_ROUNDS = Number(process.env.BENCH_INSIGHTS_LIST_ROUNDS ?? 3);

async function makeDataSet(): Promise<DataSet> {
  const marker = path.join(DIR, 'made.json');
  if (fs.existsSync(marker)) return JSON.parse(fs.readFileSync(marker, 'utf8')) as DataSet;
  fs.rmSync(DIR, { recursive: true, force: true });
  fs.mkdirSync(DIR, { recursive: true });
  const started = performance.now();
  const project = { id: (await startedDataDir(DIR, KEYS)).projectId };
  const end = Date.now();
  const endText = new Date(end).toISOString().replace('T', ' ').replace('Z', '');
  const instance = await DuckDBInstance.create(path.join(DIR, 'events.duckdb'), { threads: '2', memory_limit: '1GB' });
  const db = await instance.connect();
  const names = `[${NAMES.map((n) => `'${n}'`).join(', ')}]`;
  await db.run(`
    INSERT INTO persons SELECT ${project.id}, uuid(), json_object('email', 'user-' || i || '@example.com', 'plan', ['free', 'pro'][1 + i % 2]), true, TIMESTAMP '${endText}' - INTERVAL ${DAYS + 1} DAY
    FROM range(${PERSONS}) t(i)`);
  await db.run(`
    INSERT INTO person_distinct_ids SELECT ${project.id}, split_part(json_extract_string(properties, '$.email'), '@', 1), id FROM persons WHERE project_id = ${project.id}`);
  // Through the store's pending table, so that the materialized columns are filled as it fills them.
  await db.run(CREATE_PENDING_EVENTS);
  // A scattered but repeatable time per event: a multiplicative hash of i over the 90 days,
  // `back` seconds before the end.
  const span = DAYS * 86_400;
  const back = `((i * 40503) % ${span})`;
  const chunks = Math.ceil(EVENTS / CHUNK);
  for (let k = 0; k < chunks; k++) {
    // By time: chunk k holds the k-th slice of the days, oldest first, each in time order.
    const [newest, oldest] = [span - Math.round(((k + 1) * span) / chunks), span - Math.round((k * span) / chunks)];
    const rows =
      LAYOUT === 'time'
        ? `range(${EVENTS}) t(i) WHERE ${back} >= ${newest} AND ${back} < ${oldest} ORDER BY ${back} DESC, i`
        : `range(${k * CHUNK}, ${Math.min(EVENTS, (k + 1) * CHUNK)}) t(i)`;
    process.stderr.write(`events, chunk ${k + 1} of ${chunks}…\n`);
    await db.run(`
      INSERT INTO ${PENDING_EVENTS}
      SELECT ${project.id}, uuid(), ${names}[1 + (i * 7) % ${NAMES.length}], 'user-' || ((i * 2654435761) % ${PERSONS}), NULL,
             TIMESTAMP '${endText}' - to_seconds(${back}::BIGINT), TIMESTAMP '${endText}',
             json_object('$current_url', 'https://example.com/page/' || (i % 500), '$browser', ['Chrome', 'Firefox', 'Safari'][1 + i % 3],
                         '$os', ['Mac OS X', 'Windows', 'Linux', 'iOS'][1 + i % 4], '$session_id', 'sess-' || (i // 20),
                         '$geoip_country_code', ['GB', 'US', 'SE', 'DE'][1 + i % 4], 'plan', ['free', 'pro'][1 + i % 2], 'price', (i % 50) * 1.5),
             '', '', '', '', '', '', 0
      FROM ${rows}`);
    await db.run(INSERT_PENDING_EVENTS);
  }
  await db.run('CHECKPOINT');
  db.closeSync();
  instance.closeSync();
  fs.copyFileSync(path.join(DIR, 'events.duckdb'), path.join(DIR, 'direct.duckdb'));
  const data: DataSet = {
    note: `${fmt(EVENTS)} events of ${fmt(PERSONS)} persons, ${NAMES.length} names over ${DAYS} days, ${LAYOUT === 'time' ? 'stored in time order' : 'stored scattered in time'}, made in ${fmt((performance.now() - started) / 1000)} s (events.duckdb ${fmt(fs.statSync(path.join(DIR, 'events.duckdb')).size / 2 ** 20)} MB)`,
    end,
  };
  fs.writeFileSync(marker, JSON.stringify(data));
  return data;
}

const ev = (event: string) => ({ kind: 'EventsNode', event, name: event });
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const DAY_MS = 86_400_000;
type Rows = Record<string, unknown>[];

interface Measured {
  name: string;
  /** The project's time zone while it runs (set through the projects API). */
  timeZone: string;
  query: Record<string, unknown>;
  /** The same numbers by hand, on the copy of the file; absent where not written. */
  sql?: string;
  /** The same in ClickHouse SQL, for BENCH_INSIGHTS_STORE=chdb. */
  clickhouse?: string;
  /** Whether the API's results and the hand-written rows hold the same numbers. */
  same?: (results: any, rows: Rows) => boolean;
}

/** Trend results (one series, by day) against `d, n` rows. */
const sameTrend = (results: any, rows: Rows) => {
  const byDay = new Map(rows.map((r) => [String(r.d).slice(0, 10), Number(r.n)]));
  const series = results[0] as { days: string[]; data: number[] };
  return series.days.every((d, i) => (byDay.get(d) ?? 0) === series.data[i]) && rows.every((r) => series.days.includes(String(r.d).slice(0, 10)));
};

/** The queries timed, in order; relative dates count back from the data's end. */
function measured(end: number): Measured[] {
  const from30 = day(end - 30 * DAY_MS);
  const to = day(end);
  const dateRange = { date_from: from30, date_to: to };
  const trend = (math: string) => ({ kind: 'TrendsQuery', series: [{ ...ev('$pageview'), math }], interval: 'day', dateRange });
  /** `e.timestamp` within the range's days on the wall clock of `tz`. */
  const window = (tz: string) =>
    tz === 'UTC'
      ? `e.timestamp >= TIMESTAMP '${from30}' AND e.timestamp < TIMESTAMP '${to}' + INTERVAL 1 DAY`
      : `e.timestamp >= timezone('UTC', timezone('${tz}', TIMESTAMP '${from30}')) AND e.timestamp < timezone('UTC', timezone('${tz}', TIMESTAMP '${to}' + INTERVAL 1 DAY))`;
  const dayOf = (tz: string) => (tz === 'UTC' ? 'CAST(e.timestamp AS DATE)' : `CAST(timezone('${tz}', timezone('UTC', e.timestamp)) AS DATE)`);
  /** The instant the day of `e.timestamp` starts (toStartOfDay's DateTime), as one would write it. */
  const dayStart = (tz: string) =>
    tz === 'UTC' ? `date_trunc('day', e.timestamp)` : `timezone('UTC', timezone('${tz}', date_trunc('day', timezone('${tz}', timezone('UTC', e.timestamp)))))`;
  const pdi = `LEFT JOIN person_distinct_ids p ON p.project_id = e.project_id AND p.distinct_id = e.distinct_id`;
  const trendSql = (tz: string, value: string, join = '') =>
    `SELECT ${dayOf(tz)} AS d, ${value} AS n FROM events e ${join} WHERE e.project_id = 1 AND e.event = '$pageview' AND ${window(tz)} GROUP BY d ORDER BY d`;
  // Retention reads whole weeks (Sunday): from the week of date_from to the end of date_to's.
  const retentionFrom = end - 56 * DAY_MS;
  const weekStart = (ms: number) => ms - (new Date(ms).getUTCDay() * DAY_MS + (ms % DAY_MS));
  const hogqlByDay = (tz: string): Measured[] => [
    {
      name: `HogQL count by day, 30 days, ${tz}`,
      timeZone: tz,
      query: { kind: 'HogQLQuery', query: `select toStartOfDay(timestamp) as d, count() from events where timestamp >= '${from30}' and timestamp < toDateTime('${to}') + interval 1 day group by d order by d` },
      sql: `SELECT ${dayStart(tz)} AS d, count(*) AS n FROM events e WHERE project_id = 1 AND ${window(tz)} GROUP BY d ORDER BY d`,
      clickhouse: ch.countByDaySql(from30, to, tz),
      same: (results: [string, number][], rows) => results.length === rows.length && results.every(([, n], i) => Number(rows[i].n) === n),
    },
  ];
  const trends = (tz: string): Measured[] => [
    { name: `trends total, 30 days by day, ${tz}`, timeZone: tz, query: trend('total'), sql: trendSql(tz, 'count(*)'), clickhouse: ch.trendSql(from30, to, tz, 'total'), same: sameTrend },
    { name: `trends DAU, 30 days by day, ${tz}`, timeZone: tz, query: trend('dau'), sql: trendSql(tz, 'count(DISTINCT coalesce(p.person_id, e.person_id))', pdi), clickhouse: ch.trendSql(from30, to, tz, 'dau'), same: sameTrend },
  ];
  return [
    {
      name: 'HogQL count() by event, all events',
      timeZone: 'UTC',
      query: { kind: 'HogQLQuery', query: 'select event, count() from events group by event order by count() desc' },
      sql: `SELECT event, count(*) AS c FROM events WHERE project_id = 1 GROUP BY event ORDER BY c DESC`,
      clickhouse: ch.countByEventSql(),
      same: (results: [string, number][], rows) => results.every(([event, n]) => rows.some((r) => r.event === event && Number(r.c) === n)),
    },
    ...hogqlByDay('UTC'),
    ...trends('UTC'),
    ...hogqlByDay('Europe/Paris'),
    ...trends('Europe/Paris'),
    {
      name: 'funnel, 3 steps over 30 days, 14-day window',
      timeZone: 'UTC',
      query: { kind: 'FunnelsQuery', series: [ev('$pageview'), ev('signed_up'), ev('purchase')], dateRange, funnelsFilter: { funnelWindowInterval: 14, funnelWindowIntervalUnit: 'day' } },
      sql: funnelSql(['$pageview', 'signed_up', 'purchase'], from30, day(end + DAY_MS), 14),
      clickhouse: ch.funnelSql(['$pageview', 'signed_up', 'purchase'], from30, day(end + DAY_MS), 14),
      same: (results: { count: number }[], rows) => results.map((s) => s.count).join() === [rows[0].c0, rows[0].c1, rows[0].c2].map(Number).join(),
    },
    {
      name: 'retention, 8 weeks, $pageview → $pageview',
      timeZone: 'UTC',
      query: {
        kind: 'RetentionQuery',
        dateRange: { date_from: day(retentionFrom), date_to: to },
        retentionFilter: { period: 'Week', totalIntervals: 8, retentionType: 'retention_recurring', targetEntity: { id: '$pageview', type: 'events' }, returningEntity: { id: '$pageview', type: 'events' } },
      },
      sql: retentionSql('$pageview', '$pageview', day(weekStart(retentionFrom)), day(weekStart(end) + 7 * DAY_MS)),
      clickhouse: ch.retentionSql('$pageview', '$pageview', day(weekStart(retentionFrom)), day(weekStart(end) + 7 * DAY_MS)),
      same: (results: { date: string; values: { count: number }[] }[], rows) =>
        results.every((cohort) => {
          const p = cohort.date.slice(0, 10);
          const mine = rows.filter((r) => String(r.p).slice(0, 10) === p);
          const size = Number(mine[0]?.size ?? cohort.values[0].count);
          return cohort.values[0].count === size && cohort.values.slice(1).every((v, k) => v.count === Number(mine.find((r) => String(r.rp).slice(0, 10) === day(Date.parse(p) + (k + 1) * 7 * DAY_MS))?.n ?? 0));
        }),
    },
  ];
}

async function time(rounds: number, run: () => Promise<void>): Promise<{ p50: number; p99: number }> {
  await run();
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

const ms = (n: number) => `${n < 10 ? n.toFixed(1) : fmt(n)} ms`;

/** Where the hand-written SQL runs: a copy of the server's data, in this process. */
interface Hand {
  /** The table's column title and the line that says how it ran. */
  title: string;
  settings: string;
  sqlOf(m: Measured): string | undefined;
  rows(sql: string): Promise<Rows>;
  close(): void;
}

async function duckHand(): Promise<Hand> {
  // The hand-written SQL runs with the server's own DuckDB settings, on the copy made with the data.
  const duck = serverDuckSettings();
  const instance = await DuckDBInstance.create(path.join(DIR, 'direct.duckdb'), { threads: String(duck.threads), memory_limit: duck.memoryLimit });
  const db = await instance.connect();
  return {
    title: 'hand-written DuckDB SQL',
    settings: `this process, DuckDB with the server's settings (${duck.threads} thread(s), memory limit ${duck.memoryLimit})`,
    sqlOf: (m) => m.sql,
    rows: async (sql) => (await db.runAndReadAll(sql)).getRowObjectsJson() as Rows,
    close: () => (db.closeSync(), instance.closeSync()),
  };
}

function chdbHand(): Hand {
  const session = openChdbHand();
  return {
    title: 'hand-written ClickHouse SQL',
    settings: "this process, chdb 26.7 with its default settings (as the server's), on a copy of the server's chdb folder",
    sqlOf: (m) => m.clickhouse,
    rows: (sql) => session.rows(sql),
    close: () => session.close(),
  };
}

export async function benchInsights(): Promise<string> {
  const data = STORE === 'chdb' ? await makeChdbDataSet() : await makeDataSet();
  const hand = STORE === 'chdb' ? chdbHand() : await duckHand();
  const server = await startBenchServer({ dataDir: DIR, ...KEYS, ...(STORE === 'chdb' ? chdbServerOptions() : {}) }).catch((error: unknown) => {
    hand.close();
    throw error;
  });
  const rows: string[] = [];
  let rssMb = 0;
  try {
    const list = await time(LIST_ROUNDS, async () => {
      await (await server.api('/api/projects/@current/events/?limit=100')).arrayBuffer();
    });
    rows.push(`| events API list, latest 100 (baseline, ${LIST_ROUNDS} rounds) | ${ms(list.p50)} | ${ms(list.p99)} | | | |`);
    for (const m of measured(data.end)) {
      const kind = String(m.query.kind);
      if (!queryKinds.has(kind)) {
        rows.push(`| ${m.name} | ${kind} not registered yet | | | | |`);
        continue;
      }
      await setTimeZone(server, m.timeZone);
      const api = async () => {
        const response = await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: m.query, refresh: 'force_blocking' } });
        if (response.status !== 200) throw new Error(`${m.name}: HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`);
        return ((await response.json()) as { results: unknown }).results;
      };
      const sql = hand.sqlOf(m);
      const [a, b] = await alternating(api, () => hand.rows(sql ?? 'SELECT 1'), ROUNDS);
      const same = m.same && sql ? (m.same(a.result, b.result as Rows) ? 'yes' : '**no**') : '';
      const ratio = sql ? `${(a.p50 / b.p50).toFixed(2)}×` : '';
      rows.push(`| ${m.name} | ${ms(a.p50)} | ${ms(a.p99)} | ${sql ? ms(b.p50) : 'not written'} | ${ratio} | ${same} |`);
    }
    await setTimeZone(server, 'UTC');
    rssMb = memoryOf(server.process.pid!).hwmMb;
  } finally {
    await server.stop();
    hand.close();
  }
  return [
    `${data.note}; ${ROUNDS} rounds each after one warm-up, API and hand-written SQL taking turns, refresh force_blocking.`,
    `Events in ${STORE === 'chdb' ? 'ClickHouse 26.7 (chdb, in the server process)' : 'DuckDB'}. Hand-written SQL: ${hand.settings}. Load average at the end: ${os.loadavg().map((n) => n.toFixed(1)).join(' / ')}.`,
    '',
    `| query | API p50 | API p99 | ${hand.title} p50 | ratio | same numbers |`,
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    `Server peak RSS after the run: ${fmt(rssMb)} MB.`,
  ].join('\n');
}

async function setTimeZone(server: TestServer, timezone: string): Promise<void> {
  const response = await server.api('/api/projects/@current/', { method: 'PATCH', body: { timezone } });
  if (response.status !== 200) throw new Error(`PATCH timezone: HTTP ${response.status}`);
}
