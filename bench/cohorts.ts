/**
 * Cohorts (issue targets at 1M persons: recalculating a dynamic cohort < 10 s; /flags with a
 * cohort condition within 20 % of the same flag with a property condition). Here with PERSONS
 * persons, the size a couple of minutes allows. Recalculation: a cohort matching nobody (reads
 * and tests every person, writes nothing) as the baseline, next to a property cohort and a
 * behavioural one (event counts from the event store). /flags: the same condition as a person
 * property (baseline), as a property cohort (evaluated inline), and as a behavioural cohort (read
 * from the stored membership, cached per person until a recalculation). Then recalculations at
 * 1,000,000 persons measured directly (BENCH_COHORT_PERSONS).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { CohortCalculations } from '../src/cohorts/calculation.js';
import { createLogger } from '../src/kernel/logger.js';
import type { EventStore } from '../src/store/types.js';
import { SqliteMetaStore } from '../src/store/sqlite/meta-store.js';
import { startBenchServer } from './server.js';
import { percentile } from './load.js';
import { fmt } from './format.js';

const PERSONS = 50_000;
const PER_BATCH = 2_000;
/** Every BUYER_EVERY-th person performed `purchase` once. */
const BUYER_EVERY = 5;
const REQUESTS = 1_000;
const WARMUP = 200;
/** Persons of the direct measurement (the target size). */
const DIRECT_PERSONS = Number(process.env.BENCH_COHORT_PERSONS ?? 1_000_000);

/**
 * Calculations at the size without HTTP: persons written straight into a metadata store,
 * then the calculations service run in this process (the event store's mirror write stubbed).
 */
