/**
 * `npm run bench -- insights`: the query API at scale. BENCH_INSIGHTS_EVENTS (default
 * 10,000,000) events — 50,000 persons, 30 event names, 90 days, realistic properties — are
 * written once with SQL straight into a stopped server's event store (kept in
 * BENCH_INSIGHTS_DIR, default <tmp>/sightline-insights-<events>, and reused), with the person
 * mirror (a person and a distinct id per user). Then, over HTTP with refresh force_blocking
 * (no cache), p50/p99 of: the events API list (the baseline every run has), HogQL count() by
 * event, HogQL count by day over 30 days, and the insight kinds registered in
 * src/insights/kinds.ts by name (trends total and DAU 30 days by day, a 3-step funnel, 8-week
 * retention) — a kind not yet registered is reported as absent. Last, hand-written DuckDB SQL
 * for the same numbers where it is short to write, on a copy of the file, in this process.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { queryKinds } from '../src/insights/kinds.js';
import type { TestServer } from '../test/helpers/server.js';
import { fmt } from './format.js';
import { percentile } from './load.js';
import { startBenchServer } from './server.js';

const EVENTS = Number(process.env.BENCH_INSIGHTS_EVENTS ?? 10_000_000);
const ROUNDS = Number(process.env.BENCH_INSIGHTS_ROUNDS ?? 15);
const DIR = process.env.BENCH_INSIGHTS_DIR ?? path.join(os.tmpdir(), `sightline-insights-${EVENTS}`);
const KEYS = { projectKey: 'phc_insightsbench000000000000', personalKey: 'phx_insightsbench000000000000' };
const PERSONS = 50_000;
const CHUNK = 1_000_000;
const DAYS = 90;
const NAMES = [
  '$pageview', '$pageview', '$pageview', '$autocapture', '$pageleave', 'signed_up', 'checkout_started', 'purchase', 'video_played', 'search',
  ...Array.from({ length: 20 }, (_, i) => `feature_${i}`),
];

interface DataSet {
  note: string;
  /** The data's "now": the newest event is just before it. */
  end: number;
}

async function makeDataSet(): Promise<DataSet> {
  const marker = path.join(DIR, 'made.json');
  if (fs.existsSync(marker)) return JSON.parse(fs.readFileSync(marker, 'utf8')) as DataSet;
  fs.rmSync(DIR, { recursive: true, force: true });
  fs.mkdirSync(DIR, { recursive: true });
  const started = performance.now();
  const server = await startBenchServer({ dataDir: DIR, ...KEYS });
  const project = (await (await server.api('/api/projects/@current/')).json()) as { id: number };
  await server.stop();
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
  for (let from = 0; from < EVENTS; from += CHUNK) {
    const to = Math.min(EVENTS, from + CHUNK);
    process.stderr.write(`events ${fmt(from)}–${fmt(to)}…\n`);
    // A scattered but repeatable time per event: a multiplicative hash of i over the 90 days.
    await db.run(`
      INSERT INTO events
      SELECT ${project.id}, uuid(), ${names}[1 + (i * 7) % ${NAMES.length}], 'user-' || ((i * 2654435761) % ${PERSONS}), NULL,
             TIMESTAMP '${endText}' - to_seconds(((i * 40503) % ${DAYS * 86_400})::BIGINT), TIMESTAMP '${endText}',
             json_object('$current_url', 'https://example.com/page/' || (i % 500), '$browser', ['Chrome', 'Firefox', 'Safari'][1 + i % 3],
                         '$os', ['Mac OS X', 'Windows', 'Linux', 'iOS'][1 + i % 4], '$session_id', 'sess-' || (i // 20),
                         '$geoip_country_code', ['GB', 'US', 'SE', 'DE'][1 + i % 4], 'plan', ['free', 'pro'][1 + i % 2], 'price', (i % 50) * 1.5),
             '', '', '', '', '', '', 0
      FROM range(${from}, ${to}) t(i)`);
  }
  await db.run('CHECKPOINT');
  db.closeSync();
  instance.closeSync();
  fs.copyFileSync(path.join(DIR, 'events.duckdb'), path.join(DIR, 'direct.duckdb'));
  const data: DataSet = {
    note: `${fmt(EVENTS)} events of ${fmt(PERSONS)} persons, ${NAMES.length} names over ${DAYS} days, made in ${fmt((performance.now() - started) / 1000)} s (events.duckdb ${fmt(fs.statSync(path.join(DIR, 'events.duckdb')).size / 2 ** 20)} MB)`,
    end,
  };
  fs.writeFileSync(marker, JSON.stringify(data));
  return data;
}

const ev = (event: string) => ({ kind: 'EventsNode', event, name: event });

