import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { RE2JS } from 're2js';
import { BoundedRegex, compileFlagRegex, RegexLimitError, StepBudget, STEPS_PER_MATCH } from '../../../src/flags/engine/regex.js';

// Patterns covering every instruction kind: alternation, empty-width assertions, classes,
// case folding, any-character with and without newline, counted repetition, non-BMP text.
const PATTERNS = [
  '^pro', 'pro$', '(?i)^PRO', '^\\d+$', '', '^null$', 'a|b', '\\bfoo\\b', '\\Bo', '(?m)^x$', '^$', 'a*',
  '[^a-c]+z', '(?s)a.b', 'a.b', 'é+', '(?i)straße', '^(a+)+$', 'x{2,3}', '\\pL+\\d', '^.$', '(a|ab)(c|bcd)(d*)',
  '[[:alpha:]]+', '\\Aab\\z', 'a$|^b', '(?i)[k]', 'ab*?c', '[\\x{1F600}-\\x{1F64F}]',
];
const ALPHABET = ['a', 'b', 'c', 'd', 'x', 'z', 'o', 'f', '1', '\n', ' ', 'é', 'K', 'ſ', '😀', 'P', 'R'];

describe('BoundedRegex', () => {
  it('answers as re2js does for every pattern and text tried', () => {
    const compiled = PATTERNS.map((pattern) => ({ pattern, ours: BoundedRegex.compile(pattern), theirs: RE2JS.compile(pattern) }));
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...ALPHABET), { maxLength: 12 }), (chars) => {
        const text = chars.join('');
        for (const { pattern, ours, theirs } of compiled) {
          assert.equal(ours.test(text, new StepBudget()), theirs.test(text), `${pattern} on ${JSON.stringify(text)}`);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('refuses what RE2 refuses: backreferences, lookarounds, huge repetition', () => {
    for (const pattern of ['^(a+)+\\1$', '(?=a)', '(?<!a)b', 'a{1001}', '(']) {
      assert.equal(compileFlagRegex(pattern), null, pattern);
    }
  });

  it('stops a match that needs more work than its limit, and charges the budget', () => {
    const regex = BoundedRegex.compile('(.*a){200}');
    const budget = new StepBudget(10 * STEPS_PER_MATCH);
    assert.throws(() => regex.test('a'.repeat(5000), budget), RegexLimitError);
    assert.equal(budget.remaining, 9 * STEPS_PER_MATCH);
  });

  it('runs the classic catastrophic-backtracking input in a handful of steps', () => {
    const budget = new StepBudget(1_000);
    assert.equal(BoundedRegex.compile('^(a+)+$').test('a'.repeat(30) + '!', budget), false);
    assert.ok(budget.remaining > 0);
  });
});