async function directCalculations(): Promise<string[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-bench-cohorts-'));
  const meta = SqliteMetaStore.open(dir);
  try {
    meta.db.exec("INSERT INTO organizations VALUES ('o', 'o', '2026-01-01'); INSERT INTO projects (uuid, organization_id, name, api_token, created_at) VALUES ('u', 'o', 'p', 't', '2026-01-01')");
    const insert = meta.db.prepare('INSERT INTO persons (project_id, uuid, properties, is_identified, created_at, version) VALUES (1, ?, ?, 1, ?, 1)');
    meta.db.transaction(() => {
      for (let n = 0; n < DIRECT_PERSONS; n++) {
        const properties = { email: `user${n}@example${n % 50}.com`, plan: n % 3 ? 'free' : 'pro', age: n % 90, name: `User ${n}`, $browser: 'Chrome', $os: 'Mac OS X', $geoip_country_code: 'DE' };
        insert.run(`0193a2c4-0000-7000-8000-${String(n).padStart(12, '0')}`, JSON.stringify(properties), '2026-01-01');
      }
    })();
    const noEvents = { replaceCohortMembers: async () => {} } as unknown as EventStore;
    const calculations = new CohortCalculations({ store: meta.cohorts, queryableEvents: async () => noEvents, events: async () => noEvents, log: createLogger('silent') });
    const row = async (name: string, values: unknown[]) => {
      const cohort = await meta.cohorts.create(1, null, { name, description: '', filters: { properties: { type: 'AND', values } }, is_static: false, deleted: false });
      const started = performance.now();
      await calculations.recalculate(1, cohort.id);
      const seconds = (performance.now() - started) / 1000;
      return `| ${name} | ${fmt((await meta.cohorts.get(1, cohort.id))!.count ?? 0)} | ${seconds.toFixed(2)} |`;
    };
    const pro = { key: 'plan', type: 'person', value: 'pro' };
    return [
      `Direct, ${fmt(DIRECT_PERSONS)} persons in the metadata store, the calculations service in the bench process (no HTTP; the event store's mirror write stubbed):`,
      '',
      '| recalculation | members | seconds |',
      '|---|---|---|',
      await row('baseline: property cohort matching nobody', [{ key: 'plan', type: 'person', value: 'nobody-has-this' }]),
      await row('property cohort (plan = pro AND email icontains)', [pro, { key: 'email', type: 'person', value: '@example1', operator: 'icontains' }]),
      await row('property cohort (plan = pro): a third of everyone', [pro]),
    ];
  } finally {
    await meta.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchCohorts(): Promise<string> {
  const direct = await directCalculations();
  const server = await startBenchServer({ env: { SIGHTLINE_GEOIP: 'false', SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', SIGHTLINE_COHORT_RECALCULATION_SECONDS: '0' } });
  try {
    const post = async (batch: unknown[]) => {
      const response = await server.post('/batch/', { api_key: server.projectKey, batch });
      if (response.status !== 200) throw new Error(`ingest failed: ${response.status} ${await response.text()}`);
    };
    for (let start = 0; start < PERSONS; start += PER_BATCH) {
      await post(
        Array.from({ length: PER_BATCH }, (_, k) => {
          const n = start + k;
          const set = { email: `user${n}@example${n % 50}.com`, plan: n % 3 ? 'free' : 'pro', age: n % 90 };
          return { event: n % BUYER_EVERY === 0 ? 'purchase' : '$identify', distinct_id: `user-${n}`, properties: { $set: set } };
        }),
      );
    }
    const api = async (path: string, method = 'GET', body?: unknown) => {
      const response = await server.api(path, { method, body });
      const text = await response.text();
      if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
      return text === '' ? null : JSON.parse(text);
    };
    const cohorts = '/api/projects/@current/cohorts/';
    const pro = { key: 'plan', type: 'person', value: 'pro', operator: 'exact' };
    /** Creates a cohort and times its first calculation (create → is_calculating false). */
    const calculation = async (name: string, values: unknown[]) => {
      const started = performance.now();
      const created = await api(cohorts, 'POST', { name, filters: { properties: { type: 'AND', values } } });
      for (;;) {
        const cohort = await api(`${cohorts}${created.id}/`);
        if (!cohort.is_calculating && cohort.last_calculation) return { id: created.id as number, ms: performance.now() - started, count: cohort.count as number };
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    await calculation('warm-up', [pro]); // first reads of every person: not measured
    const nobody = await calculation('nobody', [{ key: 'plan', type: 'person', value: 'nobody-has-this' }]);
    const property = await calculation('pro at example1x', [pro, { key: 'email', type: 'person', value: '@example1', operator: 'icontains' }]);
    const proCohort = await calculation('pro', [pro]);
    const buyers = await calculation('buyers', [{ key: 'purchase', type: 'behavioral', value: 'performed_event', time_value: 30, time_interval: 'day' }]);

    const flag = async (key: string, properties: unknown[]) =>
      api('/api/projects/@current/feature_flags/', 'POST', { key, filters: { groups: [{ properties, rollout_percentage: 100 }] } });
    await flag('by-property', [pro]);
    await flag('by-cohort', [{ key: 'id', type: 'cohort', value: proCohort.id, operator: 'in' }]);
    await flag('by-behavioural-cohort', [{ key: 'id', type: 'cohort', value: buyers.id, operator: 'in' }]);
    // The three flags take turns, so that each meets the same caches and the same neighbours' load.
    const keys = ['by-property', 'by-cohort', 'by-behavioural-cohort'];
    const latencies = new Map<string, number[]>(keys.map((key) => [key, []]));
    for (let i = 0; i < WARMUP + REQUESTS; i++) {
      for (const key of keys) {
        const started = performance.now();
        const response = await server.post('/flags?v=2', { token: server.projectKey, distinct_id: `user-${(i * 7919) % PERSONS}`, flag_keys_to_evaluate: [key] });
        const answer = (await response.json()) as { errorsWhileComputingFlags: boolean };
        if (answer.errorsWhileComputingFlags) throw new Error(`${key}: an answer with errors`);
        if (i >= WARMUP) latencies.get(key)!.push(performance.now() - started);
      }
    }
    const [byProperty, byCohort, byBehavioural] = keys.map((key) => latencies.get(key)!);

    const calcRow = (name: string, c: { ms: number; count: number }) => `| ${name} | ${fmt(c.count)} | ${(c.ms / 1000).toFixed(2)} |`;
    const flagRow = (name: string, l: number[]) => `| ${name} | ${percentile(l, 50).toFixed(2)} | ${percentile(l, 99).toFixed(2)} |`;
    return [
      `${fmt(PERSONS)} persons (every ${BUYER_EVERY}th with one \`purchase\` event).`,
      '',
      '| first calculation (create → `is_calculating: false`) | members | seconds |',
      '|---|---|---|',
      calcRow('baseline: property cohort matching nobody', nobody),
      calcRow('property cohort (plan = pro AND email icontains)', property),
      calcRow('behavioural cohort (performed purchase in 30 days)', buyers),
      '',
      `\`/flags\` with one flag (\`flag_keys_to_evaluate\`), ${fmt(REQUESTS)} requests each, one at a time, the three flags taking turns, for different persons, after ${WARMUP} warm-up rounds:`,
      '',
      '| condition | p50 ms | p99 ms |',
      '|---|---|---|',
      flagRow('baseline: person property plan = pro', byProperty),
      flagRow('property cohort (plan = pro), evaluated inline', byCohort),
      flagRow('behavioural cohort, stored membership', byBehavioural),
      '',
      ...direct,
    ].join('\n');
  } finally {
    await server.stop();
  }
}
