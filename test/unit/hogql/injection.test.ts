/**
 * Hostile input: every attempt either compiles to SQL that contains none of the user's text
 * and returns the right rows, or is refused with a HogQLError — never a DuckDB error.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { inMemoryEventStore, insertEvents, storeDialect } from '../../helpers/duckdb-schema.js';
import fc from 'fast-check';

import { EventsScope, compileFilters, compileSelect, compileWhere } from '../../../src/hogql/compile.js';
import type { CompileContext } from '../../../src/hogql/context.js';
import { HogQLError } from '../../../src/hogql/errors.js';
import { lazyJoins } from '../../../src/hogql/fields.js';
import * as ir from '../../../src/hogql/ir.js';

const HOSTILE = [
  "'; DROP TABLE events; --",
  "x') OR 1=1 --",
  "a'b",
  'a"b',
  'a\\b',
  'a\\\\b',
  "a''b",
  '/* comment */',
  '-- comment',
  'semi;colon',
  '$."x"',
  '$.x[0]',
  '~0~1/x',
  'é✓😀 ünïcødé',
  'nul\u0000byte',
  'line\nbreak\ttab',
  '%_wild_%',
  "\\'; SELECT 1; --",
  '`backtick`',
  "')) OR ((1=1",
  "json_extract_string(e.properties, '$')",
];

let db: DuckDBInstance;
let conn: DuckDBConnection;

before(async () => {
  ({ db, conn } = await inMemoryEventStore());
  // Event i carries hostile string i both as a property key (value 'hit') and as the value of `v`.
  await insertEvents(conn, async () => {
    for (const [i, text] of HOSTILE.entries()) {
      await conn.run(
        `INSERT INTO pending_events VALUES (1, uuid(), $1, $2, NULL, TIMESTAMP '2024-01-01 00:00:00' + INTERVAL (CAST($3 AS INTEGER)) HOUR,
          TIMESTAMP '2024-01-01 00:00:00', $4, '', '', '', '', '', '', $3)`,
        [text, `user-${i}`, i, JSON.stringify({ [text]: 'hit', v: text })],
      );
    }
  });
});

after(() => {
  conn?.closeSync();
  db?.closeSync();
});

const context = (): CompileContext => ({ propertyType: () => null, now: new Date('2024-06-01T00:00:00Z') });

interface Attempt {
  select?: unknown[];
  where?: unknown[];
  properties?: unknown;
}

/** Compiles and runs a query; returns the flush_seq of matching rows, or 'rejected' for a HogQLError. */
async function attempt({ select = ['distinct_id'], where = [], properties }: Attempt): Promise<{ rows: unknown[][]; sql: string } | 'rejected'> {
  let sql: string;
  let values: unknown[];
  try {
    const scope = new EventsScope(context(), 1);
    const columns = compileSelect(select, scope);
    const conditions = compileWhere(where, scope);
    const filters = compileFilters(properties, scope);
    const query = ir.select({
      columns: columns.exprs.map((expr, i) => ({ expr, name: `c${i}` })),
      from: { kind: 'table', table: 'events', alias: 'e', projectId: 1 },
      joins: lazyJoins(scope.binding),
      where: ir.allOf([conditions.where, filters]),
      groupBy: columns.groupBy,
      having: conditions.having,
    });
    ({ sql, params: values } = storeDialect().print(query));
  } catch (error) {
    if (error instanceof HogQLError) return 'rejected';
    throw error;
  }
  // Any DuckDB error here fails the test: compiled SQL must always run.
  const reader = await conn.runAndReadAll(sql, values as never[]);
  return { rows: reader.getRowsJson() as unknown[][], sql };
}

async function matches(input: Attempt, userText: string): Promise<number[]> {
  const result = await attempt(input);
  assert.notEqual(result, 'rejected', `${JSON.stringify(input)} was rejected`);
  if (result === 'rejected') return [];
  assert.ok(!result.sql.includes(userText), `SQL contains user text ${JSON.stringify(userText)}: ${result.sql}`);
  return result.rows.map(([id]) => Number(String(id).replace('user-', ''))).sort((a, b) => a - b);
}

const hogqlString = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const hogqlIdentifier = (text: string) => `\`${text.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
const re2Literal = (text: string) => text.replace(/[\\.+*?()|[\]{}^$\-#&~!"%',:;<=>@`/]/g, (c) => `\\${c}`);

