/**
 * Flag evaluation benchmarks: `/decide?v=3` and `/flags?v=2` on 50 connections for a
 * project with 50 active flags (rollouts, person-property conditions, multivariate, one group
 * flag) and stored persons and groups, next to the bare node:http baseline (JSON.parse only)
 * measured in the same run, with the same generator: raw keep-alive sockets (socket-load.ts),
 * since node:http's client costs more CPU per request than the server it measures.
 */
import type { TestServer } from '../test/helpers/server.js';
import { startBenchServer } from './server.js';
import { startBaseline } from './ingest.js';
import { percentile, type LoadResult } from './load.js';
import { runSocketLoad } from './socket-load.js';
import { fmt } from './format.js';

const PERSONS = 2_000;
const COMPANIES = 20;
const PLANS = ['free', 'pro', 'enterprise'];
const COUNTRIES = ['GB', 'FR', 'DE', 'US', 'JP'];

const person = (key: string, value: unknown, operator = 'exact') => ({ key, value, operator, type: 'person' });
const variants = (n: number) => ({ variants: Array.from({ length: n }, (_, i) => ({ key: `v${i}`, rollout_percentage: i < n - 1 ? Math.floor(100 / n) : 100 - Math.floor(100 / n) * (n - 1) })) });

/** 50 flags: 12 rollouts, 16 property-targeted, 14 multivariate, 7 with several conditions, 1 group flag. */
function flagDefinitions(): Record<string, unknown>[] {
  const flags: Record<string, unknown>[] = [];
  for (let i = 0; i < 12; i++) flags.push({ key: `rollout-${i}`, filters: { groups: [{ properties: [], rollout_percentage: 5 + i * 8 }] } });
  for (let i = 0; i < 16; i++) {
    const filter = [person('plan', PLANS[i % 3]), person('email', `@example${i % 4}`, 'icontains'), person('country', COUNTRIES.slice(0, 1 + (i % 5))), person('age', String(20 + i), 'gt')][i % 4];
    flags.push({ key: `targeted-${i}`, filters: { groups: [{ properties: [filter], rollout_percentage: 50 + i * 3 }] } });
  }
  for (let i = 0; i < 14; i++) {
    flags.push({
      key: `experiment-${i}`,
      filters: {
        groups: [{ properties: i % 2 ? [person('plan', ['pro', 'enterprise'])] : [], rollout_percentage: 100 }],
        multivariate: variants(2 + (i % 3)),
        payloads: { v0: JSON.stringify({ experiment: i }) },
      },
    });
  }
  for (let i = 0; i < 7; i++) {
    flags.push({
      key: `layered-${i}`,
      filters: { groups: [{ properties: [person('country', 'JP'), person('plan', 'enterprise')], rollout_percentage: 100 }, { properties: [person('plan', 'pro')], rollout_percentage: 30 + i * 10 }, { properties: [], rollout_percentage: 10 }] },
    });
  }
  flags.push({ key: 'big-companies', filters: { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'size', value: '100', operator: 'gt', type: 'group', group_type_index: 0 }], rollout_percentage: 100 }] } });
  return flags;
}

export async function seed(server: TestServer): Promise<void> {
  for (const flag of flagDefinitions()) {
    const response = await server.api('/api/projects/@current/feature_flags/', { method: 'POST', body: flag });
    if (response.status !== 201) throw new Error(`creating ${flag.key}: ${response.status} ${await response.text()}`);
  }
  const batch: unknown[] = [];
  for (let c = 0; c < COMPANIES; c++) {
    batch.push({ event: '$groupidentify', distinct_id: `$company_c${c}`, properties: { $group_type: 'company', $group_key: `c${c}`, $group_set: { size: c * 10 } } });
  }
  for (let i = 0; i < PERSONS; i++) {
    const set = { plan: PLANS[i % 3], email: `user${i}@example${i % 4}.com`, country: COUNTRIES[i % 5], age: 18 + (i % 50) };
    batch.push({ event: '$identify', distinct_id: `person-${i}`, properties: { $set: set } });
  }
  const response = await server.post('/batch/', { api_key: server.projectKey, batch });
  if (response.status !== 200) throw new Error(`seeding persons: ${response.status} ${await response.text()}`);
}