/** The queries timed, by kind; relative dates count back from the data's end. */
function queries(end: number): Array<{ name: string; kind: string; query: Record<string, unknown> }> {
  const from30 = new Date(end - 30 * 86_400_000).toISOString().slice(0, 10);
  const to = new Date(end).toISOString().slice(0, 10);
  const dateRange = { date_from: from30, date_to: to };
  return [
    { name: 'HogQL count() by event, all events', kind: 'HogQLQuery', query: { kind: 'HogQLQuery', query: 'select event, count() from events group by event order by count() desc' } },
    {
      name: 'HogQL count by day, 30 days',
      kind: 'HogQLQuery',
      query: { kind: 'HogQLQuery', query: `select toStartOfDay(timestamp) as d, count() from events where timestamp >= '${from30}' and timestamp < toDateTime('${to}') + interval 1 day group by d order by d` },
    },
    { name: 'trends total, 30 days by day', kind: 'TrendsQuery', query: { kind: 'TrendsQuery', series: [{ ...ev('$pageview'), math: 'total' }], interval: 'day', dateRange } },
    { name: 'trends DAU, 30 days by day', kind: 'TrendsQuery', query: { kind: 'TrendsQuery', series: [{ ...ev('$pageview'), math: 'dau' }], interval: 'day', dateRange } },
    {
      name: 'funnel, 3 steps over 30 days',
      kind: 'FunnelsQuery',
      query: { kind: 'FunnelsQuery', series: [ev('$pageview'), ev('signed_up'), ev('purchase')], dateRange, funnelsFilter: { funnelWindowInterval: 14, funnelWindowIntervalUnit: 'day' } },
    },
    {
      name: 'retention, 8 weeks',
      kind: 'RetentionQuery',
      query: {
        kind: 'RetentionQuery',
        dateRange: { date_from: new Date(end - 56 * 86_400_000).toISOString().slice(0, 10), date_to: to },
        retentionFilter: { period: 'Week', totalIntervals: 8, retentionType: 'retention_first_time', targetEntity: { id: '$pageview', type: 'events' }, returningEntity: { id: '$pageview', type: 'events' } },
      },
    },
  ];
}

/** Hand-written SQL for the numbers that are short to write by hand. */
function directSql(projectId: number, end: number): Record<string, string> {
  const from30 = new Date(end - 30 * 86_400_000).toISOString().slice(0, 10);
  const to = new Date(end).toISOString().slice(0, 10);
  const window = `timestamp >= TIMESTAMP '${from30}' AND timestamp < TIMESTAMP '${to}' + INTERVAL 1 DAY`;
  return {
    'HogQL count() by event, all events': `SELECT event, count(*) AS c FROM events WHERE project_id = ${projectId} GROUP BY event ORDER BY c DESC`,
    'HogQL count by day, 30 days': `SELECT date_trunc('day', timestamp) AS d, count(*) FROM events WHERE project_id = ${projectId} AND ${window} GROUP BY d ORDER BY d`,
    'trends total, 30 days by day': `SELECT date_trunc('day', timestamp) AS d, count(*) FROM events WHERE project_id = ${projectId} AND event = '$pageview' AND ${window} GROUP BY d ORDER BY d`,
    'trends DAU, 30 days by day': `SELECT date_trunc('day', e.timestamp) AS d, count(DISTINCT coalesce(p.person_id, e.person_id)) FROM events e LEFT JOIN person_distinct_ids p ON p.project_id = ${projectId} AND p.distinct_id = e.distinct_id WHERE e.project_id = ${projectId} AND e.event = '$pageview' AND e.${window.replace(' AND timestamp', ' AND e.timestamp')} GROUP BY d ORDER BY d`,
  };
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

async function timeApi(server: TestServer, query: Record<string, unknown>): Promise<{ p50: number; p99: number } | string> {
  const probe = await server.api('/api/projects/@current/query/', { method: 'POST', body: { query, refresh: 'force_blocking' } });
  if (probe.status !== 200) return `HTTP ${probe.status}: ${(await probe.text()).slice(0, 120)}`;
  return time(ROUNDS, async () => {
    const response = await server.api('/api/projects/@current/query/', { method: 'POST', body: { query, refresh: 'force_blocking' } });
    if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
  });
}

const ms = (n: number) => `${n < 10 ? n.toFixed(1) : fmt(n)} ms`;

export async function benchInsights(): Promise<string> {
  const data = await makeDataSet();
  const server = await startBenchServer({ dataDir: DIR, ...KEYS });
  const rows: string[] = [];
  let projectId = 1;
  const api: Record<string, { p50: number; p99: number } | string> = {};
  try {
    projectId = ((await (await server.api('/api/projects/@current/')).json()) as { id: number }).id;
    const list = await time(ROUNDS, async () => {
      await (await server.api('/api/projects/@current/events/?limit=100')).arrayBuffer();
    });
    rows.push(`| events API list, latest 100 (baseline) | ${ms(list.p50)} | ${ms(list.p99)} | | |`);
    for (const { name, kind, query } of queries(data.end)) {
      api[name] = queryKinds.has(kind) ? await timeApi(server, query) : `${kind} not registered yet`;
    }
    const rss = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${server.process.pid}/status`, 'utf8'))?.[1];
    rows.push(`| (server peak RSS after the run: ${rss ? fmt(Number(rss) / 1024) : '?'} MB) | | | | |`);
  } finally {
    await server.stop();
  }
  const instance = await DuckDBInstance.create(path.join(DIR, 'direct.duckdb'), { threads: '2', memory_limit: '1GB' });
  const db = await instance.connect();
  const direct: Record<string, { p50: number; p99: number }> = {};
  for (const [name, sql] of Object.entries(directSql(projectId, data.end))) {
    direct[name] = await time(ROUNDS, async () => {
      await db.runAndReadAll(sql);
    });
  }
  db.closeSync();
  instance.closeSync();
  for (const { name } of queries(data.end)) {
    const result = api[name];
    const hand = direct[name];
    if (typeof result === 'string') rows.push(`| ${name} | ${result} | | ${hand ? ms(hand.p50) : ''} | |`);
    else rows.push(`| ${name} | ${ms(result.p50)} | ${ms(result.p99)} | ${hand ? ms(hand.p50) : 'not written'} | ${hand ? `${(result.p50 / hand.p50).toFixed(2)}×` : ''} |`);
  }
  return [
    `${data.note}; ${ROUNDS} rounds each after one warm-up, refresh force_blocking.`,
    '',
    '| query | API p50 | API p99 | hand-written DuckDB SQL p50 | ratio |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