async function tableIntact(): Promise<void> {
  const reader = await conn.runAndReadAll('SELECT count(*) FROM events');
  assert.equal(Number(reader.getRows()[0][0]), HOSTILE.length);
}

describe('injection: hostile keys and values are data', () => {
  for (const [i, text] of HOSTILE.entries()) {
    it(`handles ${JSON.stringify(text)}`, async () => {
      const key = hogqlIdentifier(text);
      assert.deepEqual(await matches({ where: [`properties.${key} = 'hit'`] }, text), [i]);
      assert.deepEqual(await matches({ where: [`properties[${hogqlString(text)}] = 'hit'`] }, text), [i]);
      assert.deepEqual(await matches({ where: [`properties.v = ${hogqlString(text)}`] }, text), [i]);
      assert.deepEqual(await matches({ where: [`event = ${hogqlString(text)}`] }, text), [i]);
      assert.deepEqual(await matches({ where: [`properties.v LIKE ${hogqlString(likeLiteral(text))}`] }, text), [i]);
      assert.deepEqual(await matches({ where: [`properties.v IN (${hogqlString(text)}, 'other')`] }, text), [i]);
      assert.deepEqual(await matches({ where: [`concat(properties.v, '') = ${hogqlString(text)}`] }, text), [i]);
      assert.deepEqual(await matches({ properties: [{ key: text, value: 'hit' }] }, text), [i]);
      assert.deepEqual(await matches({ properties: [{ key: 'v', value: text, operator: 'exact' }] }, text), [i]);
      assert.deepEqual(await matches({ properties: [{ key: 'v', value: re2Literal(text), operator: 'regex' }] }, text), [i]);
      const containing = HOSTILE.flatMap((other, j) => (other.toLowerCase().includes(text.toLowerCase()) ? [j] : []));
      assert.deepEqual(await matches({ properties: [{ key: 'v', value: text, operator: 'icontains' }] }, text), containing);
      assert.deepEqual(await matches({ properties: [{ key: text, operator: 'is_set' }] }, text), [i]);
      assert.deepEqual(await matches({ properties: [{ type: 'hogql', key: `properties.${key} = 'hit'` }] }, text), [i]);

      const selected = await attempt({ select: ['distinct_id', `properties.${key} AS ${key}`], where: [`properties.v = ${hogqlString(text)}`] });
      assert.notEqual(selected, 'rejected');
      if (selected !== 'rejected') {
        assert.deepEqual(selected.rows, [[`user-${i}`, 'hit']]);
        assert.ok(!selected.sql.includes(text));
      }
      const columns = compileSelect([`properties.v AS ${key}`], new EventsScope(context(), 1)).columns;
      assert.deepEqual(columns, [text]);
      await tableIntact();
    });
  }
});

