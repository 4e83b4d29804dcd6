/**
 * What reading the ClickHouse event store de-duplicated costs (docs/scale-out-cluster.md): the
 * same queries over the events Distributed table of the local cluster's two 18.16 shards, plain
 * (the baseline: duplicates would be counted), with FINAL (what the store prints), and with a
 * GROUP BY uuid / argMax de-duplication (the alternative). 1M synthetic events with small
 * properties, inserted through the Distributed table. Needs `npm run cluster:up`; run it with
 * `npm run bench -- clickhouse-final`.
 */
import { clusterAvailability } from '../test/helpers/cluster.js';
import { ClickHouseEventStore } from '../src/store/clickhouse/event-store.js';

const EVENTS = Number(process.env.BENCH_CLICKHOUSE_EVENTS ?? 1_000_000);
const RUNS = 5;
const CHUNK = 1_000_000;
const DATABASE = 'sightline_bench_final';

const QUERIES: [string, string][] = [
  ['count by event', 'SELECT event, count() FROM {T} WHERE project_id = 1 GROUP BY event'],
  ['newest 100 (a page of keys)', 'SELECT uuid FROM {T} WHERE project_id = 1 ORDER BY timestamp DESC, uuid DESC LIMIT 100'],
  ['`$browser` = Firefox, count', "SELECT count() FROM {T} WHERE project_id = 1 AND visitParamExtractString(properties, '$browser') = 'Firefox'"],
  ['daily unique users', 'SELECT intDiv(timestamp, 86400000000) AS d, uniqExact(distinct_id) FROM {T} WHERE project_id = 1 GROUP BY d'],
];

const ARGMAX = `(SELECT uuid, 1 AS project_id, argMax(event, flush_seq) AS event, argMax(timestamp, flush_seq) AS timestamp,
  argMax(distinct_id, flush_seq) AS distinct_id, argMax(properties, flush_seq) AS properties
  FROM ${DATABASE}.events WHERE project_id = 1 GROUP BY uuid)`;

export async function benchClickhouseFinal(): Promise<string> {
  const cluster = clusterAvailability();
  if (!cluster.enabled) return `clickhouse-final: skipped (${cluster.reason})\n`;
  const [url] = cluster.settings.clickhouseUrls;
  // insert_distributed_sync as a request setting: in an INSERT … SELECT's SETTINGS clause 18.16
  // does not hold it, and the other shard's rows arrive while the reads run.
  const run = async (sql: string) => {
    const response = await fetch(`${url}/?insert_distributed_sync=1`, { method: 'POST', body: sql });
    const text = await response.text();
    if (!response.ok) throw new Error(text);
    return text;
  };
  await ClickHouseEventStore.migrate({ urls: cluster.settings.clickhouseUrls, database: DATABASE, cluster: cluster.settings.clickhouseCluster });
  try {
    const started = performance.now();
    // Named columns: the materialized ones (migration 3) take their DEFAULT, the JSON read of the key.
    // In 1M-row statements: one INSERT … SELECT of 10M outgrows 18.16's 3.7 GiB query memory limit.
    for (let from = 0; from < EVENTS; from += CHUNK) {
      await run(`INSERT INTO ${DATABASE}.events (project_id, uuid, event, distinct_id, stored_person_id, timestamp, created_at, properties, elements_chain,
      \`$group_0\`, \`$group_1\`, \`$group_2\`, \`$group_3\`, \`$group_4\`, flush_seq, node) SELECT 1, concat('01890000-0000-7000-8000-', toString(1000000000000 + number)),
      ['$pageview', '$autocapture', 'signup', 'purchase'][number % 4 + 1], concat('user-', toString(number % 50000)), NULL,
      toInt64(1700000000000000 + number * 7000000), toInt64(1700000000000000),
      concat('{"$browser":"', ['Chrome', 'Firefox', 'Safari'][number % 3 + 1], '","plan":"', ['free', 'pro'][number % 2 + 1],
        '","$current_url":"https://example.com/page/', toString(number % 1000), '","n":', toString(number), '}'),
      '', '', '', '', '', '', 1, 'bench' FROM numbers(${from}, ${Math.min(CHUNK, EVENTS - from)})`);
    }
    const insertSeconds = (performance.now() - started) / 1000;
    const rows = [`| query | plain, no de-duplication (baseline) | FINAL (chosen) | GROUP BY uuid + argMax |`, '|---|---|---|---|'];
    for (const [name, sql] of QUERIES) {
      const cells: string[] = [];
      for (const table of [`${DATABASE}.events`, `${DATABASE}.events FINAL`, ARGMAX]) {
        const times: number[] = [];
        try {
          for (let i = 0; i < RUNS; i++) {
            const start = performance.now();
            await run(sql.replace('{T}', table));
            times.push(performance.now() - start);
          }
          cells.push(`${times.sort((a, b) => a - b)[Math.floor(RUNS / 2)].toFixed(0)} ms`);
        } catch (error) {
          // A read the server refuses (its memory limit at 10M rows) is a result, not the end of the run.
          const message = error instanceof Error ? error.message : String(error);
          cells.push(`fails: ${(/DB::Exception: ([^:(]+)/.exec(message)?.[1] ?? message).trim().slice(0, 60)}`);
        }
      }
      rows.push(`| ${name} | ${cells.join(' | ')} |`);
    }
    return `clickhouse-final: ${EVENTS.toLocaleString('en')} events over 2 shards, inserted in ${insertSeconds.toFixed(1)} s; median of ${RUNS}\n\n${rows.join('\n')}\n`;
  } finally {
    await run(`DROP DATABASE IF EXISTS ${DATABASE} ON CLUSTER ${cluster.settings.clickhouseCluster}`).catch(() => undefined);
  }
}
