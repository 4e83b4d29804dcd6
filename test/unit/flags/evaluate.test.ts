import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PostHog } from 'posthog-node';
import { evaluateFlag, evaluateFlags, flagValue } from '../../../src/flags/engine/evaluate.js';
import { dependencyChain, indexFlags, withDependencyChains } from '../../../src/flags/engine/dependencies.js';
import { flagHash } from '../../../src/flags/engine/hash.js';
import type { EvaluationContext, FeatureFlag, FlagFilters, FlagResult } from '../../../src/flags/engine/types.js';

const NOW = new Date('2024-06-15T12:00:00Z');

let nextId = 1;
function flag(key: string, filters: Partial<FlagFilters>, extra: Partial<FeatureFlag> = {}): FeatureFlag {
  return {
    id: nextId++,
    key,
    name: key,
    filters: { groups: [], ...filters },
    active: true,
    deleted: false,
    ensure_experience_continuity: false,
    version: 1,
    ...extra,
  };
}

function ctx(distinctId: string, overrides: Partial<EvaluationContext> = {}): EvaluationContext {
  return {
    distinctId,
    groups: {},
    personProperties: { distinct_id: distinctId },
    groupProperties: {},
    groupTypeMapping: { '0': 'company', '1': 'project' },
    now: NOW,
    ...overrides,
  };
}

const half = flag('half', { groups: [{ properties: [], rollout_percentage: 50 }], payloads: { true: '{"color":"blue"}' } });
const exp = flag('exp', {
  groups: [{ properties: [], rollout_percentage: 100 }],
  multivariate: {
    variants: [
      { key: 'control', rollout_percentage: 50 },
      { key: 'test', rollout_percentage: 50 },
    ],
  },
  payloads: { test: '{"n":1}' },
});

function summary(result: FlagResult) {
  return { enabled: result.enabled, variant: result.variant, reason: result.reason };
}

