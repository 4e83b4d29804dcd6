import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InconclusiveMatchError, matchFeatureFlagProperty } from '@posthog/core';
import { UncomputableFilterError } from '../../../src/flags/engine/errors.js';
import { matchProperty, PROPERTY_OPERATORS } from '../../../src/flags/engine/operators.js';
import { StepBudget, STEPS_PER_MATCH } from '../../../src/flags/engine/regex.js';
import type { PropertyFilter } from '../../../src/flags/engine/types.js';

const NOW = new Date('2024-06-15T12:00:00Z');

/**
 * `SDK` marks rows where PostHog's service, which /flags follows, answers otherwise than
 * posthog-node's local evaluator (listed in docs/flags.md).
 */
const SDK = 'differs from posthog-node';
/**
 * `BACKTRACKING` marks patterns that take a backtracking engine (V8's, which posthog-node uses)
 * exponential time: the SDK is not asked about them, it would run for minutes.
 */
const BACKTRACKING = 'exponential for a backtracking engine';
type Row = [operator: string | undefined, value: unknown, properties: Record<string, unknown>, expected: boolean, note?: typeof SDK | typeof BACKTRACKING];

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
  ['gt', 10, { k: '12px' }, false, SDK],
  ['gt', 10, { k: ' 11' }, false, SDK],
  ['gte', 25, { k: 'not_a_number' }, false, SDK],
  ['gte', '25', { k: 'not_a_number' }, false, SDK],
  ['gt', 'b', { k: 'c' }, false, SDK],
  ['gt', 'b', { k: 'a' }, false],
  ['lt', 'b', { k: 'a' }, false, SDK],
  ['lt', 10, { k: true }, false],
  ['gt', '1e3', { k: '1001' }, true],
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
  ['semver_eq', '1.2.3', { k: '1.2.3-beta.1' }, false, SDK],
  ['semver_eq', '1.2.3-beta.1', { k: '1.2.3-beta.1' }, true],
  ['semver_lt', '1.0.0', { k: '1.0.0-alpha' }, true, SDK],
  ['semver_lt', '1.0.0-beta', { k: '1.0.0-alpha.2' }, true, SDK],
  ['semver_gt', '1.0.0-alpha.2', { k: '1.0.0-alpha.10' }, true, SDK],
  ['semver_gt', '1.0.0', { k: '1..2.3' }, false, SDK],
  ['semver_gt', '1.0.0', { k: '1.2.3.' }, false, SDK],
  ['semver_eq', '1.2.3', { k: '1.2.3.4' }, false, SDK],
  ['semver_gt', '1.0.0', { k: '.1.2' }, false],
  ['semver_gt', '1.0.0', { k: '' }, false],
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
  ['semver_tilde', '1.2.3', { k: '1.2.5-beta' }, false, SDK],
  ['semver_tilde', '1.2.3-alpha', { k: '1.2.3-beta' }, true],
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
  ['semver_wildcard', '1.*', { k: '1.5.0-rc.1' }, false, SDK],
  // icontains_multi / not_icontains_multi: any of the texts, ASCII case folded
  ['icontains_multi', ['foo', 'BAR'], { k: 'xbarx' }, true],
  ['icontains_multi', ['foo', 'bar'], { k: 'baz' }, false],
  ['icontains_multi', 'foo', { k: 'FOOD' }, true],
  ['icontains_multi', ['foo'], {}, false],
  ['icontains_multi', ['nul'], { k: null }, true, SDK],
  ['not_icontains_multi', ['foo', 'bar'], { k: 'xfoo' }, false],
  ['not_icontains_multi', ['foo', 'bar'], { k: 'baz' }, true],
  ['not_icontains_multi', ['foo'], {}, true],
  // null is the text "null" for the string operators, as in posthog-node and PostHog's service
  ['not_starts_with', 'x', { k: null }, true],
  ['not_starts_with', 'N', { k: null }, false],
  ['not_ends_with', 'L', { k: null }, false],
  ['not_ends_with', 'x', { k: null }, true],
  ['regex', '.+', { k: null }, true],
  ['not_regex', '.+', { k: null }, false],
  // RE2 patterns, in bounded time
  ['regex', '^(a+)+$', { k: 'a'.repeat(30) + '!' }, false, BACKTRACKING],
  ['regex', '^(a+)+$', { k: 'a'.repeat(30) }, true],
  ['regex', '^(a+)+\\1$', { k: 'aa' }, false],
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
      () => matchProperty({ key: 'k', value: 1, operator: 'contains_somehow' }, { k: 1 }, NOW),
      /unknown operator "contains_somehow"/,
    );
  });

  it('does not read inherited properties as present', () => {
    assert.equal(matchProperty({ key: 'toString', value: 'x', operator: 'is_set' }, {}, NOW), false);
  });

  it('fails a regex condition whose match needs too much work, instead of stalling', () => {
    const hostile: PropertyFilter = { key: 'k', value: '(.*a){1000}', operator: 'regex' };
    assert.throws(() => matchProperty(hostile, { k: 'a'.repeat(2000) }, NOW), UncomputableFilterError);
  });

  it('lets one request spend a bounded amount of regex work in all', () => {
    const budget = new StepBudget(STEPS_PER_MATCH * 2);
    const hostile: PropertyFilter = { key: 'k', value: '(.*a){1000}', operator: 'regex' };
    const simple: PropertyFilter = { key: 'k', value: '^a', operator: 'regex' };
    assert.throws(() => matchProperty(hostile, { k: 'a'.repeat(2000) }, NOW, budget), UncomputableFilterError);
    assert.throws(() => matchProperty(hostile, { k: 'a'.repeat(2000) }, NOW, budget), UncomputableFilterError);
    assert.equal(budget.remaining, 0);
    // Once the request's budget is spent, further regex conditions fail too.
    assert.throws(() => matchProperty(simple, { k: 'abc' }, NOW, budget), UncomputableFilterError);
    assert.equal(matchProperty(simple, { k: 'abc' }, NOW), true);
  });

  // Where posthog-node decides a present property locally, the server must say the same,
  // except in the documented cases where PostHog's service answers otherwise.
  it('agrees with posthog-node wherever the SDK decides locally, except the listed cases', () => {
    let compared = 0;
    for (const [operator, value, properties, expected, note] of TABLE) {
      // Dates are skipped: the SDK reads numbers as milliseconds and relative dates from the clock.
      if (properties.k === undefined || (operator ?? '').startsWith('is_date') || note === BACKTRACKING) continue;
      let sdk: boolean;
      try {
        sdk = matchFeatureFlagProperty({ key: 'k', value: value as never, operator }, properties);
      } catch (error) {
        if (error instanceof InconclusiveMatchError) continue;
        throw error;
      }
      compared++;
      const row = `${operator} ${JSON.stringify(value)} ${JSON.stringify(properties)}`;
      if (note === SDK) assert.notEqual(expected, sdk, `listed as a difference, but the SDK agrees on ${row}`);
      else assert.equal(expected, sdk, `SDK disagrees on ${row}`);
    }
    assert.ok(compared > 80, `only ${compared} rows compared`);
  });
});
