/**
 * The NATS log's share rule (ingestion/log/fair-share.ts): nodes that each look at who holds what
 * and act on it one at a time, in any order, from any starting assignment, end with every
 * partition owned and each node holding floor(P/N) or ceil(P/N), and then move nothing more.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { lostDeliveries } from '../../../src/ingestion/log/delivery-gaps.js';
import { FairShare, shareBounds, shareStep, type Survey } from '../../../src/ingestion/log/fair-share.js';

/** owner[p] = the node holding partition p, or null. */
type Assignment = (number | null)[];

function surveyOf(owner: Assignment, nodes: number[], self: number): Survey {
  const held = new Map(nodes.map((n) => [n, 0]));
  for (const o of owner) if (o !== null) held.set(o, (held.get(o) ?? 0) + 1);
  return { self, held };
}

/** One pass of node `self`, as JetStreamLog.rebalance does it: hand over (highest first), else take free ones (lowest first). */
function pass(owner: Assignment, nodes: number[], self: number): boolean {
  const { take, release } = shareStep(owner.length, surveyOf(owner, nodes, self));
  const mine = owner.flatMap((o, p) => (o === self ? [p] : []));
  if (release > 0) {
    for (const p of mine.reverse().slice(0, release)) owner[p] = null;
    return true;
  }
  const free = owner.flatMap((o, p) => (o === null ? [p] : [])).slice(0, take);
  for (const p of free) owner[p] = self;
  return free.length > 0;
}

function counts(owner: Assignment, nodes: number[]): number[] {
  return nodes.map((n) => owner.filter((o) => o === n).length);
}

test('shareBounds: floor and ceil of partitions over live nodes', () => {
  assert.deepEqual(shareBounds(8, 3), { low: 2, high: 3 });
  assert.deepEqual(shareBounds(8, 1), { low: 8, high: 8 });
  assert.deepEqual(shareBounds(4, 5), { low: 0, high: 1 });
  assert.deepEqual(shareBounds(6, 0), { low: 6, high: 6 });
});

test('a node alone takes every partition; a second one gets half as the first hands over', () => {
  const owner: Assignment = Array(8).fill(null);
  pass(owner, [1], 1);
  assert.deepEqual(counts(owner, [1]), [8]);
  // Node 2 joins: 1 is above ceil(8/2) and hands over 4 at once; 2 takes them.
  assert.deepEqual(shareStep(8, surveyOf(owner, [1, 2], 1)), { take: 0, release: 4 });
  assert.deepEqual(shareStep(8, surveyOf(owner, [1, 2], 2)), { take: 4, release: 0 });
  pass(owner, [1, 2], 1);
  pass(owner, [1, 2], 2);
  assert.deepEqual(counts(owner, [1, 2]), [4, 4]);
  assert.deepEqual(owner, [1, 1, 1, 1, 2, 2, 2, 2]);
});

test('4 partitions on 3 nodes end 2 / 1 / 1, not 2 / 2 / 0', () => {
  const owner: Assignment = [1, 1, 2, 2];
  // 3 holds fewer than floor(4/3) = 1: each of the others (above 1) gives one up; nobody takes above 1 meanwhile.
  assert.deepEqual(shareStep(4, surveyOf(owner, [1, 2, 3], 1)), { take: 0, release: 1 });
  pass(owner, [1, 2, 3], 1);
  assert.deepEqual(shareStep(4, surveyOf(owner, [1, 2, 3], 2)), { take: 0, release: 1 });
  // Nobody else is short now: 3 may take up to ceil(4/3) = 2, of which 1 is free.
  assert.deepEqual(shareStep(4, surveyOf(owner, [1, 2, 3], 3)), { take: 2, release: 0 });
  pass(owner, [1, 2, 3], 3);
  assert.deepEqual(counts(owner, [1, 2, 3]), [1, 2, 1]);
  // Settled: nothing is free and nobody hands over.
  for (const n of [1, 2, 3]) assert.equal(shareStep(4, surveyOf(owner, [1, 2, 3], n)).release, 0, `node ${n} keeps its partitions`);
});