describe('rollout and variants', () => {
  it('puts the hash test vectors (hash.test.ts) on the right side of a 50 % rollout', () => {
    assert.deepEqual(summary(evaluateFlag(half, ctx('id-0'))), {
      enabled: true,
      variant: null,
      reason: { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
    });
    assert.deepEqual(summary(evaluateFlag(half, ctx('id-1'))), {
      enabled: false,
      variant: null,
      reason: { code: 'out_of_rollout_bound', condition_index: 0, description: 'Out of rollout bound' },
    });
  });

  it('treats a null or absent rollout as 100 % and 0 % as nobody', () => {
    const open = flag('open', { groups: [{ rollout_percentage: null }] });
    const closed = flag('closed', { groups: [{ properties: [], rollout_percentage: 0 }] });
    for (let i = 0; i < 50; i++) {
      assert.equal(evaluateFlag(open, ctx(`u${i}`)).enabled, true);
      assert.equal(evaluateFlag(closed, ctx(`u${i}`)).enabled, false);
    }
  });

  it('chooses the multivariate variant from the variant hash', () => {
    assert.equal(evaluateFlag(exp, ctx('id-0')).variant, 'test');
    assert.equal(evaluateFlag(exp, ctx('user-4')).variant, 'control');
    assert.equal(flagValue(evaluateFlag(exp, ctx('id-0'))), 'test');
  });

  it('splits 33/33/34 roughly evenly and always picks a variant', () => {
    const three = flag('three', {
      groups: [{ rollout_percentage: 100 }],
      multivariate: {
        variants: [
          { key: 'a', rollout_percentage: 33 },
          { key: 'b', rollout_percentage: 33 },
          { key: 'c', rollout_percentage: 34 },
        ],
      },
    });
    const counts: Record<string, number> = {};
    for (let i = 0; i < 3000; i++) {
      const variant = evaluateFlag(three, ctx(`user-${i}`)).variant ?? 'none';
      counts[variant] = (counts[variant] ?? 0) + 1;
    }
    assert.deepEqual(Object.keys(counts).sort(), ['a', 'b', 'c']);
    for (const count of Object.values(counts)) assert.ok(count > 850 && count < 1150, JSON.stringify(counts));
  });

  it('leaves the variant empty (but the flag on) when percentages do not cover the hash', () => {
    const partial = flag('exp', {
      groups: [{ rollout_percentage: 100 }],
      multivariate: { variants: [{ key: 'control', rollout_percentage: 50 }] },
    });
    // The variant hash of id-0 for "exp" is 0.72, past the only range.
    assert.deepEqual(summary(evaluateFlag(partial, ctx('id-0'))).variant, null);
    assert.equal(evaluateFlag(partial, ctx('id-0')).enabled, true);
  });

  it('honours a condition variant override, and ignores one that is not a variant', () => {
    const forced = flag('exp', {
      groups: [{ properties: [], rollout_percentage: 100, variant: 'control' }],
      multivariate: exp.filters.multivariate,
    });
    assert.equal(evaluateFlag(forced, ctx('id-0')).variant, 'control');
    const bogus = flag('exp', {
      groups: [{ properties: [], rollout_percentage: 100, variant: 'nope' }],
      multivariate: exp.filters.multivariate,
    });
    assert.equal(evaluateFlag(bogus, ctx('id-0')).variant, 'test');
  });
});

describe('payloads', () => {
  it('returns the stored payload of "true" for a boolean flag, null when off', () => {
    assert.equal(evaluateFlag(half, ctx('id-0')).payload, '{"color":"blue"}');
    assert.equal(evaluateFlag(half, ctx('id-1')).payload, null);
  });

  it('returns the payload of the matched variant, or null when that variant has none', () => {
    assert.equal(evaluateFlag(exp, ctx('id-0')).payload, '{"n":1}');
    assert.equal(evaluateFlag(exp, ctx('user-4')).payload, null);
  });

  it('does not read payloads off the prototype', () => {
    const odd = flag('exp', {
      groups: [{ rollout_percentage: 100, variant: 'constructor' }],
      multivariate: { variants: [{ key: 'constructor', rollout_percentage: 100 }] },
      payloads: {},
    });
    assert.equal(evaluateFlag(odd, ctx('a')).payload, null);
  });
});

describe('conditions', () => {
  const pro = { key: 'plan', value: 'pro', operator: 'exact', type: 'person' } as const;

  it('returns false with reason "disabled" for an inactive flag, before anything else', () => {
    const off = flag('off', { groups: [{ rollout_percentage: 100 }] }, { active: false });
    const result = evaluateFlag(off, ctx('id-0'));
    assert.deepEqual(result, {
      key: 'off',
      enabled: false,
      variant: null,
      reason: { code: 'disabled', condition_index: null, description: 'Feature flag is disabled' },
      payload: null,
    });
  });

  it('matches the first condition whose properties and rollout both hold', () => {
    const targeted = flag('targeted', {
      groups: [
        { properties: [pro], rollout_percentage: 100 },
        { properties: [{ key: 'email', value: '@acme.com', operator: 'icontains', type: 'person' }] },
      ],
    });
    const person = (properties: Record<string, unknown>) => ctx('u', { personProperties: { distinct_id: 'u', ...properties } });
    assert.deepEqual(evaluateFlag(targeted, person({ plan: 'pro' })).reason.condition_index, 0);
    assert.deepEqual(summary(evaluateFlag(targeted, person({ email: 'x@ACME.com' }))).reason, {
      code: 'condition_match',
      condition_index: 1,
      description: 'Matched condition set 2',
    });
    assert.deepEqual(summary(evaluateFlag(targeted, person({ plan: 'free' }))), {
      enabled: false,
      variant: null,
      reason: { code: 'no_condition_match', condition_index: 1, description: 'No matching condition set' },
    });
  });

  it('reports the strongest non-matching reason across conditions', () => {
    const mixed = flag('half', {
      groups: [
        { properties: [], rollout_percentage: 50 },
        { properties: [pro], rollout_percentage: 100 },
      ],
    });
    // id-1 is out of the 50 % bucket; out_of_rollout_bound outranks no_condition_match.
    assert.deepEqual(evaluateFlag(mixed, ctx('id-1')).reason, {
      code: 'out_of_rollout_bound',
      condition_index: 0,
      description: 'Out of rollout bound',
    });
    assert.deepEqual(evaluateFlag(flag('empty', { groups: [] }), ctx('a')).reason, {
      code: 'no_condition_match',
      condition_index: null,
      description: 'No matching condition set',
    });
  });

  describe('order with variant overrides', () => {
    const ordered = flag('exp', {
      groups: [
        { properties: [pro], rollout_percentage: 100 },
        { properties: [pro], rollout_percentage: 100, variant: 'test' },
      ],
      multivariate: exp.filters.multivariate,
    });
    const proUser = ctx('user-4', { personProperties: { distinct_id: 'user-4', plan: 'pro' } });

    it('walks conditions in stored order by default (posthog-node 5, current PostHog)', () => {
      const result = evaluateFlag(ordered, proUser);
      assert.equal(result.variant, 'control');
      assert.equal(result.reason.condition_index, 0);
    });

    it('puts override conditions first on request, reporting their original index', () => {
      const result = evaluateFlag(ordered, proUser, { variantOverridesFirst: true });
      assert.equal(result.variant, 'test');
      assert.deepEqual(result.reason, { code: 'condition_match', condition_index: 1, description: 'Matched condition set 2' });
    });

    it('keeps the stored order among conditions of the same kind', () => {
      const twoOverrides = flag('exp', {
        groups: [
          { properties: [], rollout_percentage: 100 },
          { properties: [pro], variant: 'test' },
          { properties: [pro], variant: 'control' },
        ],
        multivariate: exp.filters.multivariate,
      });
      const result = evaluateFlag(twoOverrides, proUser, { variantOverridesFirst: true });
      assert.equal(result.variant, 'test');
      assert.equal(result.reason.condition_index, 1);
    });
  });

  it('stops at the first rollout exclusion when early_exit is set', () => {
    const filters: Partial<FlagFilters> = {
      groups: [
        { properties: [], rollout_percentage: 50 },
        { properties: [], rollout_percentage: 100 },
      ],
    };
    assert.equal(evaluateFlag(flag('half', filters), ctx('id-1')).enabled, true);
    const result = evaluateFlag(flag('half', { ...filters, early_exit: true }), ctx('id-1'));
    assert.equal(result.enabled, false);
    assert.equal(result.reason.code, 'out_of_rollout_bound');
  });
});

describe('group flags', () => {
  const groupFlag = flag('gflag', {
    aggregation_group_type_index: 0,
    groups: [
      {
        properties: [{ key: 'size', value: 'big', operator: 'exact', type: 'group', group_type_index: 0 }],
        rollout_percentage: 50,
      },
    ],
    payloads: { true: '"group"' },
  });
  const withCompany = (key: string, size = 'big') =>
    ctx('someone', { groups: { company: key }, groupProperties: { company: { $group_key: key, size } } });

  it('buckets on the group key, not the distinct id', () => {
    let on = 0;
    for (let i = 0; i < 40; i++) {
      const key = `company-${i}`;
      const expected = flagHash('gflag', key) <= 0.5;
      const result = evaluateFlag(groupFlag, withCompany(key));
      assert.equal(result.enabled, expected, key);
      const otherPerson = evaluateFlag(groupFlag, { ...withCompany(key), distinctId: `other-${i}` });
      assert.equal(otherPerson.enabled, expected);
      if (expected) on++;
    }
    assert.ok(on > 5 && on < 35);
  });

  it('matches group properties of that group type', () => {
    const key = [...Array(40).keys()].map((i) => `company-${i}`).find((k) => flagHash('gflag', k) <= 0.5)!;
    assert.equal(evaluateFlag(groupFlag, withCompany(key)).payload, '"group"');
    assert.deepEqual(evaluateFlag(groupFlag, withCompany(key, 'small')).reason.code, 'no_condition_match');
  });

  it('is off with "no_group_type" when the request passes no key for the group type', () => {
    for (const context of [ctx('someone'), ctx('someone', { groups: { project: 'p1' } }), ctx('x', { groupTypeMapping: {} })]) {
      assert.deepEqual(summary(evaluateFlag(groupFlag, context)), {
        enabled: false,
        variant: null,
        reason: { code: 'no_group_type', condition_index: null, description: 'No group type' },
      });
    }
  });

  it('supports per-condition aggregation (mixed targeting)', () => {
    const mixed = flag('mixed', {
      groups: [
        { aggregation_group_type_index: 1, properties: [{ key: 'tier', value: 'gold', type: 'group', group_type_index: 1 }] },
        { properties: [{ key: 'plan', value: 'pro', type: 'person' }] },
      ],
    });
    const noGroup = evaluateFlag(mixed, ctx('u', { personProperties: { plan: 'free' } }));
    assert.deepEqual(noGroup.reason, { code: 'no_group_type', condition_index: 0, description: 'No group type' });
    assert.equal(evaluateFlag(mixed, ctx('u', { personProperties: { plan: 'pro' } })).reason.condition_index, 1);
    const gold = ctx('u', { groups: { project: 'p1' }, groupProperties: { project: { tier: 'gold' } } });
    assert.deepEqual(evaluateFlag(mixed, gold).reason.condition_index, 0);
  });
});

describe('holdout and early access', () => {
  // holdout-id-0 hashes to 0.6549 (hash.test.ts).
  it('holds out identifiers under the exclusion percentage with variant "holdout-<id>"', () => {
    const held = flag('exp', { ...exp.filters, holdout: { id: 7, exclusion_percentage: 70 } });
    assert.deepEqual(summary(evaluateFlag(held, ctx('id-0'))), {
      enabled: true,
      variant: 'holdout-7',
      reason: { code: 'holdout_condition_value', condition_index: null, description: 'Holdout condition value' },
    });
    const notHeld = flag('exp', { ...exp.filters, holdout: { id: 7, exclusion_percentage: 60 } });
    assert.equal(evaluateFlag(notHeld, ctx('id-0')).variant, 'test');
    const everyone = flag('exp', { ...exp.filters, holdout: { id: 8, exclusion_percentage: 100 } });
    assert.equal(evaluateFlag(everyone, ctx('anyone')).variant, 'holdout-8');
  });

  it('lets a set enrollment property decide a super_groups flag', () => {
    const eaf = flag('beta', {
      super_groups: [
        { properties: [{ key: '$feature_enrollment/beta', value: ['true'], operator: 'exact', type: 'person' }], rollout_percentage: 100 },
      ],
      groups: [{ properties: [], rollout_percentage: 100 }],
    });
    const enrolled = evaluateFlag(eaf, ctx('u', { personProperties: { '$feature_enrollment/beta': true } }));
    assert.deepEqual(enrolled.reason, { code: 'super_condition_value', condition_index: 0, description: 'Super condition value' });
    assert.equal(enrolled.enabled, true);
    const optedOut = evaluateFlag(eaf, ctx('u', { personProperties: { '$feature_enrollment/beta': false } }));
    assert.deepEqual([optedOut.enabled, optedOut.reason.code], [false, 'super_condition_value']);
    assert.equal(evaluateFlag(eaf, ctx('u')).reason.code, 'condition_match');
  });

  it('reads $feature_enrollment/<key> for feature_enrollment flags', () => {
    const eaf = flag('beta2', { feature_enrollment: true, groups: [{ rollout_percentage: 0 }] });
    assert.equal(evaluateFlag(eaf, ctx('u', { personProperties: { '$feature_enrollment/beta2': 'true' } })).enabled, true);
    assert.equal(evaluateFlag(eaf, ctx('u')).reason.code, 'out_of_rollout_bound');
  });
});

describe('bucketing identifiers', () => {
  it('uses the stored hash key of an experience-continuity flag', () => {
    const sticky = flag('half', half.filters, { ensure_experience_continuity: true });
    const overrides = { hashKeyOverrides: { half: 'id-0' } };
    assert.equal(evaluateFlag(sticky, ctx('id-1', overrides)).enabled, true);
    assert.equal(evaluateFlag(sticky, ctx('id-1')).enabled, false);
    // Overrides only apply to continuity flags, as in the SDK's local evaluation.
    assert.equal(evaluateFlag(half, ctx('id-1', overrides)).enabled, false);
  });

  it('buckets device_id flags on the device id and skips person conditions without one', () => {
    const device = flag('half', half.filters, { bucketing_identifier: 'device_id' });
    assert.equal(evaluateFlag(device, ctx('id-1', { deviceId: 'id-0' })).enabled, true);
    assert.equal(evaluateFlag(device, ctx('id-1', { personProperties: { $device_id: 'id-0' } })).enabled, true);
    const missing = evaluateFlag(device, ctx('id-0'));
    assert.deepEqual([missing.enabled, missing.reason.code], [false, 'out_of_rollout_bound']);
  });
});

describe('flag dependencies', () => {
  const base = flag('base', { groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }] }] });
  const multi = flag('multi', { ...exp.filters });
  const byKey = flag('by-key', {
    groups: [{ properties: [{ key: 'base', type: 'flag', operator: 'flag_evaluates_to', value: true }] }],
  });
  const byId = flag('by-id', {
    groups: [{ properties: [{ key: String(base.id), type: 'flag', operator: 'flag_evaluates_to', value: false }] }],
  });
  const onVariant = flag('on-variant', {
    groups: [{ properties: [{ key: 'multi', type: 'flag', operator: 'flag_evaluates_to', value: 'test' }] }],
  });
  const all = [byKey, byId, onVariant, base, multi];
  const pro = ctx('id-0', { personProperties: { plan: 'pro' } });

  it('evaluates against the other flags of the same call, by key or by id', () => {
    const results = evaluateFlags(all, pro);
    assert.equal(results['by-key'].enabled, true);
    assert.equal(results['by-id'].enabled, false);
    assert.equal(results['on-variant'].enabled, true);
    const free = evaluateFlags(all, ctx('user-4', { personProperties: { plan: 'free' } }));
    assert.equal(free['by-key'].enabled, false);
    assert.equal(free['by-id'].enabled, true);
    assert.equal(free['on-variant'].enabled, false);
  });

  it('evaluates dependencies of requested keys without returning them', () => {
    const results = evaluateFlags(all, pro, ['by-key', 'missing-key']);
    assert.deepEqual(Object.keys(results), ['by-key']);
    assert.equal(results['by-key'].enabled, true);
  });

  it('fails a flag whose dependency is missing or circular', () => {
    const orphan = flag('orphan', {
      groups: [{ properties: [{ key: 'ghost', type: 'flag', operator: 'flag_evaluates_to', value: true }] }],
    });
    const a = flag('loop-a', { groups: [{ properties: [{ key: 'loop-b', type: 'flag', operator: 'flag_evaluates_to', value: true }] }] });
    const b = flag('loop-b', { groups: [{ properties: [{ key: 'loop-a', type: 'flag', operator: 'flag_evaluates_to', value: true }] }] });
    const results = evaluateFlags([orphan, a, b, base], pro);
    for (const key of ['orphan', 'loop-a', 'loop-b']) {
      assert.equal(results[key].failed, true, key);
      assert.equal(results[key].enabled, false);
      assert.equal(results[key].reason.code, 'missing_dependency');
    }
    assert.equal(results.base.enabled, true);
    assert.equal(evaluateFlag(byKey, pro).failed, true);
  });

  it('treats an inactive dependency as false', () => {
    const results = evaluateFlags([byKey, { ...base, active: false }], pro);
    assert.equal(results['by-key'].enabled, false);
    assert.equal(results['by-key'].failed, undefined);
  });

  it('builds the dependency_chain SDKs need, with keys instead of ids', () => {
    const index = indexFlags(all);
    assert.deepEqual(dependencyChain(index, String(base.id)), ['base']);
    const chained = flag('chained', {
      groups: [{ properties: [{ key: String(byKey.id), type: 'flag', operator: 'flag_evaluates_to', value: true }] }],
    });
    const served = withDependencyChains(chained, indexFlags([...all, chained]));
    assert.deepEqual(served.filters.groups[0].properties?.[0], {
      key: 'by-key',
      type: 'flag',
      operator: 'flag_evaluates_to',
      value: true,
      dependency_chain: ['base', 'by-key'],
    });
    assert.deepEqual(dependencyChain(index, 'ghost'), []);
  });
});

