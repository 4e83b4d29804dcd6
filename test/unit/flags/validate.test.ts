import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlagValidationError, validateFlagFilters, validateFlagKey } from '../../../src/flags/engine/validate.js';

const VARIANTS = {
  variants: [
    { key: 'control', rollout_percentage: 50 },
    { key: 'test', rollout_percentage: 50 },
  ],
};

function rejects(filters: unknown, attr: string, detail?: RegExp): void {
  assert.throws(
    () => validateFlagFilters(filters),
    (error: unknown) => {
      assert.ok(error instanceof FlagValidationError, `expected FlagValidationError, got ${String(error)}`);
      assert.equal(error.attr, attr);
      if (detail) assert.match(error.detail, detail);
      return true;
    },
  );
}

const prop = (extra: Record<string, unknown>) => ({ groups: [{ properties: [{ key: 'k', type: 'person', ...extra }] }] });

describe('validateFlagFilters', () => {
  it('fills defaults and keeps what it does not know', () => {
    assert.deepEqual(validateFlagFilters({}), {
      groups: [],
      multivariate: null,
      payloads: {},
      aggregation_group_type_index: null,
    });
    const normalised = validateFlagFilters({ groups: [{ properties: [{ key: 'plan', value: 'pro' }] }], custom: 1 });
    assert.deepEqual(normalised.groups, [
      { properties: [{ key: 'plan', value: 'pro', type: 'person' }], rollout_percentage: null, variant: null },
    ]);
    assert.equal(normalised.custom, 1);
  });

  it('accepts a complete multivariate flag', () => {
    const filters = {
      groups: [
        { properties: [{ key: 'email', value: '@acme', operator: 'icontains', type: 'person' }], rollout_percentage: 25.5, variant: 'test' },
        { properties: [{ key: 'id', value: 4, type: 'cohort' }], rollout_percentage: null },
        { properties: [{ key: '12', value: true, type: 'flag', operator: 'flag_evaluates_to' }] },
        { properties: [{ key: 'v', value: '1.2.*', operator: 'semver_wildcard', type: 'person' }] },
        { properties: [{ key: 'seen', value: '-30d', operator: 'is_date_after', type: 'person' }] },
        { properties: [{ key: 'n', value: 5, operator: 'gt', type: 'person' }] },
        { properties: [{ key: 'x', operator: 'is_set', type: 'person' }] },
      ],
      multivariate: {
        variants: [
          { key: 'a', rollout_percentage: 33.3 },
          { key: 'b', name: 'B', rollout_percentage: 33.3 },
          { key: 'test', rollout_percentage: 33.4 },
        ],
      },
      payloads: { test: '{"n":1}', true: '"x"' },
      holdout: { id: 3, exclusion_percentage: 10 },
    };
    const normalised = validateFlagFilters(filters);
    assert.equal(normalised.multivariate?.variants.length, 3);
    assert.deepEqual(normalised.holdout, { id: 3, exclusion_percentage: 10 });
  });

  it('fills group type indexes on group flags', () => {
    const normalised = validateFlagFilters({
      aggregation_group_type_index: 1,
      groups: [{ properties: [{ key: 'size', value: 'big' }] }],
    });
    assert.deepEqual(normalised.groups[0].properties, [{ key: 'size', value: 'big', type: 'group', group_type_index: 1 }]);
  });

  const CASES: Array<[string, unknown, string, RegExp?]> = [
    ['non-object filters', 'nope', 'filters'],
    ['array filters', [], 'filters'],
    ['groups not a list', { groups: {} }, 'filters__groups'],
    ['condition not an object', { groups: [3] }, 'filters__groups__0'],
    ['rollout above 100', { groups: [{ rollout_percentage: 101 }] }, 'filters__groups__0__rollout_percentage'],
    ['negative rollout', { groups: [{}, { rollout_percentage: -1 }] }, 'filters__groups__1__rollout_percentage'],
    ['rollout as a string', { groups: [{ rollout_percentage: '50' }] }, 'filters__groups__0__rollout_percentage'],
    ['properties not a list', { groups: [{ properties: 'x' }] }, 'filters__groups__0__properties'],
    ['property without key', { groups: [{ properties: [{ value: 1, type: 'person' }] }] }, 'filters__groups__0__properties__0__key'],
    ['empty property key', prop({ key: ' ' }), 'filters__groups__0__properties__0__key'],
    ['unknown operator', prop({ operator: 'between', value: [1, 2] }), 'filters__groups__0__properties__0__operator', /between/],
    ['regex without a string', prop({ operator: 'regex', value: 5 }), 'filters__groups__0__properties__0__value'],
    ['invalid regex', prop({ operator: 'not_regex', value: '(' }), 'filters__groups__0__properties__0__value', /regular expression/],
    ['icontains without a string', prop({ operator: 'icontains', value: ['a'] }), 'filters__groups__0__properties__0__value'],
    ['gt with a list', prop({ operator: 'gt', value: [1] }), 'filters__groups__0__properties__0__value'],
    ['exact with an object', prop({ operator: 'exact', value: { a: 1 } }), 'filters__groups__0__properties__0__value'],
    ['exact with null', prop({ value: null }), 'filters__groups__0__properties__0__value'],
    ['too many values', prop({ value: Array.from({ length: 1001 }, (_, i) => `v${i}`) }), 'filters__groups__0__properties__0__value', /1000/],
    ['bad date', prop({ operator: 'is_date_before', value: 'someday' }), 'filters__groups__0__properties__0__value', /Invalid date/],
    ['bad semver', prop({ operator: 'semver_gt', value: 'one' }), 'filters__groups__0__properties__0__value'],
    ['person flag with group property', prop({ type: 'group', group_type_index: 0, value: 'x' }), 'filters__groups__0__properties__0__type'],
    [
      'group flag with person property',
      { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'k', value: 'x', type: 'person' }] }] },
      'filters__groups__0__properties__0__type',
    ],
    [
      'group property of another group type',
      { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'k', value: 'x', type: 'group', group_type_index: 2 }] }] },
      'filters__groups__0__properties__0__group_type_index',
    ],
    ['flag filter with another operator', prop({ type: 'flag', operator: 'exact', value: true }), 'filters__groups__0__properties__0__operator'],
    ['cohort filter without an id', prop({ type: 'cohort', value: 'abc' }), 'filters__groups__0__properties__0__value'],
    ['aggregation index too high', { aggregation_group_type_index: 5 }, 'filters__aggregation_group_type_index'],
    ['aggregation index not an integer', { aggregation_group_type_index: 1.5 }, 'filters__aggregation_group_type_index'],
    [
      'condition aggregation index out of range',
      { groups: [{ aggregation_group_type_index: -1 }] },
      'filters__groups__0__aggregation_group_type_index',
    ],
    ['multivariate not an object', { multivariate: [] }, 'filters__multivariate'],
    ['no variants', { multivariate: { variants: [] } }, 'filters__multivariate__variants'],
    [
      'variants not summing to 100',
      { multivariate: { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 49 }] } },
      'filters__multivariate__variants',
      /sum to 100/,
    ],
    [
      'duplicate variant keys',
      { multivariate: { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'a', rollout_percentage: 50 }] } },
      'filters__multivariate__variants',
      /Duplicate/,
    ],
    [
      'invalid variant key',
      { multivariate: { variants: [{ key: 'a b', rollout_percentage: 100 }] } },
      'filters__multivariate__variants__0__key',
    ],
    [
      'variant percentage not a number',
      { multivariate: { variants: [{ key: 'a', rollout_percentage: '100' }] } },
      'filters__multivariate__variants__0__rollout_percentage',
    ],
    ['unknown condition variant', { groups: [{ variant: 'test' }] }, 'filters__groups__0__variant'],
    ['condition variant not in the variants', { groups: [{ variant: 'other' }], multivariate: VARIANTS }, 'filters__groups__0__variant'],
    ['payloads not an object', { payloads: 'x' }, 'filters__payloads'],
    ['payload for an unknown key', { payloads: { test: '1' } }, 'filters__payloads', /neither/],
    ['payload that is not JSON', { payloads: { true: '{oops' } }, 'filters__payloads__true', /JSON/],
    ['bad holdout', { holdout: { id: 'x', exclusion_percentage: 10 } }, 'filters__holdout'],
    ['early_exit not a boolean', { early_exit: 'yes' }, 'filters__early_exit'],
  ];

  for (const [name, filters, attr, detail] of CASES) {
    it(`rejects ${name} (${attr})`, () => rejects(filters, attr, detail));
  }

  it('accepts variant payloads and "true" on multivariate flags', () => {
    const normalised = validateFlagFilters({ multivariate: VARIANTS, payloads: { control: '{}', true: 5 } });
    assert.deepEqual(normalised.payloads, { control: '{}', true: 5 });
  });
});

describe('validateFlagKey', () => {
  it('accepts letters, digits, "-" and "_" up to 400 characters', () => {
    assert.equal(validateFlagKey('new-Checkout_2'), 'new-Checkout_2');
    assert.equal(validateFlagKey('k'.repeat(400)), 'k'.repeat(400));
  });

  for (const [key, code] of [
    ['', 'blank'],
    ['has space', 'invalid_key'],
    ['dots.are.bad', 'invalid_key'],
    ['ü', 'invalid_key'],
    ['k'.repeat(401), 'max_length'],
    [42, 'invalid'],
  ] as const) {
    it(`rejects ${JSON.stringify(key).slice(0, 20)} with ${code}`, () => {
      assert.throws(
        () => validateFlagKey(key),
        (error: unknown) => error instanceof FlagValidationError && error.attr === 'key' && error.code === code,
      );
    });
  }
});
