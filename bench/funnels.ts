/**
 * `npm run bench -- funnels`: a 3-step funnel over 30 days and an 8-week retention through the
 * query API, each next to a hand-written DuckDB statement computing the same numbers on the same
 * data in the same run (on a copy of the file, taking turns with the API, with the server's DuckDB
 * threads and memory limit).
 *
 * Data: BENCH_INSIGHTS_EVENTS (10,000,000) events over 90 days, 50,000 persons (each with a
 * distinct id in the person mirror, as after identification), 30 event names ($pageview half of
 * them, signed_up 8 %, purchase 3 %), browser-like properties; written straight into the event
 * store with SQL and kept in BENCH_FUNNELS_DIR (default <tmp>/sightline-funnels-<events>).
 */
import { DuckDBInstance } from '@duckdb/node-api';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fmt } from './format.js';
import { percentile } from './load.js';
import { serverDuckSettings, startBenchServer } from './server.js';

const EVENTS = Number(process.env.BENCH_INSIGHTS_EVENTS ?? 10_000_000);
const DIR = process.env.BENCH_FUNNELS_DIR ?? path.join(os.tmpdir(), `sightline-funnels-${EVENTS}`);
const KEYS = { projectKey: 'phc_insightsdataset00000000000', personalKey: 'phx_insightsdataset00000000000' };
const PERSONS = 50_000;
const CHUNK = 1_000_000;
const RUNS = Number(process.env.BENCH_INSIGHTS_RUNS ?? 7);
const START = '2026-01-01 00:00:00';
const DAY_US = 86_400_000_000;

async function makeDataSet(): Promise<string> {
  const marker = path.join(DIR, 'made');
  if (fs.existsSync(marker)) return `data set reused from ${DIR} (${fs.readFileSync(marker, 'utf8').trim()})`;
  fs.rmSync(DIR, { recursive: true, force: true });
  fs.mkdirSync(DIR, { recursive: true });
  const started = performance.now();
  const server = await startBenchServer({ dataDir: DIR, ...KEYS });
  await server.stop();
  const instance = await DuckDBInstance.create(path.join(DIR, 'events.duckdb'), { threads: '2', memory_limit: '1GB' });
  const db = await instance.connect();
  const uuidOf = (p: string) => `CAST(printf('%08x-0000-4000-8000-%012x', ${p}, ${p}) AS UUID)`;
  await db.run(`INSERT INTO persons SELECT 1, ${uuidOf('p')}, '{}', true, TIMESTAMP '${START}' FROM range(${PERSONS}) t(p)`);
  await db.run(`INSERT INTO person_distinct_ids SELECT 1, 'user-' || p, ${uuidOf('p')} FROM range(${PERSONS}) t(p)`);
  for (let from = 0; from < EVENTS; from += CHUNK) {
    const to = Math.min(EVENTS, from + CHUNK);
    process.stderr.write(`events ${fmt(from)}–${fmt(to)}…\n`);
    await db.run(`
      INSERT INTO events
      SELECT 1, uuid(), name, 'user-' || p, ${uuidOf('p')}, ts, ts,
             json_object('$current_url', 'https://example.com/page/' || (i % 500), '$browser', ['Chrome', 'Firefox', 'Safari'][1 + i % 3],
                         '$os', ['Mac OS X', 'Windows', 'Linux', 'iOS'][1 + i % 4], '$session_id', 'sess-' || (i // 20), 'plan', ['free', 'pro'][1 + i % 2],
                         'price', (i % 50) * 1.5),
             '', '', '', '', '', '', 0
      FROM (
        SELECT i, hash(i, 'p') % ${PERSONS} AS p,
               TIMESTAMP '${START}' + to_microseconds(CAST(hash(i, 't') % ${90 * DAY_US} AS BIGINT)) AS ts,
               CASE WHEN hash(i, 'e') % 100 < 50 THEN '$pageview' WHEN hash(i, 'e') % 100 < 58 THEN 'signed_up'
                    WHEN hash(i, 'e') % 100 < 61 THEN 'purchase' ELSE 'event_' || (hash(i, 'e') % 27) END AS name
        FROM range(${from}, ${to}) t(i)
      )`);
  }
  await db.run('CHECKPOINT');
  db.closeSync();
  instance.closeSync();
  const made = `${fmt(EVENTS)} events made in ${fmt((performance.now() - started) / 1000)} s, events.duckdb ${fmt(fs.statSync(path.join(DIR, 'events.duckdb')).size / 2 ** 20)} MB`;
  fs.writeFileSync(marker, made);
  return made;
}

