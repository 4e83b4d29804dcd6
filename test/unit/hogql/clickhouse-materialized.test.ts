/**
 * The ClickHouse printer reads a hot property's own column (store/clickhouse/materialized.ts) for
 * exactly `properties.<key>` on events, and the JSON otherwise; the write path's values follow the
 * JSON read's meaning (a string as is, other values as JSON text, NULL when missing or null).
 * The answers themselves are checked on the cluster (test/cluster/clickhouse-materialized.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ClickHouseDialect } from '../../../src/hogql/clickhouse/dialect.js';
import { EventsScope, compileFilters } from '../../../src/hogql/compile.js';
import type { IrSelect } from '../../../src/hogql/ir.js';
import { parseSelect } from '../../../src/hogql/parser.js';
import { StatementCompiler } from '../../../src/hogql/statement.js';
import { HOT_KEY_FILTER_COLUMNS, HOT_KEY_FILTERS, HOT_KEYS_STATEMENT, JSON_PATH_STATEMENTS } from '../../helpers/materialized-cases.js';
import { MATERIALIZED_PROPERTIES, materializedColumns, materializedValue, materializedValues } from '../../../src/store/clickhouse/materialized.js';

const ctx = { propertyType: () => null, now: new Date('2026-06-01T12:00:00Z') };
const compile = (text: string) => new StatementCompiler(ctx, 1).compile(parseSelect(text)).query as IrSelect;
const withColumns = new ClickHouseDialect({ database: 'db', node: 'n1', materialized: materializedColumns() });
const without = new ClickHouseDialect({ database: 'db', node: 'n1' });

describe('materialized properties in the ClickHouse printer', () => {
  it('reads the column for a top-level hot key of events, in select, where and group by', () => {
    const { sql } = withColumns.print(compile(HOT_KEYS_STATEMENT));
    assert.match(sql, /`mat_\$browser`/);
    assert.match(sql, /`mat_\$os` = 'Mac OS X'/);
    assert.match(sql, /`mat_\$session_id`/);
    assert.doesNotMatch(sql, /visitParam/);
    assert.match(sql, /project_id = toInt64\(1\)/);
  });

  it('reads the column for property filters of the events API and insights', () => {
    const where = compileFilters(HOT_KEY_FILTERS, new EventsScope(ctx, 1));
    assert.ok(where);
    const { sql } = withColumns.print({ ...compile('select count() from events'), where });
    for (const column of HOT_KEY_FILTER_COLUMNS) assert.ok(sql.includes(`\`${column}\``), `${column} in ${sql}`);
    assert.doesNotMatch(sql, /visitParam/);
  });

  it('keeps the JSON for nested paths, other keys, person properties and JSON functions, and without the columns', () => {
    for (const text of JSON_PATH_STATEMENTS) {
      const { sql } = withColumns.print(compile(text));
      assert.doesNotMatch(sql, /mat_/, text);
      assert.match(sql, /visitParam/, text);
    }
    assert.doesNotMatch(without.print(compile('select properties.$browser from events')).sql, /mat_/);
  });

  it('takes the values as the JSON read means them', () => {
    const json = fc.oneof(fc.string(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }), fc.object({ maxDepth: 1 }));
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...MATERIALIZED_PROPERTIES, 'other'), json), (properties) => {
        const text = JSON.stringify(properties);
        const row = materializedValues(text);
        for (const key of MATERIALIZED_PROPERTIES) {
          const parsed = JSON.parse(text)[key];
          const expected = !(key in properties) || parsed === null ? null : typeof parsed === 'string' ? parsed : JSON.stringify(parsed);
          assert.equal(row[`mat_${key}`], expected);
        }
      }),
    );
    assert.equal(materializedValue({ $browser: '' }, '$browser'), '');
    assert.equal(materializedValue({ $browser: 1.5 }, '$browser'), '1.5');
    assert.equal(materializedValue(['$browser'], '$browser'), null);
    assert.equal(materializedValue({ __proto__: { $browser: 'inherited' } }, '$browser'), null);
  });
});