describe('flags that cannot be computed', () => {
  const cohort = flag('cohort', { groups: [{ properties: [{ key: 'id', value: 12, type: 'cohort' }] }] });
  const unknown = flag('unknown-op', { groups: [{ properties: [{ key: 'x', value: 1, operator: 'between', type: 'person' }] }] });
  const dependent = flag('dependent', {
    groups: [{ properties: [{ key: 'cohort', type: 'flag', operator: 'flag_evaluates_to', value: true }] }],
  });

  it('returns them failed and off, and still evaluates the rest', () => {
    const results = evaluateFlags([cohort, unknown, dependent, half], ctx('id-0'));
    for (const key of ['cohort', 'unknown-op', 'dependent']) {
      assert.equal(results[key].failed, true, key);
      assert.equal(results[key].enabled, false);
      assert.equal(results[key].payload, null);
      assert.equal(results[key].variant, null);
    }
    assert.equal(results.cohort.reason.code, 'evaluation_error');
    assert.match(results['unknown-op'].error ?? '', /unknown operator "between"/);
    assert.equal(results.dependent.reason.code, 'evaluation_error');
    assert.equal(results.half.enabled, true);
    assert.equal(results.half.failed, undefined);
  });

  it('is not failed when the undecidable condition cannot change the answer', () => {
    const afterMatch = flag('after', {
      groups: [{ properties: [], rollout_percentage: 100 }, { properties: [{ key: 'id', value: 1, type: 'cohort' }] }],
    });
    assert.equal(evaluateFlag(afterMatch, ctx('a')).enabled, true);
    const ruledOut = flag('ruled-out', {
      groups: [
        {
          properties: [
            { key: 'id', value: 1, type: 'cohort' },
            { key: 'plan', value: 'pro', type: 'person' },
          ],
        },
      ],
    });
    const result = evaluateFlag(ruledOut, ctx('a'));
    assert.deepEqual([result.failed, result.reason.code], [undefined, 'no_condition_match']);
  });

  it('fails when an undecidable condition comes before a match', () => {
    const before = flag('before', {
      groups: [{ properties: [{ key: 'id', value: 1, type: 'cohort' }] }, { properties: [], rollout_percentage: 100 }],
    });
    assert.equal(evaluateFlag(before, ctx('a')).failed, true);
  });

  it('leaves deleted flags out', () => {
    const gone = flag('gone', { groups: [{ rollout_percentage: 100 }] }, { deleted: true });
    assert.deepEqual(Object.keys(evaluateFlags([gone, half], ctx('id-0'))), ['half']);
    assert.deepEqual(Object.keys(evaluateFlags([gone, half], ctx('id-0'), ['gone'])), []);
  });
});

