import assert from 'node:assert/strict';
import { test } from 'node:test';

import { MIN_DUCKDB_MEMORY_LIMIT_MB, MIN_MEMORY_LIMIT_MB, planMemory } from '../../../src/kernel/memory-budget.js';

test('DuckDB never gets less than a checkpoint needs, even at the smallest budget', () => {
  // At 32 MB a checkpoint could not pin its blocks and DuckDB invalidated the database.
  assert.ok(MIN_DUCKDB_MEMORY_LIMIT_MB >= 64);
  for (const limitMb of [MIN_MEMORY_LIMIT_MB, 320, 400]) {
    assert.equal(planMemory(limitMb, 2).duckdbMemoryLimitMb, MIN_DUCKDB_MEMORY_LIMIT_MB, `${limitMb} MB`);
  }
  assert.ok(planMemory(1024, 2).duckdbMemoryLimitMb > MIN_DUCKDB_MEMORY_LIMIT_MB);
});

test('the fixed cost, DuckDB and the bounded parts fit in what the budget leaves the process', () => {
  for (const limitMb of [MIN_MEMORY_LIMIT_MB, 320, 512, 1024, 4096]) {
    const plan = planMemory(limitMb, 2);
    const mb = (bytes: number) => bytes / 2 ** 20;
    const parts = 128 + plan.duckdbMemoryLimitMb + mb(plan.eventStoreMaxLagBytes) + (plan.maxPendingEvents * 8 * 1024) / 2 ** 20 + mb(plan.queryCacheBytes) + plan.flagThreads * 64;
    assert.ok(parts <= limitMb * 0.7 + 1, `${limitMb} MB: the parts take ${Math.round(parts)} MB of ${Math.round(limitMb * 0.7)}`);
  }
});

test('heaps are held to modest growth on small budgets and left to V8 on large ones', () => {
  for (const limitMb of [MIN_MEMORY_LIMIT_MB, 512, 2048]) assert.equal(planMemory(limitMb, 2).heapGrowingPercent, 20, `${limitMb} MB`);
  assert.equal(planMemory(4096, 2).heapGrowingPercent, 0);
});
