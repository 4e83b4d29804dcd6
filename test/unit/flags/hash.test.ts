import assert from 'node:assert/strict';
import { hash } from 'node:crypto';
import { describe, it } from 'node:test';
import { flagHash, hashToUnit, holdoutHash, variantHash } from '../../../src/flags/engine/hash.js';

// Test vectors: posthog-node's local evaluator (packages/node in github.com/PostHog/posthog-js) and
// an independent implementation of the same formula agree on each.
const VECTORS: Array<[string, number]> = [
  ['half.id-0', 0.06676364403535166],
  ['half.id-1', 0.5886832098171301],
  ['exp.id-0variant', 0.7201092625037646],
  ['exp.user-4variant', 0.43296277227634444],
  ['holdout-id-0', 0.6549046468690476],
  ['beta.usér-ü', 0.8062737888607011],
];

describe('flag hash', () => {
  for (const [input, expected] of VECTORS) {
    it(`hashes ${JSON.stringify(input)} exactly`, () => {
      assert.equal(hashToUnit(input), expected);
    });
  }

  it('builds the rollout, variant and holdout inputs as the SDK does', () => {
    assert.equal(flagHash('half', 'id-0'), 0.06676364403535166);
    assert.equal(flagHash('half', 'id-1'), 0.5886832098171301);
    assert.equal(variantHash('exp', 'id-0'), 0.7201092625037646);
    assert.equal(variantHash('exp', 'user-4'), 0.43296277227634444);
    assert.equal(flagHash('exp', 'id-0', 'variant'), variantHash('exp', 'id-0'));
    assert.equal(holdoutHash('id-0'), 0.6549046468690476);
    assert.equal(flagHash('beta', 'usér-ü'), 0.8062737888607011);
  });

  it('places the vectors on the right side of a 50 % rollout', () => {
    assert.ok(flagHash('half', 'id-0') <= 0.5);
    assert.ok(flagHash('half', 'id-1') > 0.5);
  });

  it("equals the SDKs' formula, parseInt of the first 15 hex digits, on 200,000 inputs", () => {
    // One input in 128 rounds exactly halfway to a float64, so ties of both parities are covered.
    let mismatches = 0;
    for (let i = 0; i < 200_000; i++) {
      const input = `flag-${i % 97}.user-${i}-é`;
      const sdk = parseInt(hash('sha1', input, 'hex').slice(0, 15), 16) / 0xfffffffffffffff;
      if (hashToUnit(input) !== sdk) mismatches++;
    }
    assert.equal(mismatches, 0);
  });

  it('is deterministic, in [0, 1) and roughly uniform', () => {
    let below = 0;
    for (let i = 0; i < 10_000; i++) {
      const value = flagHash('uniform', `user-${i}`);
      assert.ok(value >= 0 && value < 1);
      assert.equal(value, flagHash('uniform', `user-${i}`));
      if (value <= 0.5) below++;
    }
    assert.ok(below > 4800 && below < 5200, `${below} of 10000 below 0.5`);
  });
});
