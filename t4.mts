import { DuckDBInstance } from '@duckdb/node-api';
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const q = async (sql: string, p: any[] = []) => console.log(JSON.stringify((await c.runAndReadAll(sql, p)).getRowObjectsJson()));
await q(`SELECT unnest(from_json($1, '["VARCHAR"]')) AS x`, [JSON.stringify(['a,b', "it's", '[x]', 'ü'])]);
await q(`WITH t(p) AS (VALUES ('{"k":[1,"x",null,{"b":2},true]}'::JSON), ('{"k":"s"}'::JSON), ('{"k":null}'::JSON), ('{"k":{"z":1}}'::JSON), ('{"j":1}'::JSON), ('{"k":1.50}'::JSON))
 SELECT name FROM (SELECT unnest(CASE WHEN json_type(j) = 'ARRAY' THEN json_extract_string(j, '$[*]') ELSE [json_extract_string(j, '$')] END) AS name FROM (SELECT json_extract(p, $1) AS j FROM t)) WHERE name IS NOT NULL`, ['/k']);
await q(`SELECT CAST($1 AS TIMESTAMP) AS t`, ['2024-01-01 10:00:00.123456']);
await q(`SELECT CAST($1 AS TIMESTAMP) AS t`, ['2024-01-01T10:00:00.123456']);
await q(`SELECT strftime(TIMESTAMP '2024-01-01 10:00:00', '%Y-%m-%dT%H:%M:%S.%fZ') AS t`);
await q(`SELECT (1, 'b') < (2, 'a') AS cmp`);