// posthog-node's own local evaluator, fed the same definitions through its `fetch` option
// (no server, no network), must agree with the engine id for id.
describe('parity with posthog-node local evaluation', () => {
  const PLANS = ['free', 'pro', 'team', 'Enterprise'];
  const parityFlags: FeatureFlag[] = [
    flag('rollout-50', { groups: [{ properties: [], rollout_percentage: 50 }], payloads: { true: '{"on":true}' } }),
    flag('split-3', {
      groups: [{ properties: [], rollout_percentage: 100 }],
      multivariate: {
        variants: [
          { key: 'alpha', rollout_percentage: 33 },
          { key: 'beta', rollout_percentage: 33 },
          { key: 'gamma', rollout_percentage: 34 },
        ],
      },
      payloads: { beta: '{"b":2}' },
    }),
    flag('targeted', {
      groups: [
        {
          properties: [
            { key: 'plan', value: ['pro', 'team'], operator: 'exact', type: 'person' },
            { key: 'age', value: 30, operator: 'gt', type: 'person' },
          ],
          rollout_percentage: 80,
        },
        {
          properties: [
            { key: 'email', value: '@ACME.com', operator: 'icontains', type: 'person' },
            { key: 'app_version', value: '2.1.0', operator: 'semver_gte', type: 'person' },
          ],
          rollout_percentage: 100,
        },
        {
          properties: [
            { key: 'plan', value: 'free', operator: 'is_not', type: 'person' },
            { key: 'email', value: '^user-1', operator: 'regex', type: 'person' },
          ],
          rollout_percentage: 40,
        },
      ],
      payloads: { true: '"targeted"' },
    }),
  ];
  const definitions = { flags: parityFlags, group_type_mapping: {}, cohorts: {} };
  let client: PostHog;

  before(() => {
    client = new PostHog('phc_parity', {
      host: 'http://127.0.0.1:9',
      personalApiKey: 'phx_parity',
      featureFlagsPollingInterval: null,
      fetch: async () => ({
        status: 200,
        headers: { get: () => null },
        json: async () => definitions,
        text: async () => JSON.stringify(definitions),
      }),
    });
  });
  after(async () => {
    await client.shutdown();
  });

  it('agrees on 1,000 distinct ids for a 50 % rollout, a 33/33/34 split and a targeted flag', async () => {
    let enabledTargeted = 0;
    for (let i = 0; i < 1000; i++) {
      const distinctId = `user-${i}`;
      const personProperties = {
        plan: PLANS[i % PLANS.length],
        age: (i * 7) % 60,
        email: `${distinctId}@${i % 3 === 0 ? 'acme.com' : 'example.org'}`,
        app_version: `${i % 4}.${i % 3}.${i % 5}`,
      };
      const sdk = await client.getAllFlagsAndPayloads(distinctId, { personProperties, onlyEvaluateLocally: true });
      const ours = evaluateFlags(
        parityFlags,
        ctx(distinctId, { personProperties: { distinct_id: distinctId, ...personProperties } }),
      );
      for (const definition of parityFlags) {
        const result = ours[definition.key];
        assert.equal(result.failed, undefined);
        assert.equal(flagValue(result), sdk.featureFlags?.[definition.key], `${definition.key} for ${distinctId}`);
        const payload = result.payload === null ? undefined : JSON.parse(String(result.payload));
        assert.deepEqual(payload, sdk.featureFlagPayloads?.[definition.key], `${definition.key} payload for ${distinctId}`);
      }
      if (ours.targeted.enabled) enabledTargeted++;
    }
    assert.ok(enabledTargeted > 100 && enabledTargeted < 900, `targeted on for ${enabledTargeted}`);
  });
});
