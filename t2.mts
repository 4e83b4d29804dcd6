import { DuckDBInstance } from '@duckdb/node-api';
import { duckMigrations } from './src/store/duckdb/schema.js';
import fs from 'node:fs';
fs.rmSync('/tmp/t2.duckdb', { force: true });
const db = await DuckDBInstance.create('/tmp/t2.duckdb', { threads: '2', memory_limit: '512MB' });
const c = await db.connect();
await c.run(duckMigrations[0].sql);
let t = performance.now();
await c.run(`INSERT INTO events SELECT 1, uuid(), ['$pageview','$pageview','$autocapture','signed_up','checkout_started','$pageleave'][i%6+1], 'user-' || (i % 30000), NULL,
  TIMESTAMP '2026-01-01' + to_microseconds(i * 2592000 // 1) , now()::TIMESTAMP,
  json_object('$current_url', 'https://example.com/p' || (i%7) || '?ref=' || (i%13), '$host','example.com','$pathname','/p'||(i%7),'$browser',['Chrome','Firefox','Safari','Edge'][i%4+1],'$browser_version',100+i%30,
   '$os',['Mac OS X','Windows','Linux','iOS','Android'][i%5+1],'$os_version','10.'||(i%3),'$device_type','Desktop','$screen_height',1080,'$screen_width',1920,'$viewport_height',900,'$viewport_width',1440,
   '$lib','web','$lib_version','1.449.2','$insert_id','ins-'||i,'$time',1700000000+i,'$session_id','sess-'||(i//20),'$window_id','win-'||(i//40),'$pageview_id','pv-'||i,
   '$referrer','https://google.com','$referring_domain','google.com','$timezone','Europe/London','$raw_user_agent','Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120 Safari/537.36',
   '$ip','81.2.69.142','plan', CASE WHEN i%5=0 THEN 'pro' ELSE 'free' END,'price',(i%50)*1.5,'is_trial',i%2=0,'item_count',i%9,'title','Page '||(i%7)),
  '', '', '', '', '', '', 1 FROM range(1000000) r(i)`);
console.log('insert', performance.now() - t);
await c.run('CHECKPOINT');
console.log(fs.statSync('/tmp/t2.duckdb').size / 1e6, 'MB');
async function time(label: string, sql: string, params: any[] = [], n = 5) {
  const ts: number[] = [];
  let rows: any;
  for (let k = 0; k < n; k++) { const t0 = performance.now(); rows = (await c.runAndReadAll(sql, params)).getRowObjectsJson(); ts.push(performance.now() - t0); }
  ts.sort((a, b) => a - b);
  console.log(label.padEnd(40), ts.map((x) => x.toFixed(1)).join(' '), JSON.stringify(rows[0]).slice(0, 80));
}
const cols = `e.uuid, e.event, e.distinct_id, strftime(e.timestamp, '%Y-%m-%dT%H:%M:%S.%f') AS ts, e.properties, e.elements_chain`;
await time('count all', 'SELECT count(*) FROM events e WHERE project_id = $1', [1]);
await time('latest 100', `SELECT ${cols} FROM events e WHERE project_id = $1 ORDER BY e.timestamp DESC, e.uuid DESC LIMIT 101`, [1]);
await time('latest 100 window', `SELECT ${cols} FROM events e WHERE project_id = $1 AND e.timestamp >= TIMESTAMP '2026-01-30 23:00:00' ORDER BY e.timestamp DESC, e.uuid DESC LIMIT 101`, [1]);
await time('event filter', `SELECT ${cols} FROM events e WHERE project_id = $1 AND e.event = $2 ORDER BY e.timestamp DESC, e.uuid DESC LIMIT 101`, [1, 'signed_up']);
await time('event count', `SELECT count(*) FROM events e WHERE project_id = $1 AND e.event = $2`, [1, 'signed_up']);
await time('distinct count', `SELECT count(*) FROM events e WHERE project_id = $1 AND e.distinct_id = $2`, [1, 'user-77']);
await time('prop count', `SELECT count(*) FROM events e WHERE project_id = $1 AND json_extract_string(e.properties, $2) = $3`, [1, '/$browser', 'Chrome']);
await time('prop page', `SELECT ${cols} FROM events e WHERE project_id = $1 AND json_extract_string(e.properties, $2) = $3 ORDER BY e.timestamp DESC, e.uuid DESC LIMIT 101`, [1, '/$browser', 'Chrome']);
await time('prop page window', `SELECT ${cols} FROM events e WHERE project_id = $1 AND e.timestamp >= TIMESTAMP '2026-01-30 23:00:00' AND json_extract_string(e.properties, $2) = $3 ORDER BY e.timestamp DESC, e.uuid DESC LIMIT 101`, [1, '/$browser', 'Chrome']);
await time('agg by event', `SELECT e.event, count(*) FROM events e WHERE project_id = $1 GROUP BY e.event ORDER BY 2 DESC`, [1]);
await time('values plan', `SELECT v, count(*) c FROM (SELECT json_extract_string(e.properties, $2) v FROM events e WHERE project_id = $1) WHERE v IS NOT NULL GROUP BY v ORDER BY c DESC LIMIT 10`, [1, '/$browser']);
await time('uuid lookup', `SELECT ${cols} FROM events e WHERE project_id = $1 AND e.uuid = (SELECT uuid FROM events LIMIT 1 OFFSET 5000)`, [1]);
