import assert from 'node:assert/strict';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { test } from 'node:test';

import v8 from 'node:v8';
import { collectGarbage, compactGarbage, IdleCollector } from '../../../src/util/idle-collect.js';

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

test('a thread is collected once after the start, once after work followed by a quiet while, and not again while idle', async () => {
  let collector: IdleCollector | null = null;
  try {
    const afterStart = await majorCollections(async () => {
      collector = new IdleCollector(90, 30);
      await sleep(300);
    });
    assert.equal(afterStart, 1, 'one collection once the start was quiet');
    const withoutWork = await majorCollections(() => sleep(400));
    assert.equal(withoutWork, 0, 'nothing to collect without work');
    const afterWork = await majorCollections(async () => {
      collector!.touch();
      await sleep(60);
      collector!.touch();
      await sleep(400);
    });
    assert.equal(afterWork, 1, 'one collection once the work stopped');
  } finally {
    (collector as IdleCollector | null)?.stop();
  }
});

test('work during the start postpones its collection until a quiet while', async () => {
  let collector: IdleCollector | null = null;
  try {
    const count = await majorCollections(async () => {
      collector = new IdleCollector(1_000, 100);
      for (let i = 0; i < 6; i++) {
        await sleep(40);
        collector.touch();
      }
      assert.equal(await majorCollections(() => sleep(0)), 0);
      await sleep(300);
    });
    assert.equal(count, 1);
  } finally {
    (collector as IdleCollector | null)?.stop();
  }
});

const oldSpacePages = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.physical_space_size;

test('compacting gives back the pages that plain collections leave half used', () => {
  // Old objects of which every other one survives: V8 judges such pages not worth compacting.
  let all: object[] = [];
  for (let i = 0; i < 400_000; i++) all.push({ i, text: `object ${i}` });
  collectGarbage();
  collectGarbage(); // now in the old space
  const kept = all.filter((_, i) => i % 2 === 0);
  all = [];
  collectGarbage();
  collectGarbage();
  const sparse = oldSpacePages();
  compactGarbage();
  const compacted = oldSpacePages();
  assert.equal(kept.length, 200_000);
  assert.ok(compacted < sparse * 0.8, `old space ${sparse} bytes after plain collections, ${compacted} after compacting`);
});

test('what is kept for speed is let go at each idle collection, before it', async () => {
  let collector: IdleCollector | null = null;
  const released: number[] = [];
  try {
    collector = new IdleCollector(90, 30);
    collector.onIdle(() => released.push(Date.now()));
    await sleep(300);
    assert.equal(released.length, 1, 'once after the start');
    await sleep(200);
    assert.equal(released.length, 1, 'not again without work');
    collector.touch();
    await sleep(400);
    assert.equal(released.length, 2, 'once after the work stopped');
  } finally {
    (collector as IdleCollector | null)?.stop();
  }
});