describe('injection: hostile expressions', () => {
  const REJECTED = [
    "event = 'a'; DROP TABLE events; --",
    '1; SELECT * FROM persons',
    "event = 'a') OR (1=1",
    "properties.x') OR 1=1 --",
    '(SELECT 1)',
    'event FROM events',
    "e.event = 'x'",
    "json_extract_string(properties, '$')",
    "read_parquet('x') IS NULL",
    "getvariable('x') IS NULL",
    "current_setting('threads') IS NULL",
    'pragma_version() IS NULL',
    'properties.x::INTEGER = 1',
    'event = $1',
    'event = ?',
    "event = E'\\x00'",
    '`events`.event = 1',
    'count(*) FILTER (WHERE 1)',
    "event = 'a' UNION SELECT 1",
    'lower(event) COLLATE NOCASE',
    "event = 'a' /* unterminated",
    "event = 'unterminated",
    'properties.`unterminated',
    "properties.a\"b = 'x'",
    "event IN (SELECT event FROM events)",
    "event = 'a' AND sleep(1)",
    "properties['a'] [0]",
    "timestamp > 'yesterday'",
    "event LIKE 'trailing\\\\'",
    'sum(count())',
  ];
  for (const source of REJECTED) {
    it(`refuses ${JSON.stringify(source)}`, async () => {
      assert.equal(await attempt({ where: [source] }), 'rejected');
      assert.equal(await attempt({ select: [source] }), 'rejected');
      await tableIntact();
    });
  }

  it('ignores comments instead of passing them on', async () => {
    const result = await attempt({ where: ["event = 'a' -- ' OR 1=1", "event = 'b' /* ; DROP TABLE events */ OR true"] });
    assert.notEqual(result, 'rejected');
    if (result !== 'rejected') {
      assert.deepEqual(result.rows, []);
      assert.doesNotMatch(result.sql, /--|\/\*|DROP/);
    }
    await tableIntact();
  });

  it('treats double-quoted names as identifiers, not strings', async () => {
    assert.equal(await attempt({ where: ['event = "a\'b"'] }), 'rejected');
    const result = await attempt({ where: ['"event" = \'a\'\'b\''] });
    assert.notEqual(result, 'rejected');
  });

  it('refuses oversized and over-nested input with a HogQLError', async () => {
    assert.equal(await attempt({ where: [`${'('.repeat(4000)}1${')'.repeat(4000)}`] }), 'rejected');
    assert.equal(await attempt({ where: [`${'lower('.repeat(200)}event${')'.repeat(200)} = 'x'`] }), 'rejected');
    assert.equal(await attempt({ where: [`event = '${'x'.repeat(20_000)}'`] }), 'rejected');
    assert.equal(await attempt({ where: Array(500).fill("event = 'x'") }), 'rejected');
    assert.equal(await attempt({ select: [{ toString: () => 'event' }] }), 'rejected');
  });

  it('survives random token soup (fuzzed)', async () => {
    const tokens = [
      'event', 'distinct_id', 'timestamp', 'uuid', 'person_id', 'properties.v', "properties['v']", 'person.properties.email',
      'properties.`a\'b`', 'count(', 'uniq(', 'sum(', 'toDate(', 'toStartOfWeek(', 'dateDiff(', "'day'", 'lower(', 'concat(',
      'if(', 'coalesce(', 'round(', 'toInt(', 'now()', 'today()', '(', ')', ',', '=', '!=', '<', '>=', '+', '-', '*', '/', '%',
      'AND', 'OR', 'NOT', 'IN', 'LIKE', 'ILIKE', 'IS', 'NULL', 'true', "'x'", "'2024-01-01'", "'%'", '1', '2.5', '0',
      '9223372036854775807', "'; DROP TABLE events; --", '--', '/*', '*/', ';', '"event"', '`v`', '[', ']', '.', "'\\'",
    ];
    const expression = fc.array(fc.constantFrom(...tokens), { minLength: 1, maxLength: 10 }).map((parts) => parts.join(' '));
    let compiled = 0;
    await fc.assert(
      fc.asyncProperty(expression, async (source) => {
        // attempt() throws (failing the property) on anything but a HogQLError or a clean run.
        if ((await attempt({ where: [source] })) !== 'rejected') compiled++;
        if ((await attempt({ select: [source] })) !== 'rejected') compiled++;
        return true;
      }),
      { numRuns: 1500, seed: 424242 },
    );
    assert.ok(compiled > 100, `fuzzer compiled too few expressions (${compiled})`);
    await tableIntact();
  });

  it('survives random property filter JSON (fuzzed)', async () => {
    const operator = fc.constantFrom('exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'not_regex', 'gt', 'gte', 'lt', 'lte', 'is_set', 'is_not_set', 'is_date_before', 'is_date_after', 'bogus');
    const value = fc.oneof(fc.string(), fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 3 }), fc.constantFrom(...HOSTILE, '-7d', '2024-01-01', '(', '[a-'));
    const leaf = fc.record({ key: fc.oneof(fc.string(), fc.constantFrom(...HOSTILE, 'v')), value, operator, type: fc.constantFrom('event', 'person', undefined, 'cohort') }, { requiredKeys: [] });
    const tree = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, leaf, fc.record({ type: fc.constantFrom('AND', 'OR'), values: fc.array(tie('node'), { maxLength: 3 }) })),
    })).node;
    await fc.assert(
      fc.asyncProperty(fc.array(tree, { maxLength: 3 }), async (filters) => {
        await attempt({ properties: filters });
        return true;
      }),
      { numRuns: 500, seed: 777 },
    );
    await tableIntact();
  });
});
