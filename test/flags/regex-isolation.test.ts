/**
 * A flag writer's hostile regex must not stall flag evaluation for everyone else. Ordinary
 * /flags requests are timed alone and while an attacker keeps sending requests whose
 * properties hit the worst case of the hostile patterns; rounds alternate so that the load
 * of a shared machine falls on both alike. The one relative timing check this suite makes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createFlag, everyone } from '../helpers/flags.js';
import { startServer, type TestServer } from '../helpers/server.js';

const ROUNDS = 4;
const REQUESTS_PER_ROUND = 400;
const CONCURRENCY = 4;
const REQUEST_TIMEOUT_MS = 10_000;

// A JS RegExp backtracks exponentially on these (the first took over a minute at 30 characters);
// the second needs more than a match's step limit here.
const HOSTILE_TEXT = 'a'.repeat(3000) + '!';
const HOSTILE_FLAGS = [
  everyone('nested-plus', [{ key: 'name', operator: 'regex', value: '^(a+)+$', type: 'person' }]),
  everyone('repeat-1000', [{ key: 'name', operator: 'regex', value: '(.*a){1000}$', type: 'person' }]),
  everyone('alternation', [{ key: 'name', operator: 'not_regex', value: '^(a|aa)+$', type: 'person' }]),
];

let server: TestServer;

before(async () => {
  server = await startServer();
  for (const flag of HOSTILE_FLAGS) await createFlag(server, flag);
  for (let i = 0; i < 10; i++) {
    await createFlag(server, everyone(`plain-${i}`, [{ key: 'plan', value: ['pro', 'team'], type: 'person' }]));
  }
});

after(async () => {
  await server?.stop();
});

async function flags(body: Record<string, unknown>): Promise<{ ms: number; answer: any }> {
  const started = performance.now();
  try {
    const response = await fetch(`${server.url}/flags?v=2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: server.projectKey, ...body }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const answer = await response.json();
    return { ms: performance.now() - started, answer };
  } catch {
    return { ms: REQUEST_TIMEOUT_MS, answer: null };
  }
}

/** Latencies of `REQUESTS_PER_ROUND` ordinary requests, `CONCURRENCY` at a time. */
async function ordinaryRound(round: number): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < REQUESTS_PER_ROUND) {
      const i = next++;
      const { ms, answer } = await flags({ distinct_id: `user-${round}-${i}`, person_properties: { plan: 'pro', name: 'bob' } });
      assert.equal(answer?.flags?.['plain-0']?.enabled, true);
      latencies.push(ms);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return latencies;
}

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}

describe('a hostile regex condition', () => {
  it('fails its own flag and leaves the p99 of other /flags requests within twice its level', async () => {
    // Warm up both paths (JIT, caches) before anything is timed.
    await ordinaryRound(-1);
    const attacked = await flags({ distinct_id: 'attacker', person_properties: { name: HOSTILE_TEXT } });
    assert.equal(attacked.answer.errorsWhileComputingFlags, true);
    assert.equal(attacked.answer.flags['repeat-1000'].failed, true);
    assert.equal(attacked.answer.flags['plain-0'].enabled, false);

    const quiet: number[] = [];
    const underAttack: number[] = [];
    let attacks = 0;
    for (let round = 0; round < ROUNDS; round++) {
      quiet.push(...(await ordinaryRound(round * 2)));

      let attacking = true;
      const attacker = (async () => {
        while (attacking) {
          const { answer } = await flags({ distinct_id: `attacker-${attacks}`, person_properties: { name: HOSTILE_TEXT } });
          assert.equal(answer?.errorsWhileComputingFlags, true);
          attacks++;
        }
      })();
      underAttack.push(...(await ordinaryRound(round * 2 + 1)));
      attacking = false;
      await attacker;
    }

    const baseline = p99(quiet);
    const attackedP99 = p99(underAttack);
    console.log(`p99 without attack ${baseline.toFixed(1)} ms, under attack ${attackedP99.toFixed(1)} ms (${attacks} hostile requests)`);
    assert.ok(attacks >= ROUNDS * 10, `only ${attacks} hostile requests were made`);
    assert.ok(attackedP99 <= 2 * baseline, `p99 ${attackedP99.toFixed(1)} ms under attack against ${baseline.toFixed(1)} ms without`);
  });
});
