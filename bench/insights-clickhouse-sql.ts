/**
 * Hand-written ClickHouse SQL for the insights benchmark's rows (the ClickHouse mode), as one
 * would write it against the store's tables (schema.ts): timestamps are µs since the epoch, the
 * person is the mirror's for the distinct id. No FINAL: the data set is inserted once, without
 * duplicates, so the plain tables hold the same rows the server reads with FINAL.
 */
const E = 'sightline.events';
const PDI = `LEFT JOIN (SELECT distinct_id, person_id FROM sightline.person_distinct_ids WHERE project_id = 1) p ON p.distinct_id = e.distinct_id`;
const PERSON = `if(p.person_id = '', e.distinct_id, p.person_id)`;
const seconds = `toDateTime(intDiv(e.timestamp, 1000000), 'UTC')`;

/** µs of midnight starting `date` (YYYY-MM-DD) in `tz`, plus `days`. */
const midnight = (date: string, tz: string, days = 0) => `toUnixTimestamp(toDateTime(toDate('${date}') + ${days}, '${tz}')) * 1000000`;

/** `e.timestamp` within the days from `from` to `to` (both included) on the wall clock of `tz`. */
const window = (from: string, to: string, tz: string) => `e.timestamp >= ${midnight(from, tz)} AND e.timestamp < ${midnight(to, tz, 1)}`;

/** `e.timestamp` in UTC days from `from` up to (not including) `to`. */
const halfOpen = (from: string, to: string) => `e.timestamp >= ${midnight(from, 'UTC')} AND e.timestamp < ${midnight(to, 'UTC')}`;

const dayOf = (tz: string) => `toDate(toDateTime(intDiv(e.timestamp, 1000000), '${tz}'))`;

export const countByEventSql = () => `SELECT event, count() AS c FROM ${E} e WHERE project_id = 1 GROUP BY event ORDER BY c DESC`;

export const countByDaySql = (from: string, to: string, tz: string) =>
  `SELECT toStartOfDay(toDateTime(intDiv(e.timestamp, 1000000), '${tz}')) AS d, count() AS n FROM ${E} e WHERE project_id = 1 AND ${window(from, to, tz)} GROUP BY d ORDER BY d`;

/** A daily trend of `$pageview`: all of them, or unique persons. */
export const trendSql = (from: string, to: string, tz: string, math: 'total' | 'dau') =>
  `SELECT ${dayOf(tz)} AS d, ${math === 'total' ? 'count()' : `uniqExact(${PERSON})`} AS n FROM ${E} e ${math === 'dau' ? PDI : ''}
   WHERE e.project_id = 1 AND e.event = '$pageview' AND ${window(from, to, tz)} GROUP BY d ORDER BY d`;

/** A 3-step funnel with windowFunnel: each person's furthest step within the window; UTC days in [from, to). */
export const funnelSql = (steps: [string, string, string], from: string, to: string, windowDays: number) => `
  SELECT countIf(level >= 1) AS c0, countIf(level >= 2) AS c1, countIf(level >= 3) AS c2 FROM (
    SELECT ${PERSON} AS a, windowFunnel(${windowDays * 86_400})(${seconds}, ${steps.map((s) => `e.event = '${s}'`).join(', ')}) AS level
    FROM ${E} e ${PDI} WHERE e.project_id = 1 AND ${halfOpen(from, to)} AND e.event IN (${steps.map((s) => `'${s}'`).join(', ')})
    GROUP BY a)`;

/** A weekly (Sunday) retention, UTC days in [from, to): rows p, size, rp, n (persons of week p back in week rp). */
export function retentionSql(target: string, returning: string, from: string, to: string): string {
  const side = (event: string) =>
    `SELECT DISTINCT ${PERSON} AS a, toStartOfWeek(${seconds}, 0) AS p FROM ${E} e ${PDI} WHERE e.project_id = 1 AND ${halfOpen(from, to)} AND e.event = '${event}'`;
  return `
  WITH t AS (${side(target)}), r AS (${side(returning)}), sizes AS (SELECT p, count() AS size FROM t GROUP BY p)
  SELECT t.p AS p, sizes.size AS size, r.p AS rp, count() AS n
  FROM t JOIN r ON r.a = t.a JOIN sizes ON sizes.p = t.p WHERE r.p > t.p GROUP BY p, size, rp ORDER BY p, rp`;
}
