import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Compare, Logical } from '../../../src/hogql/ast.js';
import { HogQLError } from '../../../src/hogql/errors.js';
import { formatExpr } from '../../../src/hogql/format.js';
import { tokenize } from '../../../src/hogql/lexer.js';
import { MAX_DEPTH, MAX_EXPRESSION_LENGTH, parseExpression, parseSelectItem } from '../../../src/hogql/parser.js';

/** Drops source offsets so trees parsed from different texts compare equal. */
function shape(expr: unknown): unknown {
  if (Array.isArray(expr)) return expr.map(shape);
  if (expr && typeof expr === 'object') {
    return Object.fromEntries(
      Object.entries(expr)
        .filter(([key]) => key !== 'start' && key !== 'end')
        .map(([key, value]) => [key, shape(value)]),
    );
  }
  return expr;
}

const canonical = (source: string) => formatExpr(parseExpression(source));

function parseError(source: string): HogQLError {
  try {
    parseExpression(source);
  } catch (error) {
    assert.ok(error instanceof HogQLError, `expected HogQLError, got ${String(error)}`);
    return error;
  }
  assert.fail(`expected ${JSON.stringify(source)} to be rejected`);
}

describe('HogQL lexer', () => {
  it('decodes string escapes like ClickHouse', () => {
    const [token] = tokenize(String.raw`'a\'b\\c\n\t\0\x41\q''d'`);
    assert.equal(token.kind, 'string');
    assert.equal(token.text, "a'b\\c\n\t\0Aq'd");
  });

  it('reads backtick and double-quoted identifiers, never as keywords', () => {
    const tokens = tokenize('`$screen width` "and" `a``b`');
    assert.deepEqual(
      tokens.slice(0, 3).map((t) => [t.kind, t.text, t.quoted]),
      [
        ['identifier', '$screen width', true],
        ['identifier', 'and', true],
        ['identifier', 'a`b', true],
      ],
    );
  });

  it('skips comments', () => {
    assert.equal(canonical("event = 'a' -- trailing comment"), "(event = 'a')");
    assert.equal(canonical("event /* inline */ = 'a'"), "(event = 'a')");
  });

  it('reads numbers with fractions and exponents', () => {
    assert.deepEqual(
      tokenize('1 2.5 1e3 4E-2').filter((t) => t.kind === 'number').map((t) => t.text),
      ['1', '2.5', '1e3', '4E-2'],
    );
  });
});

describe('HogQL parser', () => {
  it('parses literals', () => {
    assert.deepEqual(shape(parseExpression('42')), { kind: 'constant', value: 42, integer: true });
    assert.deepEqual(shape(parseExpression('4.5')), { kind: 'constant', value: 4.5, integer: false });
    assert.deepEqual(shape(parseExpression("'x'")), { kind: 'constant', value: 'x' });
    assert.deepEqual(shape(parseExpression('TRUE')), { kind: 'constant', value: true });
    assert.deepEqual(shape(parseExpression('false')), { kind: 'constant', value: false });
    assert.deepEqual(shape(parseExpression('NULL')), { kind: 'constant', value: null });
  });

  it('parses field chains in every spelling', () => {
    const chain = (source: string) => {
      const expr = parseExpression(source);
      if (expr.kind === 'field') return expr.chain.map((p) => p.name);
      return formatExpr(expr);
    };
    assert.deepEqual(chain('properties.$browser'), ['properties', '$browser']);
    assert.deepEqual(chain('person.properties.email'), ['person', 'properties', 'email']);
    assert.deepEqual(chain('properties.`$screen width`'), ['properties', '$screen width']);
    assert.deepEqual(chain('"properties"."a b"'), ['properties', 'a b']);
    assert.deepEqual(chain('$group_0'), ['$group_0']);
    assert.equal(chain("properties['$browser']"), "properties['$browser']");
  });

  it('parses calls, count(*) and nesting', () => {
    assert.deepEqual(shape(parseExpression('count()')), { kind: 'call', name: 'count', args: [] });
    assert.deepEqual(shape(parseExpression('count(*)')), { kind: 'call', name: 'count', args: [{ kind: 'star' }] });
    assert.equal(canonical('round(avg(toFloat(properties.price)), 2)'), 'round(avg(toFloat(properties.price)), 2)');
  });

  it('follows ClickHouse precedence', () => {
    const cases: Array<[string, string]> = [
      ['1 + 2 * 3', '(1 + (2 * 3))'],
      ['(1 + 2) * 3', '((1 + 2) * 3)'],
      ['1 - 2 - 3', '((1 - 2) - 3)'],
      ['8 / 4 % 3', '((8 / 4) % 3)'],
      ['-2 * 3', '(-(2) * 3)'],
      ['- - 2', '-(-(2))'],
      ['a = 1 OR b = 2 AND c = 3', '((a = 1) OR ((b = 2) AND (c = 3)))'],
      ['NOT a = 1 AND b', '(NOT ((a = 1)) AND b)'],
      ['NOT NOT a', 'NOT (NOT (a))'],
      ['a + 1 > b * 2', '((a + 1) > (b * 2))'],
      ['a = 1 IS NULL', '((a = 1) IS NULL)'],
      ['x IS NOT NULL AND y IS NULL', '((x IS NOT NULL) AND (y IS NULL))'],
      ["event NOT IN ('a', 'b') OR x", "((event NOT IN ('a', 'b')) OR x)"],
      ["x NOT ILIKE '%a%'", "(x NOT ILIKE '%a%')"],
      ["x LIKE 'a' || 1", ''],
      ['a == 1 AND b <> 2 AND c != 3', '((a = 1) AND (b != 2) AND (c != 3))'],
      ['a <= 1 OR a >= 2 OR a < 0 OR a > 9', '((a <= 1) OR (a >= 2) OR (a < 0) OR (a > 9))'],
    ];
    for (const [source, expected] of cases) {
      if (expected === '') {
        assert.throws(() => parseExpression(source), HogQLError, source);
        continue;
      }
      assert.equal(canonical(source), expected, source);
    }
  });

  it('flattens AND / OR chains', () => {
    const expr = parseExpression('a AND b AND c AND d');
    assert.equal(expr.kind, 'and');
    assert.equal((expr as Logical).exprs.length, 4);
  });

  it('round-trips through its canonical text', () => {
    const sources = [
      "properties.$browser = 'Chrome' AND person.properties.email ILIKE '%@x.com'",
      "properties.`$screen width` > 1000 OR properties['a\\'b'] IS NULL",
      "event IN ('$pageview', 'it''s', 'back\\\\slash') AND NOT (distinct_id = 'x')",
      "toStartOfWeek(timestamp, 1) >= toDate('2024-01-01') AND uniq(distinct_id) > 0",
      "concat(lower(event), '-', toString(1.5), '\\n\\t\\0') NOT LIKE 'a\\_b%'",
      '-(1 + 2) * 3 / 4 % 5 - -6',
      'if(count() > 10, 1e3, 0.25) IS NOT NULL',
      "`and`.`or` = `x y`.\"z\"",
    ];
    for (const source of sources) {
      const first = parseExpression(source);
      const text = formatExpr(first);
      const second = parseExpression(text);
      assert.deepEqual(shape(second), shape(first), source);
      assert.equal(formatExpr(second), text);
    }
  });

  it('records source offsets on every node', () => {
    const source = "event = 'a' AND count(properties.x) > 1";
    const expr = parseExpression(source) as Logical;
    assert.deepEqual([expr.start, expr.end], [0, source.length]);
    const [left, right] = expr.exprs;
    assert.equal(source.slice(left.start, left.end), "event = 'a'");
    assert.equal(source.slice(right.start, right.end), 'count(properties.x) > 1');
    const call = (right as Compare).left;
    assert.equal(source.slice(call.start, call.end), 'count(properties.x)');
  });

  it('parses AS aliases only at the top of a select item', () => {
    assert.equal(parseSelectItem('count() AS total').alias, 'total');
    assert.equal(parseSelectItem('count() as `my total`').alias, 'my total');
    assert.equal(parseSelectItem('count()').alias, null);
    assert.throws(() => parseExpression('count() AS total'), /Unexpected token 'AS' at position 8/);
    assert.throws(() => parseSelectItem('count() AS'), /Unexpected end of expression at position 10/);
    assert.throws(() => parseSelectItem('(x AS y) + 1'), /Unexpected token 'AS' at position 3/);
  });
});

