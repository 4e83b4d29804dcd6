import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { evaluateFormula, FormulaError, maxSeriesIndex, parseFormula } from '../../../src/insights/trends/formula.js';

const run = (text: string, values: number[]) => evaluateFormula(parseFormula(text), values);

describe('trends formulas', () => {
  test('precedence, parentheses, unary minus, decimals and lower-case letters', () => {
    assert.equal(run('A/B*100', [1, 4]), 25);
    assert.equal(run('A + B * C', [1, 2, 3]), 7);
    assert.equal(run('(A + B) * C', [1, 2, 3]), 9);
    assert.equal(run('-A + -(B - 0.5)', [1, 2]), -2.5);
    assert.equal(run('a - b - c', [10, 3, 2]), 5);
    assert.equal(run('.5 * A', [4]), 2);
  });

  test('division by zero and other non-finite results are 0', () => {
    assert.equal(run('A / B', [1, 0]), 0);
    assert.equal(run('B / B', [1, 0]), 0);
  });

  test('anything but letters, numbers, operators and parentheses is refused', () => {
    for (const bad of ['', 'A +', '(A', 'A)', 'A B', 'Math.max(A)', 'A; B', 'A ** B', '1e3', 'process', 'A % B']) {
      assert.throws(() => parseFormula(bad), FormulaError, bad);
    }
    assert.throws(() => parseFormula('('.repeat(60) + 'A' + ')'.repeat(60)), FormulaError);
  });

  test('the highest series letter is known before running', () => {
    assert.equal(maxSeriesIndex(parseFormula('A + C * 2')), 2);
    assert.equal(maxSeriesIndex(parseFormula('2 * 3')), -1);
  });

  test('matches the arithmetic it spells (random formulas, built with their value)', () => {
    type Built = { text: string; value: (v: number[]) => number };
    const ops: Record<string, (x: number, y: number) => number> = { '+': (x, y) => x + y, '-': (x, y) => x - y, '*': (x, y) => x * y };
    const leaf = fc.constantFrom<Built>(
      { text: 'A', value: (v) => v[0] },
      { text: 'B', value: (v) => v[1] },
      { text: 'c', value: (v) => v[2] },
      { text: '2', value: () => 2 },
      { text: '0.5', value: () => 0.5 },
    );
    const expr = fc.letrec<{ e: Built }>((tie) => ({
      e: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        leaf,
        fc.tuple(tie('e'), fc.constantFrom('+', '-', '*'), tie('e')).map(([l, o, r]): Built => ({ text: `(${l.text} ${o} ${r.text})`, value: (v) => ops[o](l.value(v), r.value(v)) })),
        tie('e').map((x): Built => ({ text: `-${x.text}`, value: (v) => -x.value(v) })),
      ),
    })).e;
    fc.assert(
      fc.property(expr, fc.array(fc.integer({ min: -50, max: 50 }), { minLength: 3, maxLength: 3 }), (built, values) => {
        const expected = built.value(values);
        assert.equal(run(built.text, values), Number.isFinite(expected) ? expected : 0);
      }),
    );
  });
});
