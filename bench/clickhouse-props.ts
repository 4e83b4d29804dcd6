/**
 * What materialized columns save (docs/scale-out-cluster.md, "Materialized properties"): the
 * SQL the ClickHouse printer makes for a filter and a breakdown on `$browser` (a column of its
 * own) against the same on `browser`, a key holding the same values that is read from the JSON
 * (the baseline), over the events Distributed table of the local cluster's two 18.16 shards.
 * ~1M synthetic events with ~0.5 KB of properties, inserted with their columns filled. Also the
 * write path's cost: taking the values out of the properties text (JSON.parse) per event.
 * Needs `npm run cluster:up`; run it with `npm run bench -- clickhouse-props`.
 */
import { parseSelect } from '../src/hogql/parser.js';
import { StatementCompiler } from '../src/hogql/statement.js';
import { ClickHouseEventStore } from '../src/store/clickhouse/event-store.js';
import { MATERIALIZED_PROPERTIES, materializedValues } from '../src/store/clickhouse/materialized.js';
import { clusterAvailability } from '../test/helpers/cluster.js';

const EVENTS = Number(process.env.BENCH_CLICKHOUSE_EVENTS ?? 1_000_000);
const RUNS = 5;
const DATABASE = 'sightline_bench_props';

const QUERIES: [string, string][] = [
  ["count where {K} = 'Firefox'", "select count() from events where properties.{K} = 'Firefox'"],
  ["count where {K} like '%fox'", "select count() from events where properties.{K} like '%fox'"],
  ['breakdown: count by {K}', 'select properties.{K} as b, count() from events group by b'],
];

/** Properties text of event `number` (SQL): browser under both keys, then other keys and ~350 bytes of noise. */
const PROPERTIES = `concat('{"$browser":"', ['Chrome', 'Firefox', 'Safari'][number % 3 + 1], '","browser":"', ['Chrome', 'Firefox', 'Safari'][number % 3 + 1],
  '","$current_url":"https://example.com/page/', toString(number % 1000), '","$lib":"web","$lib_version":"1.160.0","n":', toString(number),
  ',"$set":{"email":"u', toString(number % 50000), '@example.com"},"token":"', hex(SHA256(toString(number))), hex(SHA256(toString(number + 1))),
  hex(SHA256(toString(number + 2))), hex(SHA256(toString(number + 3))), hex(SHA256(toString(number + 4))), '"}')`;

export async function benchClickhouseProps(): Promise<string> {
  const cluster = clusterAvailability();
  if (!cluster.enabled) return `clickhouse-props: skipped (${cluster.reason})\n`;
  const [url] = cluster.settings.clickhouseUrls;
  // insert_distributed_sync in an INSERT … SELECT's SETTINGS clause does not hold on 18.16 (the
  // other shard's rows arrive later); as a request setting it does.
  const run = async (sql: string) => {
    const response = await fetch(`${url}/?insert_distributed_sync=1`, { method: 'POST', body: sql });
    const text = await response.text();
    if (!response.ok) throw new Error(text);
    return text;
  };
  const settings = { urls: cluster.settings.clickhouseUrls, database: DATABASE, cluster: cluster.settings.clickhouseCluster };
  const store = await ClickHouseEventStore.open({ ...settings, node: 'bench', queryTimeoutMs: 0 });
  const ctx = { propertyType: () => null, now: new Date() };
  const printed = (text: string) => store.dialect.print(new StatementCompiler(ctx, 1).compile(parseSelect(text)).query).sql;
  try {
    const started = performance.now();
    await run(`INSERT INTO ${DATABASE}.events (project_id, uuid, event, distinct_id, timestamp, created_at, properties, flush_seq, node, \`mat_$browser\`, \`mat_$current_url\`, \`mat_$lib\`)
      SELECT 1, concat('01890000-0000-7000-8000-', toString(1000000000000 + number)), ['$pageview', '$autocapture'][number % 2 + 1],
        concat('user-', toString(number % 50000)), toInt64(1700000000000000 + number * 7000000), toInt64(1700000000000000), ${PROPERTIES}, 1, 'bench',
        ['Chrome', 'Firefox', 'Safari'][number % 3 + 1], concat('https://example.com/page/', toString(number % 1000)), 'web'
      FROM numbers(${EVENTS})`);
    const insertSeconds = (performance.now() - started) / 1000;
    const [count, bytes] = (await run(`SELECT count(), sum(length(properties)) FROM ${DATABASE}.events`)).trim().split('\t');
    if (Number(count) !== EVENTS) throw new Error(`${count} events of ${EVENTS} arrived`);
    const rows = ['| query (printed by the ClickHouse printer, FINAL) | `browser`, from the JSON (baseline) | `$browser`, materialized |', '|---|---|---|'];
    for (const [name, hogql] of QUERIES) {
      const medians: number[] = [];
      const answers: string[] = [];
      for (const key of ['browser', '$browser']) {
        const sql = printed(hogql.replace('{K}', key));
        const times: number[] = [];
        for (let i = 0; i < RUNS; i++) {
          const start = performance.now();
          answers.push((await run(sql)).split('\n').sort().join(','));
          times.push(performance.now() - start);
        }
        medians.push(times.sort((a, b) => a - b)[Math.floor(RUNS / 2)]);
      }
      if (new Set(answers).size !== 1) throw new Error(`${name}: the two keys answer differently: ${[...new Set(answers)].join(' / ')}`);
      rows.push(`| ${name.replace('{K}', 'key')} | ${medians[0].toFixed(0)} ms | ${medians[1].toFixed(0)} ms (${(medians[0] / medians[1]).toFixed(0)}× faster) |`);
    }
    // The write path: the columns' values come from parsing each event's properties text once more.
    const texts = Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ $browser: 'Firefox', $current_url: `https://example.com/page/${i}`, $lib: 'web', n: i, $set: { email: `u${i}@example.com` }, token: 'ab'.repeat(160) }));
    const parseStart = performance.now();
    for (const text of texts) materializedValues(text);
    const parseMicros = ((performance.now() - parseStart) * 1000) / texts.length;
    const propertiesMB = Number(bytes) / 1e6;
    return `clickhouse-props: ${EVENTS.toLocaleString('en')} events (${propertiesMB.toFixed(0)} MB of properties text) over 2 shards, inserted in ${insertSeconds.toFixed(1)} s; median of ${RUNS}\n\n${rows.join('\n')}\n\nWrite path: taking the ${MATERIALIZED_PROPERTIES.length} columns' values out of a ~0.45 KB properties text costs ${parseMicros.toFixed(1)} µs per event.\n`;
  } finally {
    await store.close();
    await run(`DROP DATABASE IF EXISTS ${DATABASE} ON CLUSTER ${cluster.settings.clickhouseCluster}`).catch(() => undefined);
  }
}