/** Half the requests are for stored persons; a third name a company; some override a property. */
export function requestBody(tokenField: string, token: string, i: number): Buffer {
  const id = i % 2 === 0 ? `person-${i % PERSONS}` : `anonymous-${i}`;
  const body: Record<string, unknown> = { [tokenField]: token, distinct_id: id };
  if (i % 3 === 0) body.groups = { company: `c${i % COMPANIES}` };
  if (i % 5 === 0) body.person_properties = { plan: 'pro' };
  return Buffer.from(JSON.stringify(body));
}

const rate = (r: LoadResult) => r.requests / r.seconds;
const p99 = (r: LoadResult) => percentile(r.latenciesMs, 99).toFixed(1);

/** The round of median rate (rounds are few and odd). */
const medianRound = (rounds: LoadResult[]) => [...rounds].sort((a, b) => rate(a) - rate(b))[Math.floor(rounds.length / 2)];

/** A table row: the median round's figures, then every round's rate and p99. */
function row(name: string, rounds: LoadResult[], baseRounds: LoadResult[]): string {
  const median = medianRound(rounds);
  const perRound = (figure: (r: LoadResult) => string) => rounds.map(figure).join(' / ');
  return (
    `| ${name} | ${fmt(rate(median))} | ${percentile(median.latenciesMs, 50).toFixed(1)} | ${p99(median)} | ` +
    `${perRound((r) => fmt(rate(r)))} | ${perRound(p99)} | ${(rate(median) / rate(medianRound(baseRounds))).toFixed(2)} |`
  );
}

export async function benchFlags(): Promise<string> {
  const DURATION = Number(process.env.BENCH_FLAGS_MS ?? 5000);
  // This machine's speed drifts by a quarter within minutes: baseline and server take turns,
  // and the median round is reported next to every round.
  const ROUNDS = Number(process.env.BENCH_FLAGS_ROUNDS ?? 3);
  // Steady state is measured: each server first answers this long untimed (JIT, caches).
  const WARM_UP = 2000;
  const CONNECTIONS = 50;
  const headers = { 'content-type': 'application/json' };
  const server = await startBenchServer({ env: { SIGHTLINE_LOG_LEVEL: 'info' } });
  const lines = [
    `50 active flags (12 rollouts, 16 property-targeted, 14 multivariate, 7 multi-condition, 1 group flag), ${fmt(PERSONS)} stored persons, ${COMPANIES} groups; ${CONNECTIONS} connections; ${ROUNDS} rounds of ${DURATION / 1000} s, baseline and Sightline taking turns, after ${WARM_UP / 1000} s untimed each; load from raw keep-alive sockets (bench/socket-load.ts).`,
    '',
    '| endpoint | req/s (median round) | p50 ms | p99 ms | req/s by round | p99 ms by round | vs baseline |',
    '|---|---|---|---|---|---|---|',
  ];
  try {
    await seed(server);
    for (const [path, tokenField] of [['/decide?v=3', 'api_key'], ['/flags?v=2', 'token']] as const) {
      let i = 0;
      const bodies = () => requestBody(tokenField, server.projectKey, i++);
      const baseline = await startBaseline();
      const load = (url: string, durationMs: number) => runSocketLoad({ url: `${url}${path}`, connections: CONNECTIONS, headers, bodies, durationMs });
      const baseRounds: LoadResult[] = [];
      const serviceRounds: LoadResult[] = [];
      try {
        await load(baseline.url, WARM_UP);
        await load(server.url, WARM_UP);
        for (let round = 0; round < ROUNDS; round++) {
          baseRounds.push(await load(baseline.url, DURATION));
          serviceRounds.push(await load(server.url, DURATION));
        }
      } finally {
        baseline.stop();
      }
      lines.push(row(`bare node:http (JSON.parse only), ${path}`, baseRounds, baseRounds), row(`Sightline ${path}`, serviceRounds, baseRounds));
      const failures = serviceRounds.flatMap((r) => Object.entries(r.statusCounts).filter(([status]) => status !== '200'));
      const errors = serviceRounds.reduce((sum, r) => sum + r.errors, 0);
      if (failures.length > 0 || errors > 0) lines.push(`| ${path}: non-200 answers ${JSON.stringify(failures)}, errors ${errors} | | | | | | |`);
    }
  } finally {
    await server.stop();
  }
  return lines.join('\n');
}
