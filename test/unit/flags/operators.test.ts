import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InconclusiveMatchError, matchFeatureFlagProperty } from '@posthog/core';
import { UncomputableFilterError } from '../../../src/flags/engine/errors.js';
import { matchProperty, PROPERTY_OPERATORS } from '../../../src/flags/engine/operators.js';
import type { PropertyFilter } from '../../../src/flags/engine/types.js';

const NOW = new Date('2024-06-15T12:00:00Z');

type Row = [operator: string | undefined, value: unknown, properties: Record<string, unknown>, expected: boolean];

// Every row filters on the key `k`; `{}` is the absent-property case.
const TABLE: Row[] = [
  // exact
  [undefined, 'pro', { k: 'pro' }, true],
  ['exact', 'pro', { k: 'PRO' }, true],
  ['exact', 'pro', { k: 'free' }, false],
  ['exact', 'pro', {}, false],
  ['exact', 'pro', { k: null }, false],
  ['exact', 'null', { k: null }, true],
  ['exact', ['pro', 'Team'], { k: 'team' }, true],
  ['exact', ['pro', 'team'], { k: 'free' }, false],
  ['exact', [], { k: 'us' }, false],
  ['exact', '5', { k: 5 }, true],
  ['exact', 5, { k: '5' }, true],
  ['exact', 5, { k: 5.0 }, true],
  ['exact', '5', { k: '5.0' }, false],
  ['exact', 1.5, { k: '1.5' }, true],
  ['exact', [1, 2], { k: '2' }, true],
  ['exact', true, { k: 'TRUE' }, true],
  ['exact', 'false', { k: false }, true],
  ['exact', ['true'], { k: true }, true],
  ['exact', true, { k: 'yes' }, false],
  ['exact', true, { k: 1 }, false],
  ['exact', '["a","b"]', { k: ['a', 'b'] }, true],
  ['exact', '{"a":1,"b":2}', { k: { b: 2, a: 1 } }, true],
  // is_not
  ['is_not', 'pro', { k: 'pro' }, false],
  ['is_not', 'pro', { k: 'Pro' }, false],
  ['is_not', 'pro', { k: 'free' }, true],
  ['is_not', 'pro', {}, true],
  ['is_not', 'pro', { k: null }, true],
  ['is_not', ['a', 'b'], { k: 'A' }, false],
  ['is_not', ['a', 'b'], { k: 'c' }, true],
  ['is_not', true, { k: 'false' }, true],
  ['is_not', 5, { k: '5' }, false],
  // icontains / not_icontains
  ['icontains', 'ValUe', { k: 'xxvaluexx' }, true],
  ['icontains', 'value', { k: 'Alakazam' }, false],
  ['icontains', 'value', {}, false],
  ['icontains', '3', { k: 323 }, true],
  ['icontains', 'nul', { k: null }, true],
  ['icontains', 'É', { k: 'é' }, false],
  ['not_icontains', 'VAL', { k: 'value' }, false],
  ['not_icontains', 'val', { k: 'other' }, true],
  ['not_icontains', 'val', {}, true],
  // starts_with / ends_with and negations
  ['starts_with', 'Val', { k: 'value' }, true],
  ['starts_with', 'val', { k: 'xval' }, false],
  ['starts_with', 'val', {}, false],
  ['not_starts_with', 'val', { k: 'Value' }, false],
  ['not_starts_with', 'val', { k: 'xval' }, true],
  ['not_starts_with', 'val', {}, true],
  ['ends_with', 'UE', { k: 'value' }, true],
  ['ends_with', 'ue', { k: 'values' }, false],
  ['ends_with', 'ue', {}, false],
  ['not_ends_with', 'ue', { k: 'value' }, false],
  ['not_ends_with', 'ue', {}, true],
  // regex / not_regex
  ['regex', '^pro', { k: 'pro-plan' }, true],
  ['regex', 'pro$', { k: 'prox' }, false],
  ['regex', '^PRO', { k: 'pro' }, false],
  ['regex', '(?i)^PRO', { k: 'pro' }, true],
  ['regex', '^\\d+$', { k: 123 }, true],
  ['regex', '', { k: 'anything' }, true],
  ['regex', '^null$', { k: null }, true],
  ['regex', '^pro', {}, false],
  ['regex', '(', { k: '(' }, false],
  ['not_regex', '(', { k: '(' }, false],
  ['not_regex', '^a', { k: 'b' }, true],
  ['not_regex', '^a', { k: 'abc' }, false],
  ['not_regex', '^a', {}, true],
  // gt / gte / lt / lte
  ['gt', 10, { k: 11 }, true],
  ['gt', 10, { k: '11' }, true],
  ['gt', '10', { k: 10 }, false],
  ['gte', '10', { k: 10 }, true],
  ['gt', 2, { k: 2.0 }, false],
  ['gte', 2, { k: 2.0 }, true],
  ['gt', 2, { k: 2.5 }, true],
  ['lt', '10', { k: 9.5 }, true],
  ['lt', 10, { k: '100' }, false],
  ['lte', '1.5', { k: 1.5 }, true],
  ['lte', 1.5, { k: '1.6' }, false],
  ['gt', 10, { k: '12px' }, true],
  ['gt', 'b', { k: 'c' }, true],
  ['gt', 'b', { k: 'a' }, false],
  ['lt', 'b', { k: 'a' }, true],
  ['gt', 10, { k: null }, false],
  ['lt', 10, { k: null }, false],
  ['gt', 10, {}, false],
  ['lte', 10, {}, false],
  // is_set / is_not_set
  ['is_set', 'is_set', { k: 'x' }, true],
  ['is_set', 'is_set', { k: null }, true],
  ['is_set', 'is_set', { k: '' }, true],
  ['is_set', 'is_set', {}, false],
  ['is_set', 'is_set', { k: undefined }, false],
  ['is_not_set', 'is_not_set', {}, true],
  ['is_not_set', 'is_not_set', { k: null }, false],
  ['is_not_set', 'is_not_set', { k: 'x' }, false],
  // dates (NOW = 2024-06-15T12:00:00Z)
  ['is_date_before', '2024-06-01', { k: '2024-05-31' }, true],
  ['is_date_before', '2024-06-01', { k: '2024-06-02T00:00:00Z' }, false],
  ['is_date_before', '2024-06-01', {}, false],
  ['is_date_before', '2024-06-01', { k: null }, false],
  ['is_date_after', '-7d', { k: '2024-06-10T00:00:00Z' }, true],
  ['is_date_after', '-7d', { k: '2024-06-01' }, false],
  ['is_date_after', '-24h', { k: '2024-06-15T00:00:00Z' }, true],
  ['is_date_after', '-24h', { k: '2024-06-14T11:00:00Z' }, false],
  ['is_date_before', '-1m', { k: '2024-05-14' }, true],
  ['is_date_before', '-1m', { k: '2024-05-16' }, false],
  ['is_date_before', '-2w', { k: '2024-05-31' }, true],
  ['is_date_after', '-1y', { k: '2023-06-16' }, true],
  ['is_date_after', '-7d', { k: 1718000000 }, true],
  ['is_date_after', '-7d', { k: '1718000000' }, true],
  ['is_date_after', '-1d', { k: 1718000000 }, false],
  ['is_date_exact', '2024-06-01T00:00:00Z', { k: '2024-06-01' }, true],
  ['is_date_exact', '2024-06-01T00:00:00Z', { k: 1717200000 }, true],
  ['is_date_exact', '2024-06-01T10:00:00Z', { k: '2024-06-01 10:00:00' }, true],
  ['is_date_exact', '2024-06-01', { k: '2024-06-02' }, false],
  ['is_date_before', '2024-06-01', { k: 'not a date' }, false],
  ['is_date_before', 'not a date', { k: '2024-05-01' }, false],
  ['is_date_before', '2024-06-01', { k: true }, false],
  // semver
  ['semver_eq', '1.2.3', { k: '1.2.3' }, true],
  ['semver_eq', '1.2.3', { k: 'v1.2.3' }, true],
  ['semver_eq', '1.2.3', { k: '1.2.3-beta.1' }, true],
  ['semver_eq', '1.2.0', { k: '1.2' }, true],
  ['semver_eq', '3.8.0', { k: '3.08' }, true],
  ['semver_eq', '1.2.3', { k: 'abc' }, false],
  ['semver_eq', '1.2.3', {}, false],
  ['semver_eq', '1.2.3', { k: null }, false],
  ['semver_neq', '1.2.3', { k: '1.2.4' }, true],
  ['semver_neq', '1.2.3', { k: '1.2.3' }, false],
  ['semver_neq', '1.2.3', { k: 'abc' }, false],
  ['semver_neq', '1.2.3', {}, false],
  ['semver_gt', '1.2.3', { k: '1.10.0' }, true],
  ['semver_gt', '1.2.3', { k: '1.2.3' }, false],
  ['semver_gte', '1.2.3', { k: '1.2.3' }, true],
  ['semver_lt', '1.2.3', { k: '1.2.2' }, true],
  ['semver_lt', '1.2.3', { k: '1.2.3' }, false],
  ['semver_lte', '1.2.3', { k: '1.2.3' }, true],
  ['semver_lte', '1.2.3', { k: '2.0.0' }, false],
  ['semver_tilde', '1.2.3', { k: '1.2.9' }, true],
  ['semver_tilde', '1.2.3', { k: '1.3.0' }, false],
  ['semver_tilde', '1.2.3', { k: '1.2.2' }, false],
  ['semver_caret', '1.2.3', { k: '1.9.9' }, true],
  ['semver_caret', '1.2.3', { k: '2.0.0' }, false],
  ['semver_caret', '0.2.3', { k: '0.2.9' }, true],
  ['semver_caret', '0.2.3', { k: '0.3.0' }, false],
  ['semver_caret', '0.0.3', { k: '0.0.3' }, true],
  ['semver_caret', '0.0.3', { k: '0.0.4' }, false],
  ['semver_wildcard', '1.*', { k: '1.99.0' }, true],
  ['semver_wildcard', '1.*', { k: '2.0.0' }, false],
  ['semver_wildcard', '1.2.*', { k: '1.2.7' }, true],
  ['semver_wildcard', '1.2.*', { k: '1.3.0' }, false],
  ['semver_wildcard', '1.*.*', { k: '1.5.0' }, true],
  ['semver_wildcard', '1.*', {}, false],
];

