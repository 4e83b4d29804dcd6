import { DuckDBInstance } from '@duckdb/node-api';
const db = await DuckDBInstance.create('/tmp/t2.duckdb', { threads: '2', memory_limit: '512MB' });
const c = await db.connect();
async function time(label: string, sql: string, params: any[] = [], n = 7) {
  const ts: number[] = [];
  let rows: any;
  for (let k = 0; k < n; k++) { const t0 = performance.now(); rows = (await c.runAndReadAll(sql, params)).getRowObjectsJson(); ts.push(performance.now() - t0); }
  ts.sort((a, b) => a - b);
  console.log(label.padEnd(40), ts.map((x) => x.toFixed(1)).join(' '), rows.length, JSON.stringify(rows[0]).slice(0, 60));
}
const cols = `e.uuid, e.event, e.distinct_id, strftime(e.timestamp, '%Y-%m-%dT%H:%M:%S.%f') AS ts, e.properties, e.elements_chain`;
await time('narrow top-N ts,uuid', `SELECT e.timestamp, e.uuid FROM events e WHERE project_id = $1 ORDER BY e.timestamp DESC, e.uuid DESC LIMIT 101`, [1]);
await time('narrow top-N ts only', `SELECT e.timestamp FROM events e WHERE project_id = $1 ORDER BY e.timestamp DESC LIMIT 101`, [1]);
await time('wide top-N ts only', `SELECT * FROM events e WHERE project_id = $1 ORDER BY e.timestamp DESC LIMIT 101`, [1]);
await time('wide top-N ts,uuid raw', `SELECT * FROM events e WHERE project_id = $1 ORDER BY e.timestamp DESC, e.uuid DESC LIMIT 101`, [1]);
await time('rowid late', `WITH k AS (SELECT rowid AS r FROM events e WHERE project_id = $1 ORDER BY e.timestamp DESC, e.uuid DESC LIMIT 101) SELECT ${cols} FROM events e WHERE rowid IN (SELECT r FROM k) ORDER BY e.timestamp DESC, e.uuid DESC`, [1]);
await time('semi-join late', `WITH k AS (SELECT e.timestamp t, e.uuid u FROM events e WHERE project_id = $1 ORDER BY e.timestamp DESC, e.uuid DESC LIMIT 101) SELECT ${cols} FROM events e WHERE project_id = $1 AND e.timestamp >= (SELECT min(t) FROM k) AND e.uuid IN (SELECT u FROM k) ORDER BY e.timestamp DESC, e.uuid DESC`, [1]);
await time('prop count contains prefilter', `SELECT count(*) FROM events e WHERE project_id = $1 AND contains(e.properties, '"Chrome"') AND json_extract_string(e.properties, $2) = $3`, [1, '/$browser', 'Chrome']);
await time('prop count', `SELECT count(*) FROM events e WHERE project_id = $1 AND json_extract_string(e.properties, $2) = $3`, [1, '/$browser', 'Chrome'], 3);
await time('count + flush_seq', `SELECT count(*) FROM events e WHERE project_id = $1 AND flush_seq <= 5`, [1]);
