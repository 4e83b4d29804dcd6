/**
 * Hand-written DuckDB SQL for the insights benchmark's funnel and retention rows, and the
 * alternating timer it compares the query API with (same data, same run, taking turns).
 */
import { percentile } from './load.js';

const DAY_US = 86_400_000_000;

const BOUNDS = (from: string, to: string) => `e.project_id = 1 AND e.timestamp >= TIMESTAMP '${from}' AND e.timestamp < TIMESTAMP '${to}'`;
const PERSON = `coalesce(pdi.person_id, e.person_id)`;
const PDI = `LEFT JOIN person_distinct_ids pdi ON pdi.project_id = 1 AND pdi.distinct_id = e.distinct_id`;

/**
 * A 3-step funnel by hand: chain times backwards with windows,
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
 * A weekly (Sunday) retention by hand: persons per week on each
 * side within [from, to), UTC; rows p, size, rp, n (persons of week p back in week rp).
 */
export function retentionSql(target: string, returning: string, from: string, to: string): string {
  const week = `CAST(CAST(e.timestamp AS DATE) - CAST(dayofweek(e.timestamp) AS INTEGER) AS DATE)`;
  const side = (event: string) => `SELECT ${PERSON} AS a, ${week} AS p FROM events e ${PDI} WHERE ${BOUNDS(from, to)} AND e.event = '${event}' GROUP BY ALL`;
  return `
  WITH t AS (${side(target)}), r AS (${side(returning)})
  SELECT t.p, (SELECT count(*) FROM t t2 WHERE t2.p = t.p) AS size, r.p AS rp, count(*) AS n FROM t JOIN r ON t.a = r.a AND r.p > t.p GROUP BY ALL ORDER BY ALL`;
}

export interface Timing {
  p50: number;
  p99: number;
  result: unknown;
}

/** Runs `a` and `b` in turn (after one warm-up each), so the machine's drift hits both alike. */
export async function alternating(a: () => Promise<unknown>, b: () => Promise<unknown>, runs: number): Promise<[Timing, Timing]> {
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
