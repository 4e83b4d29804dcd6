import assert from 'node:assert/strict';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { test } from 'node:test';

import { IdleCollector } from '../../../src/util/idle-collect.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Counts full (mark-compact) collections of this thread while `during` runs. */
async function majorCollections(during: () => Promise<void>): Promise<number> {
  let count = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if (((entry as { detail?: { kind?: number } }).detail)?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) count++;
  });
  observer.observe({ entryTypes: ['gc'] });
  try {
    await during();
    // GC entries are delivered asynchronously.
    await sleep(50);
  } finally {
    observer.disconnect();
  }
  return count;
}

test('a thread is collected once after work followed by a quiet while, and not again while idle', async () => {
  const collector = new IdleCollector(90);
  try {
    const withoutWork = await majorCollections(() => sleep(400));
    assert.equal(withoutWork, 0, 'nothing to collect without work');
    const afterWork = await majorCollections(async () => {
      collector.touch();
      await sleep(60);
      collector.touch();
      await sleep(400);
    });
    assert.equal(afterWork, 1, 'one collection once the work stopped');
  } finally {
    collector.stop();
  }
});
