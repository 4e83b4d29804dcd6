/**
 * The RE2 pre-check must never accept a pattern DuckDB refuses (that would be a query error
 * instead of a 400). Checked against DuckDB itself, with fixed cases and a fuzzer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import fc from 'fast-check';

import { re2SyntaxError } from '../../../src/hogql/re2.js';

let db: DuckDBInstance;
let conn: DuckDBConnection;

before(async () => {
  db = await DuckDBInstance.create(':memory:');
  conn = await db.connect();
});

after(() => {
  conn?.closeSync();
  db?.closeSync();
});

async function duckdbCompiles(pattern: string): Promise<string | null> {
  try {
    await conn.runAndReadAll('SELECT regexp_matches(CAST($1 AS VARCHAR), CAST($2 AS VARCHAR))', ['sample', pattern]);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

const VALID = [
  '', 'abc', '^https://a\\.com/.*$', 'a|b|', '|a', '()', '(a*)*', '(a|b)+?', 'a*?', 'x{0}', 'a{2,5}', 'a{3,}', 'a{,3}', 'a{',
  '(?i)abc', '(?i-s:a.b)', '(?U)a+', '(?m)^a$', '(?:x)', '(?P<name>x)(?P<other>y)', '[a-z0-9_]+', '[]a]', '[^]a]', '[a-]',
  '[-a]', '[a\\-z]', '[[:alpha:][:^digit:]]', '[\\pL\\d]', '\\pL', '\\PL', '\\p{Greek}', '\\p{^Lu}', '\\d\\D\\s\\S\\w\\W',
  '\\bword\\B', '\\Aabc\\z', '\\Qa.b*c\\E+', '\\x41\\x{1F600}', '\\0\\012\\123', '\\.\\*\\?\\/\\-\\_\\ \\#', '[\\x00-\\x{10FFFF}]',
  'é✓😀', '\u0000', '\\n\\t\\r\\f\\v\\a', '(a{100}){10}', '.{1000}', '[[]', '[a[]', '^*', 'a}', ']',
];

const INVALID: Array<[string, RegExp]> = [
  ['(', /missing \)/],
  [')', /unexpected \)/],
  ['[a', /missing \]/],
  ['[]', /missing \]/],
  ['*a', /missing argument/],
  ['a**', /bad repetition/],
  ['a{2}{3}', /bad repetition/],
  ['{2}', /missing argument/],
  ['(?i)*', /missing argument/],
  ['a{1001}', /invalid repetition size/],
  ['a{2,1}', /invalid repetition size/],
  ['(a{100}){11}', /invalid repetition size/],
  ['\\pL{1000}', /too large/],
  ['\\1', /invalid escape/],
  ['\\8', /invalid escape/],
  ['\\Z', /invalid escape/],
  ['\\k<n>', /invalid escape/],
  ['\\e', /invalid escape/],
  ['\\Ea', /invalid escape/],
  ['\\', /trailing/],
  ['\\x{110000}', /invalid escape/],
  ['\\p{Foo}', /invalid character class/],
  ['[[:foo:]]', /invalid character class/],
  ['[z-a]', /invalid character class range/],
  ['[a-\\d]', /bad character class range/],
  ['(?=a)', /unsupported perl operator/],
  ['(?<=a)', /unsupported perl operator/],
  ['(?<n>a)', /unsupported perl operator/],
  ['(?P=n)', /unsupported perl operator/],
  ['(?P<1x>a)', /invalid named capture/],
  ['(?-)', /unsupported perl operator/],
  ['(?i-)', /unsupported perl operator/],
  ['(?P<n>a)(?P<n>b)', /duplicate/],
  ['a\uD800', /unpaired surrogate/],
  ['x'.repeat(5001), /longer than/],
];

describe('RE2 syntax pre-check', () => {
  for (const pattern of VALID) {
    it(`accepts ${JSON.stringify(pattern)}, which DuckDB compiles`, async () => {
      assert.equal(re2SyntaxError(pattern), null);
      assert.equal(await duckdbCompiles(pattern), null);
    });
  }

  for (const [pattern, reason] of INVALID) {
    it(`refuses ${JSON.stringify(pattern.slice(0, 40))}`, () => {
      assert.match(re2SyntaxError(pattern) ?? '(accepted)', reason);
    });
  }

  it('never accepts a pattern DuckDB refuses (fuzzed)', async () => {
    const pieces = [
      'a', 'b', 'é', '.', '*', '+', '?', '|', '(', ')', '[', ']', '{', '}', '^', '$', '-', ',', ':', '<', '>', '=', '!',
      '0', '1', '2', '9', '1000', '\\', '\\d', '\\W', '\\p', 'L', '{Greek}', '\\x', '4', 'F', '\\Q', '\\E', '(?', 'i',
      's', 'P', '[:', 'alpha', ':]', '^', '{2}', '{1,3}', '{500}', '\\pL', '\\b', 'z', 'Z', 'k',
    ];
    const pattern = fc.array(fc.constantFrom(...pieces), { maxLength: 14 }).map((parts) => parts.join(''));
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(pattern, async (candidate) => {
        if (re2SyntaxError(candidate) !== null) return true;
        accepted++;
        const problem = await duckdbCompiles(candidate);
        assert.equal(problem, null, `accepted ${JSON.stringify(candidate)} but DuckDB says ${problem}`);
        return true;
      }),
      { numRuns: 3000, seed: 20240601 },
    );
    assert.ok(accepted > 300, `fuzzer exercised too few accepted patterns (${accepted})`);
  });
});
