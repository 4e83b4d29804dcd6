/**
 * Property definition search (10,000 definitions, `search`, target p99 < 20 ms): ~500 list
 * requests over HTTP, next to the same SQL (count + page) run on SQLite in this process
 * against the server's own database file — the floor any HTTP answer stands on.
 */
import { DatabaseSync, type StatementSyncInstance } from '@photostructure/sqlite';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { addFoldCase } from '../src/store/sqlite/database.js';
import { propertyListSql } from '../src/store/sqlite/definitions.js';
import type { PropertyDefinitionQuery } from '../src/store/types.js';
import { startBenchServer } from './server.js';
import { percentile } from './load.js';

const DEFINITIONS = 10_000;
const PER_EVENT = 1_000;
const REQUESTS = 500;
const WARMUP = 25;
const AREAS = ['checkout', 'signup', 'profile', 'search', 'billing', 'onboarding', 'video', 'cart'];
const THINGS = ['clicked', 'value', 'count', 'duration', 'source', 'variant', 'price', 'name'];
const SEARCHES = ['checkout', 'price', 'signup value', 'vid', 'ca pr', '12', 'BILLING count', 'zzz', 'on', 'source 9'];

const propertyName = (i: number) => `${AREAS[i % AREAS.length]}_${THINGS[Math.floor(i / AREAS.length) % THINGS.length]}_${i}`;

const query = (search: string, projectId: number): PropertyDefinitionQuery => ({
  projectId,
  type: 1,
  groupTypeIndex: null,
  searchWords: search.split(/\s+/).filter(Boolean),
  names: null,
  excludedNames: [],
  eventNames: null,
  onlySeenWithEvents: false,
  isFeatureFlag: null,
  isNumerical: null,
  limit: 100,
  offset: 0,
});

async function timed(run: (search: string) => Promise<void> | void): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < WARMUP + REQUESTS; i++) {
    const started = performance.now();
    await run(SEARCHES[i % SEARCHES.length]);
    if (i >= WARMUP) latencies.push(performance.now() - started);
  }
  return latencies;
}

export async function benchDefinitions(): Promise<string> {
  const server = await startBenchServer({ env: { SIGHTLINE_GEOIP: 'false', SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0' } });
  try {
    for (let start = 0; start < DEFINITIONS; start += PER_EVENT) {
      const properties = Object.fromEntries(Array.from({ length: PER_EVENT }, (_, k) => [propertyName(start + k), (start + k) % 3 === 0 ? start + k : 'x']));
      const response = await server.post('/batch/', { api_key: server.projectKey, batch: [{ event: `bench_${start}`, distinct_id: 'bench', properties }] });
      if (response.status !== 200) throw new Error(`ingest failed: ${response.status} ${await response.text()}`);
    }
    const project = (await (await server.api('/api/projects/@current/')).json()) as { id: number };

    const db = new DatabaseSync(path.join(server.dataDir, 'meta.sqlite'), { readOnly: true });
    addFoldCase(db);
    db.exec('PRAGMA cache_size = -16000'); // the store's page cache (openSqlite)
    // Statements prepared once, as the store keeps them.
    const statements = new Map<string, StatementSyncInstance>();
    const prepared = (sql: string) => statements.get(sql) ?? statements.set(sql, db.prepare(sql)).get(sql)!;
    const direct = await timed((search) => {
      const sql = propertyListSql(query(search, project.id));
      prepared(sql.page.sql).all(...sql.page.params);
      prepared(sql.count.sql).get(...sql.count.params);
    });
    const total = (db.prepare('SELECT count(*) AS n FROM property_definitions WHERE project_id = ?').get(project.id) as { n: number }).n;
    db.close();

    let failures = 0;
    const http = await timed(async (search) => {
      const response = await server.api(`/api/projects/${project.id}/property_definitions/?search=${encodeURIComponent(search)}`);
      await response.arrayBuffer();
      if (response.status !== 200) failures += 1;
    });

    const row = (name: string, latencies: number[]) =>
      `| ${name} | ${percentile(latencies, 50).toFixed(2)} | ${percentile(latencies, 99).toFixed(2)} |`;
    return [
      `| property_definitions list with \`search\`, ${total.toLocaleString('en')} definitions, ${REQUESTS} requests | p50 ms | p99 ms |`,
      '|---|---|---|',
      row('SQLite in process, same SQL (count + first page of 100)', direct),
      row('Sightline over HTTP (auth, scope, validation, JSON)', http),
      '',
      `target p99 < 20 ms; ${failures} non-200 answers; searches cycled: ${SEARCHES.map((s) => `"${s}"`).join(', ')}`,
    ].join('\n');
  } finally {
    await server.stop();
  }
}