function filterFor(operator: string | undefined, value: unknown): PropertyFilter {
  return { key: 'k', value, type: 'person', ...(operator === undefined ? {} : { operator }) };
}

describe('matchProperty', () => {
  for (const [operator, value, properties, expected] of TABLE) {
    it(`${operator ?? '(default)'} ${JSON.stringify(value)} on ${JSON.stringify(properties)} → ${expected}`, () => {
      assert.equal(matchProperty(filterFor(operator, value), properties, NOW), expected);
    });
  }

  it('covers every operator it knows', () => {
    const tested = new Set(TABLE.map(([operator]) => operator ?? 'exact'));
    for (const operator of PROPERTY_OPERATORS) assert.ok(tested.has(operator), `${operator} is untested`);
  });

  it('treats a null operator as exact', () => {
    assert.equal(matchProperty({ key: 'k', value: 'a', operator: null }, { k: 'A' }, NOW), true);
  });

  it('reports cohort filters, flag filters and unknown operators instead of guessing', () => {
    assert.throws(() => matchProperty({ key: 'id', value: 3, type: 'cohort' }, {}, NOW), UncomputableFilterError);
    assert.throws(
      () => matchProperty({ key: 'other', value: true, type: 'flag', operator: 'flag_evaluates_to' }, {}, NOW),
      UncomputableFilterError,
    );
    assert.throws(
      () => matchProperty({ key: 'k', value: 1, operator: 'icontains_multi' }, { k: 1 }, NOW),
      /unknown operator "icontains_multi"/,
    );
  });

  it('does not read inherited properties as present', () => {
    assert.equal(matchProperty({ key: 'toString', value: 'x', operator: 'is_set' }, {}, NOW), false);
  });

  // Where posthog-node decides a present property locally, the server must say the same.
  it('agrees with posthog-node wherever the SDK decides locally', () => {
    let compared = 0;
    for (const [operator, value, properties, expected] of TABLE) {
      // Dates are skipped: the SDK reads numbers as milliseconds and relative dates from the clock.
      if (properties.k === undefined || (operator ?? '').startsWith('is_date')) continue;
      let sdk: boolean;
      try {
        sdk = matchFeatureFlagProperty({ key: 'k', value: value as never, operator }, properties);
      } catch (error) {
        if (error instanceof InconclusiveMatchError) continue;
        throw error;
      }
      compared++;
      assert.equal(expected, sdk, `SDK disagrees on ${operator} ${JSON.stringify(value)} ${JSON.stringify(properties)}`);
    }
    assert.ok(compared > 80, `only ${compared} rows compared`);
  });
});