const FUNNEL = {
  kind: 'FunnelsQuery',
  series: ['$pageview', 'signed_up', 'purchase'].map((event) => ({ kind: 'EventsNode', event })),
  dateRange: { date_from: '2026-02-01', date_to: '2026-03-02' },
  funnelsFilter: { funnelWindowInterval: 7, funnelWindowIntervalUnit: 'day' },
};
const RETENTION = {
  kind: 'RetentionQuery',
  dateRange: { date_from: '2026-01-04', date_to: '2026-02-28' },
  retentionFilter: { period: 'Week', totalIntervals: 8, targetEntity: { id: 'signed_up', type: 'events' }, returningEntity: { id: '$pageview', type: 'events' } },
};

const BOUNDS = (from: string, to: string) => `e.project_id = 1 AND e.timestamp >= TIMESTAMP '${from}' AND e.timestamp < TIMESTAMP '${to}'`;
const PERSON = `coalesce(pdi.person_id, e.person_id)`;
const PDI = `LEFT JOIN person_distinct_ids pdi ON pdi.project_id = 1 AND pdi.distinct_id = e.distinct_id`;

/**
 * A 3-step funnel by hand (also the insights benchmark's): chain times backwards with windows,
 * best attempt per person; timestamps in [from, to), UTC.
 */
export function funnelSql(steps: [string, string, string], from: string, to: string, windowDays: number): string {
  const window = windowDays * DAY_US;
  const [s0, s1, s2] = steps.map((step) => `'${step}'`);
  return `
  WITH rows AS (
    SELECT ${PERSON} AS a, epoch_us(e.timestamp) AS us, e.event = ${s0} AS s0, e.event = ${s1} AS s1, e.event = ${s2} AS s2
    FROM events e ${PDI} WHERE ${BOUNDS(from, to)} AND e.event IN (${s0}, ${s1}, ${s2})),
  l1 AS (SELECT *, min(CASE WHEN s2 THEN us END) OVER w AS c2 FROM rows WINDOW w AS (PARTITION BY a ORDER BY us RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)),
  l0 AS (SELECT a, us, s0, min(CASE WHEN s1 THEN us END) OVER w AS c1, min(CASE WHEN s1 THEN c2 END) OVER w AS c2 FROM l1
         WINDOW w AS (PARTITION BY a ORDER BY us RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)),
  attempts AS (
    SELECT a, us AS t0, CASE WHEN c1 - us <= ${window} THEN c1 END AS t1, CASE WHEN c1 - us <= ${window} AND c2 - us <= ${window} THEN c2 END AS t2 FROM l0 WHERE s0),
  best AS (SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY a ORDER BY (t1 IS NOT NULL)::INT + (t2 IS NOT NULL)::INT DESC, t0) AS rn FROM attempts) WHERE rn = 1)
  SELECT count(*) AS c0, count(t1) AS c1, count(t2) AS c2, avg((t1 - t0) / 1e6) AS avg1, quantile_cont((t1 - t0) / 1e6, 0.5) AS med1,
         avg((t2 - t1) / 1e6) AS avg2, quantile_cont((t2 - t1) / 1e6, 0.5) AS med2
  FROM best`;
}

/**
 * A weekly (Sunday) retention by hand (also the insights benchmark's): persons per week on each
 * side within [from, to), UTC; rows p, size, rp, n (persons of week p back in week rp).
 */
export function retentionSql(target: string, returning: string, from: string, to: string): string {
  const week = `CAST(CAST(e.timestamp AS DATE) - CAST(dayofweek(e.timestamp) AS INTEGER) AS DATE)`;
  const side = (event: string) => `SELECT ${PERSON} AS a, ${week} AS p FROM events e ${PDI} WHERE ${BOUNDS(from, to)} AND e.event = '${event}' GROUP BY ALL`;
  return `
  WITH t AS (${side(target)}), r AS (${side(returning)})
  SELECT t.p, (SELECT count(*) FROM t t2 WHERE t2.p = t.p) AS size, r.p AS rp, count(*) AS n FROM t JOIN r ON t.a = r.a AND r.p > t.p GROUP BY ALL ORDER BY ALL`;
}

