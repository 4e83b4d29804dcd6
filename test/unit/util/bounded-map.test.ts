import assert from 'node:assert/strict';
import { test } from 'node:test';

import { setNewest } from '../../../src/util/bounded-map.js';

test('setNewest keeps at most max entries: past it, the oldest go down to nine tenths at once; a key set again is newest', () => {
  const map = new Map<string, number>();
  for (let i = 0; i < 10; i++) setNewest(map, `k${i}`, i, 10);
  assert.equal(map.size, 10);
  setNewest(map, 'k0', 100, 10); // k0 becomes newest: k1 is now the oldest
  setNewest(map, 'k10', 10, 10); // 11 entries: down to 9, the two oldest go
  assert.deepEqual([...map.keys()], ['k3', 'k4', 'k5', 'k6', 'k7', 'k8', 'k9', 'k0', 'k10']);
  setNewest(map, 'k11', 11, 10);
  assert.equal(map.size, 10, 'nothing goes until max is passed');
  for (let i = 12; i < 5_000; i++) setNewest(map, `k${i}`, i, 10);
  assert.ok(map.size <= 10 && map.size >= 9);
  assert.equal(map.get('k4999'), 4999);

  const large = new Map<number, number>();
  for (let i = 0; i < 1_001; i++) setNewest(large, i, i, 1_000);
  assert.equal(large.size, 900, 'a tenth of 1,000 went');
  assert.equal(large.has(100), false);
  assert.equal(large.has(101), true);
});