test('a dead node\'s partitions are free at once and taken up to the new share', () => {
  const owner: Assignment = [1, 1, 1, 2, 2, 2, 3, 3];
  for (let p = 0; p < owner.length; p++) if (owner[p] === 3) owner[p] = null; // 3 dies: its locks go with its connection
  assert.deepEqual(shareStep(8, surveyOf(owner, [1, 2], 1)), { take: 1, release: 0 });
  pass(owner, [1, 2], 1);
  pass(owner, [1, 2], 2);
  assert.deepEqual(counts(owner, [1, 2]), [4, 4]);
});

test('any start, any order of passes: every partition owned, each node within floor..ceil, then nothing moves', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 32 }),
      fc.integer({ min: 1, max: 7 }),
      fc.array(fc.nat(), { maxLength: 32 }),
      fc.array(fc.nat(), { minLength: 200, maxLength: 200 }),
      (partitions, nodeCount, start, order) => {
        const nodes = Array.from({ length: nodeCount }, (_, i) => 100 + i);
        // Arbitrary start: each partition free or held by any node (e.g. right after nodes joined or died).
        const owner: Assignment = Array.from({ length: partitions }, (_, p) => {
          const pick = start[p] ?? 0;
          return pick % (nodeCount + 1) === nodeCount ? null : nodes[pick % (nodeCount + 1)];
        });
        // Random order first, then round-robin sweeps until a sweep moves nothing.
        for (const o of order) pass(owner, nodes, nodes[o % nodeCount]);
        let sweeps = 0;
        for (let moved = true; moved; sweeps++) {
          assert.ok(sweeps < 4 * partitions + 10, 'converges');
          moved = false;
          for (const n of nodes) moved = pass(owner, nodes, n) || moved;
        }
        const { low, high } = shareBounds(partitions, nodeCount);
        assert.ok(owner.every((o) => o !== null), 'every partition is owned');
        for (const c of counts(owner, nodes)) assert.ok(c >= low && c <= high, `${c} within ${low}..${high}`);
      },
    ),
    { numRuns: 500 },
  );
});

test('FairShare: hand-overs wait until the live nodes have not changed for the settle time; takes do not', () => {
  const share = new FairShare(8, 3_000);
  const alone = { self: 1, held: new Map([[1, 0]]) };
  assert.deepEqual(share.step(alone, 0), { take: 8, release: 0 }, 'free partitions are taken at once');
  const joined = { self: 1, held: new Map([[1, 8], [2, 0]]) };
  assert.deepEqual(share.step(joined, 1_000), { take: 0, release: 0 }, 'a node just joined: wait');
  assert.deepEqual(share.step(joined, 3_999), { take: 0, release: 0 });
  assert.deepEqual(share.step(joined, 4_000), { take: 0, release: 4 }, 'stable for 3 s: hand over');
  // A third node appears and is gone again within the settle time: nothing is handed over for it.
  const blip = { self: 1, held: new Map([[1, 4], [2, 4], [3, 0]]) };
  assert.deepEqual(share.step(blip, 5_000), { take: 0, release: 0 });
  const back = { self: 1, held: new Map([[1, 4], [2, 4]]) };
  assert.deepEqual(share.step(back, 6_000), { take: 0, release: 0 });
  assert.deepEqual(share.step(back, 10_000), { take: 0, release: 0 }, 'balanced: nothing to do');
});

test('lostDeliveries: gaps in the consumer\'s delivery numbers, across fetches', () => {
  assert.equal(lostDeliveries(null, [7, 8, 9]), 0, 'the first fetch of a new owner has nothing to compare with');
  assert.equal(lostDeliveries(9, [10, 11]), 0);
  assert.equal(lostDeliveries(11, [14, 15, 17]), 3, '12, 13 and 16 never arrived');
  assert.equal(lostDeliveries(17, []), 0);
});
