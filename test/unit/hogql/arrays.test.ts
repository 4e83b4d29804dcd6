/**
 * Arrays and lambdas in HogQL: parsing, typing (an array's item type, lambda parameters typed by
 * their array), the SQL both dialects print, and the array functions checked against a JS
 * reference on random arrays in a real in-memory DuckDB.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import fc from 'fast-check';

import { ClickHouseDialect } from '../../../src/hogql/clickhouse/dialect.js';
import { DuckDbDialect } from '../../../src/hogql/duckdb/dialect.js';
import { HogQLError } from '../../../src/hogql/errors.js';
import { formatExpr } from '../../../src/hogql/format.js';
import type { IrExpr, IrSelect } from '../../../src/hogql/ir.js';
import { parseExpression, parseSelect } from '../../../src/hogql/parser.js';
import { StatementCompiler } from '../../../src/hogql/statement.js';

const ctx = { propertyType: () => null, now: new Date('2024-06-01T12:00:00Z') };
const compile = (text: string) => new StatementCompiler(ctx, 1).compile(parseSelect(text)).query as IrSelect;
const firstColumn = (text: string): IrExpr => compile(text).columns[0].expr;

function hogqlError(text: string): HogQLError {
  try {
    compile(text);
  } catch (error) {
    assert.ok(error instanceof HogQLError, `expected HogQLError, got ${String(error)}`);
    return error;
  }
  assert.fail(`expected ${text} to fail`);
}

describe('parsing arrays and lambdas', () => {
  it('reads array literals and both lambda forms', () => {
    assert.equal(formatExpr(parseExpression('[1, 2, [3]]')), '[1, 2, [3]]');
    assert.equal(formatExpr(parseExpression('[]')), '[]');
    assert.equal(formatExpr(parseExpression('arrayMap(x -> x + 1, a)')), 'arrayMap(((x) -> (x + 1)), a)');
    assert.equal(formatExpr(parseExpression('arrayMap((x, y) -> x * y, a, b)')), 'arrayMap(((x, y) -> (x * y)), a, b)');
    // A parenthesised expression is not a lambda.
    assert.equal(formatExpr(parseExpression('(x) - 1')), '(x - 1)');
  });

  it('refuses broken ones at their position', () => {
    assert.throws(() => parseExpression('[1, 2'), HogQLError);
    assert.throws(() => parseExpression('(1) -> x'), HogQLError);
    assert.throws(() => parseExpression('x ->'), HogQLError);
  });
});

describe('typing', () => {
  it('an array literal has its items’ unified type', () => {
    assert.deepEqual(pick(firstColumn('select [1, 2]')), { type: 'Array', item: 'Integer' });
    assert.deepEqual(pick(firstColumn('select [1, 2.5]')), { type: 'Array', item: 'Float' });
    assert.deepEqual(pick(firstColumn("select ['a', NULL]")), { type: 'Array', item: 'String' });
  });

  it('lambda parameters take their array’s item type; results follow the body', () => {
    const mapped = firstColumn("select arrayMap(x -> concat(x, '!'), ['a'])");
    assert.deepEqual(pick(mapped), { type: 'Array', item: 'String' });
    const lambda = (mapped as { args: IrExpr[] }).args[0] as { params: string[]; body: { args: Array<{ kind: string; type: string }> } };
    assert.match(lambda.params[0], /^x\d+$/);
    assert.deepEqual(pick(firstColumn('select arrayMap(x -> x > 1, [1])')), { type: 'Array', item: 'Boolean' });
    assert.deepEqual(pick(firstColumn('select arrayFilter(x -> x > 1, [1.5])')), { type: 'Array', item: 'Float' });
    assert.equal(firstColumn('select arrayJoin([1, 2])').type, 'Integer');
    assert.equal(firstColumn("select argMax('a', 1)").type, 'String');
  });

  it('user names never reach SQL: lambda parameters are generated', () => {
    const { sql } = new DuckDbDialect().print(compile('select arrayMap(`evil"name` -> `evil"name` + 1, [1])'));
    assert.doesNotMatch(sql, /evil/);
  });

  it('bad input is a HogQLError (a 400), never a crash', () => {
    for (const text of [
      'select x -> x',
      'select has(x -> x, [1])',
      'select arrayMap(x -> x, 1)',
      'select arrayMap((a, b) -> a, [1])',
      'select arrayFilter(1, [1])',
      'select indexOf(1, 1)',
      "select toTimeZone(now(), 'Nowhere/Land')",
      "select toTimeZone(now(), lower('UTC'))",
      "select splitByChar('', 'a')",
      'select argMax(1)',
    ]) {
      hogqlError(text);
    }
  });
});

describe('printing', () => {
  const clickhouse = new ClickHouseDialect({ database: 'db', node: 'n1' });

  it('DuckDB binds literals and uses list functions', () => {
    const { sql, params } = new DuckDbDialect().print(compile("select has(['a', 'b'], 'b'), arrayMap(x -> x * 2, [7])"));
    assert.match(sql, /list_contains\(/);
    assert.match(sql, /list_transform\(/);
    assert.doesNotMatch(sql, /'a'|'b'/);
    assert.deepEqual(params.slice().sort(), ['a', 'b', 2, 7].sort());
  });

  it('ClickHouse prints its own names and refuses what 18.16 lacks', () => {
    const { sql } = clickhouse.print(compile("select has([1], 1), indexOf([1], 1), arrayFilter(x -> x > 0, [1]), splitByChar(',', 'a'), arrayDistinct([1])"));
    for (const fn of ['has(', 'indexOf(', 'arrayFilter(', 'splitByChar(', 'arrayDistinct(']) assert.ok(sql.includes(fn), `${fn} in ${sql}`);
    assert.throws(() => clickhouse.print(compile("select JSONExtractArrayRaw('[1]')")), /JSONExtractArrayRaw/);
    assert.match(clickhouse.print(compile('select event from events order by timestamp limit 2 by event limit 10')).sql, /LIMIT 2 BY .*event.* LIMIT 0, 10$/);
    assert.match(new DuckDbDialect().print(compile('select event from events order by timestamp limit 2 by event')).sql, /QUALIFY row_number\(\) OVER \(PARTITION BY .* ORDER BY .*\) <= 2/);
  });
});

describe('array functions against a reference (DuckDB)', () => {
  let connection: DuckDBConnection;
  before(async () => {
    connection = await (await DuckDBInstance.create(':memory:')).connect();
  });
  after(() => connection?.closeSync());

  const run = async (text: string) => {
    const query = compile(text);
    const printed = new DuckDbDialect().print(query);
    const reader = await connection.runAndReadAll(printed.sql, printed.params as DuckDBValue[]);
    const dialect = new DuckDbDialect();
    const row = reader.getRowObjectsJson()[0];
    return query.columns.map((c) => dialect.decode(row[c.name], c.expr.type, 'item' in c.expr ? c.expr.item : undefined));
  };

  it('has, indexOf, arrayFilter, arrayMap, arrayDistinct, arraySort, length agree with JS', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: -5, max: 5 }), { maxLength: 8 }), fc.integer({ min: -5, max: 5 }), async (items, probe) => {
        const list = `[${items.join(', ')}]`;
        const text = `select has(${list}, ${probe}), indexOf(${list}, ${probe}), arrayFilter(x -> x > ${probe}, ${list}), arrayMap(x -> x * ${probe}, ${list}), arrayDistinct(${list}), arraySort(${list}), length(${list}), arrayExists(x -> x = ${probe}, ${list})`;
        const expected = [
          items.includes(probe),
          items.indexOf(probe) + 1,
          items.filter((x) => x > probe),
          items.map((x) => x * probe + 0),
          items.filter((x, i) => items.indexOf(x) === i),
          [...items].sort((a, b) => a - b),
          items.length,
          items.includes(probe),
        ];
        assert.deepEqual(await run(text), expected);
      }),
      { numRuns: 60 },
    );
  });
});

function pick(expr: IrExpr): { type: string; item?: string } {
  return { type: expr.type, item: (expr as { item?: string }).item };
}