describe('HogQL syntax errors', () => {
  const cases: Array<[string, string, number]> = [
    ["count(event))", "Unexpected token ')' at position 12", 12],
    ['1 +', 'Unexpected end of expression at position 3', 3],
    ["event = 'abc", 'Unterminated string starting at position 8', 8],
    ['properties.`abc', 'Unterminated identifier starting at position 11', 11],
    ['event = 1; DROP TABLE events', "Unexpected character ';' at position 9", 9],
    ['a /* open', 'Unterminated comment at position 2', 2],
    ['1abc', 'Invalid number "1a" at position 0', 0],
    ['event IN 1', "Unexpected token '1' at position 9", 9],
    ['f(1,)', "Unexpected token ')' at position 4", 4],
    ['x IS 1', "Unexpected token '1' at position 5", 5],
    ['a = NOT b', "Unexpected token 'NOT' at position 4", 4],
    ['count(1).x', "Unexpected token '.' at position 8", 8],
    ['', 'Empty expression at position 0', 0],
    ['   -- only a comment', 'Empty expression at position 0', 0],
    ['event = @', "Unexpected character '@' at position 8", 8],
    ['event = \u0000', 'Unexpected character U+0000 at position 8', 8],
  ];
  for (const [source, message, position] of cases) {
    it(`rejects ${JSON.stringify(source)}`, () => {
      const error = parseError(source);
      assert.equal(error.message, message);
      assert.equal(error.position, position);
    });
  }
});

describe('HogQL input limits', () => {
  it('refuses overlong expressions', () => {
    const error = parseError(`event = '${'x'.repeat(MAX_EXPRESSION_LENGTH)}'`);
    assert.match(error.message, /too long/);
  });

  it('refuses deep nesting without overflowing the stack', () => {
    for (const source of [
      `${'('.repeat(4000)}1${')'.repeat(4000)}`,
      `${'NOT '.repeat(2400)}x`,
      `${'- '.repeat(4000)}1`,
      `${'lower('.repeat(1400)}x${')'.repeat(1400)}`,
      Array(2400).fill('1').join(' + '),
      `properties${"['a']".repeat(1900)}`,
    ]) {
      assert.ok(source.length <= MAX_EXPRESSION_LENGTH);
      assert.match(parseError(source).message, /nested too deeply/);
    }
  });

  it('accepts nesting up to the limit', () => {
    const depth = MAX_DEPTH - 2;
    assert.doesNotThrow(() => parseExpression(`${'('.repeat(depth)}1${')'.repeat(depth)}`));
    assert.doesNotThrow(() => parseExpression(Array(500).fill('x = 1').join(' OR ')));
  });
});