const FUNNEL_SQL = funnelSql(['$pageview', 'signed_up', 'purchase'], '2026-02-01', '2026-03-03', 7);
const RETENTION_SQL = retentionSql('signed_up', '$pageview', '2026-01-04', '2026-03-01');

export interface Timing {
  p50: number;
  p99: number;
  result: unknown;
}

/** Runs `a` and `b` in turn (after one warm-up each), so the machine's drift hits both alike. */
export async function alternating(a: () => Promise<unknown>, b: () => Promise<unknown>, runs = RUNS): Promise<[Timing, Timing]> {
  const samples: [number[], number[]] = [[], []];
  const results: unknown[] = [];
  for (let i = 0; i < runs + 1; i++) {
    for (const [k, run] of [a, b].entries()) {
      const started = performance.now();
      results[k] = await run();
      if (i > 0) samples[k].push(performance.now() - started);
    }
  }
  const timing = (k: number): Timing => ({ p50: percentile(samples[k], 50), p99: percentile(samples[k], 99), result: results[k] });
  return [timing(0), timing(1)];
}

export async function benchFunnels(): Promise<string> {
  const made = await makeDataSet();
  // The hand-written SQL reads a copy, so both run while the server holds its file.
  const copy = path.join(DIR, 'events.copy.duckdb');
  fs.copyFileSync(path.join(DIR, 'events.duckdb'), copy);
  const duck = serverDuckSettings();
  const instance = await DuckDBInstance.create(copy, { threads: String(duck.threads), memory_limit: duck.memoryLimit });
  const db = await instance.connect();
  const sql = (text: string) => async () => (await db.runAndReadAll(text)).getRowObjectsJson();
  const server = await startBenchServer({ dataDir: DIR, ...KEYS });
  const api: Record<string, Timing> = {};
  const hand: Record<string, Timing> = {};
  let rssMb = 0;
  try {
    const ask = (query: unknown) => async () => {
      const response = await server.api('/api/projects/@current/query/', { method: 'POST', body: { query, refresh: 'force_blocking' } });
      assert.equal(response.status, 200, await response.clone().text());
      return (await response.json()).results;
    };
    [api.funnel, hand.funnel] = await alternating(ask(FUNNEL), sql(FUNNEL_SQL));
    [api.retention, hand.retention] = await alternating(ask(RETENTION), sql(RETENTION_SQL));
    rssMb = Number(fs.readFileSync(`/proc/${server.process.pid}/status`, 'utf8').match(/VmHWM:\s+(\d+)/)?.[1] ?? 0) / 1024;
  } finally {
    await server.stop();
    db.closeSync();
    instance.closeSync();
    fs.rmSync(copy, { force: true });
  }

  // The same numbers, or the comparison means nothing.
  const funnelCounts = (api.funnel.result as any[]).map((s) => s.count);
  const handFunnel = (hand.funnel.result as any[])[0];
  assert.deepEqual(funnelCounts, [Number(handFunnel.c0), Number(handFunnel.c1), Number(handFunnel.c2)], 'funnel counts equal the hand-written SQL');
  const retentionPairs = (hand.retention.result as any[]).reduce((sum, row) => sum + Number(row.n), 0);
  const apiPairs = (api.retention.result as any[]).reduce((sum, row) => sum + row.values.slice(1).reduce((s: number, v: any) => s + v.count, 0), 0);
  assert.equal(apiPairs, retentionPairs, 'retention returns equal the hand-written SQL');

  const row = (name: string, a: { p50: number; p99: number }, b: { p50: number; p99: number }) =>
    `| ${name} | ${fmt(a.p50)} | ${fmt(a.p99)} | ${fmt(b.p50)} | ${(a.p50 / b.p50).toFixed(2)}× |`;
  return [
    made,
    '',
    `| query (${fmt(EVENTS)} events, ${RUNS} runs each after a warm-up, taking turns) | API p50 ms | API p99 ms | hand-written DuckDB p50 ms | ratio |`,
    '|---|---|---|---|---|',
    row('funnel, 3 steps, 30 days, 7-day window (counts ' + funnelCounts.join(' / ') + ')', api.funnel, hand.funnel),
    row('retention, Week, 8 intervals, signed_up → $pageview', api.retention, hand.retention),
    '',
    `Server peak RSS during the queries: ${fmt(rssMb)} MB.`,
  ].join('\n');
}
