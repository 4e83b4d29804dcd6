/**
 * The ClickHouse printer turns a window frame that runs to the partition's end into the same rows
 * from the partition's start in the reversed order, for aggregates that do not depend on the order
 * (ClickHouse recomputes a frame whose start moves at every row, quadratic in the partition; it
 * extends one from the start row by row). That both spellings give the same answers, ties and
 * NULLs included, is checked by the funnel suites on chdb (their exclusions and unordered steps
 * read "the first event from here on" this way).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClickHouseDialect } from '../../../src/hogql/clickhouse/dialect.js';
import { ir } from '../../../src/hogql/index.js';
import type { IrFrame } from '../../../src/hogql/ir.js';

const dialect = new ClickHouseDialect({ database: 'db', node: 'n1', current: true });

/** The printed OVER clause of `fn(us)` per distinct id by time, with `frame`. */
function over(fn: string, frame: IrFrame | null): string {
  const us = ir.column('e', 'events', 'timestamp', 'DateTime');
  const window: ir.IrExpr = {
    kind: 'window',
    call: ir.call(fn, fn === 'lead' ? [us, ir.constant(1, 'Integer')] : [us], 'Integer'),
    partitionBy: [ir.column('e', 'events', 'distinct_id', 'String')],
    orderBy: [{ expr: us, desc: false }],
    frame,
    type: 'Integer',
  };
  const { sql } = dialect.print(ir.select({ columns: [{ name: 'm', expr: window }], from: { kind: 'table', table: 'events', alias: 'e', projectId: 1 } }));
  const clause = /OVER \((.*?)\)+ AS/.exec(sql);
  assert.ok(clause, sql);
  return clause[1];
}

describe('window frames in the ClickHouse printer', () => {
  it('prints "from this row to the end" as "from the start to this row" in the reversed order', () => {
    const clause = over('min', { unit: 'range', start: 0, end: null });
    assert.match(clause, /ORDER BY .* DESC NULLS FIRST RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW$/);
  });

  it('prints "strictly later rows" as "strictly earlier ones" in the reversed order', () => {
    for (const fn of ['min', 'max', 'sum', 'count', 'avg']) {
      assert.match(over(fn, { unit: 'range', start: 1, end: null }), /DESC NULLS FIRST RANGE BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING$/, fn);
    }
    assert.match(over('min', { unit: 'rows', start: 2, end: null }), /DESC NULLS FIRST ROWS BETWEEN UNBOUNDED PRECEDING AND 2 PRECEDING$/);
  });

  it('leaves frames that do not run to the end, and functions that depend on the order, as they are', () => {
    assert.match(over('min', { unit: 'range', start: null, end: 0 }), /ASC NULLS LAST RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW$/);
    assert.match(over('min', { unit: 'rows', start: -3, end: 3 }), /ASC NULLS LAST ROWS BETWEEN 3 PRECEDING AND 3 FOLLOWING$/);
    assert.match(over('argMin', { unit: 'range', start: 0, end: null }), /ASC NULLS LAST RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING$/);
    assert.match(over('lead', null), /ASC NULLS LAST ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING$/);
  });
});
