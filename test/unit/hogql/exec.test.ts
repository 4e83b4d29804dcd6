/**
 * Runs compiled expressions against a real in-memory DuckDB with the production schema and
 * checks which events each one returns.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { inMemoryEventStore, insertEvents, storeDialect } from '../../helpers/duckdb-schema.js';

import { EventsScope, compileFilters, compileSelect, compileWhere, groupByFor } from '../../../src/hogql/compile.js';
import { HogQLError } from '../../../src/hogql/errors.js';
import type { CompileContext, PropertyValueType } from '../../../src/hogql/context.js';
import { lazyJoins } from '../../../src/hogql/fields.js';
import * as ir from '../../../src/hogql/ir.js';

const NOW = new Date('2024-06-01T12:00:00Z');
const uuid = (n: number) => `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`;
const PERSON = { alice: 'aaaaaaaa-0000-0000-0000-000000000001', bob: 'aaaaaaaa-0000-0000-0000-000000000002', carol: 'aaaaaaaa-0000-0000-0000-000000000003', orphan: 'aaaaaaaa-0000-0000-0000-000000000009' };

interface Fixture {
  n: number;
  event: string;
  distinctId: string;
  ts: string;
  props: Record<string, unknown>;
  project?: number;
  personId?: string;
  group0?: string;
}

// Event n has uuid(n); tests name events by n.
const EVENTS: Fixture[] = [
  { n: 1, event: '$pageview', distinctId: 'alice', ts: '2024-01-01 10:00:00', props: { $browser: 'Chrome', price: 10, is_paid: true, '$screen width': 1920, $current_url: 'https://a.com/x' } },
  { n: 2, event: '$pageview', distinctId: 'alice-anon', ts: '2024-01-02 11:00:00', props: { $browser: 'Firefox', price: '20', is_paid: 'false' } },
  { n: 3, event: '$pageview', distinctId: 'bob', ts: '2024-01-03 12:00:00', props: { $browser: 'Safari', price: 5.5 } },
  { n: 4, event: 'signup', distinctId: 'bob', ts: '2024-01-03 13:00:00', props: { plan: 'free', signup_at: '2024-01-03T13:00:00Z' } },
  { n: 5, event: 'purchase', distinctId: 'alice', ts: '2024-01-05 09:00:00', props: { price: 99.99, currency: 'USD', nested: { a: { b: 'deep' } } }, group0: 'acme' },
  { n: 6, event: 'purchase', distinctId: 'bob', ts: '2024-01-06 09:00:00', props: { price: 1, currency: 'EUR' } },
  { n: 7, event: '$pageview', distinctId: 'carol', ts: '2024-01-07 00:00:00', props: { $browser: 'Chrome', '100%': 'yes', under_score: 'a_b' } },
  { n: 8, event: '$pageview', distinctId: 'dave', ts: '2024-01-08 08:00:00', props: { $browser: null, under_score: 'axb' } },
  { n: 9, event: '$autocapture', distinctId: 'dave', ts: '2024-01-09 08:00:00', props: { tag: 'button', 'a.b': 'dotted', 'a/b': 'slashed', 'a~b': 'tilde' } },
  { n: 10, event: 'custom', distinctId: 'carol', ts: '2024-01-10 08:00:00', props: { text: 'Hello World', count: 3 } },
  { n: 11, event: 'custom', distinctId: 'carol', ts: '2024-01-11 08:00:00', props: { text: 'hello world', count: '7' } },
  { n: 12, event: '$pageleave', distinctId: 'alice', ts: '2024-01-12 08:00:00', props: { $browser: 'Chrome', duration: 120 } },
  { n: 13, event: 'signup', distinctId: 'carol', ts: '2024-01-13 08:00:00', props: { plan: 'pro', signup_at: 1704067200 } },
  { n: 14, event: 'purchase', distinctId: 'carol', ts: '2024-01-14 08:00:00', props: { price: 'abc' } },
  { n: 15, event: '$pageview', distinctId: 'bob', ts: '2024-02-01 10:00:00', props: { $browser: 'Safari', utm_source: 'google' } },
  { n: 16, event: '$pageview', distinctId: 'bob', ts: '2024-02-15 10:00:00', props: { $browser: 'Chrome', utm_source: 'GOOGLE', blank: '' } },
  { n: 17, event: '$identify', distinctId: 'alice', ts: '2024-03-01 10:00:00', props: { $set: { email: 'alice@example.com' } } },
  { n: 18, event: '$pageview', distinctId: 'eve', ts: '2024-03-02 10:00:00', props: { $browser: 'Edge', '': 'empty key' }, personId: PERSON.orphan },
  { n: 19, event: '$pageview', distinctId: 'alice', ts: '2024-05-31 20:00:00', props: { $browser: 'Chrome' } },
  { n: 20, event: '$pageview', distinctId: 'alice', ts: '2024-01-01 10:00:00', props: { $browser: 'Chrome' }, project: 2 },
];
const PROJECT_1 = EVENTS.filter((e) => (e.project ?? 1) === 1).map((e) => e.n);

let db: DuckDBInstance;
let conn: DuckDBConnection;

before(async () => {
  ({ db, conn } = await inMemoryEventStore());
  await insertEvents(conn, async () => {
    for (const e of EVENTS) {
      await conn.run(
        `INSERT INTO pending_events VALUES ($1, CAST($2 AS UUID), $3, $4, CAST($5 AS UUID), CAST($6 AS TIMESTAMP), CAST($6 AS TIMESTAMP) + INTERVAL 1 SECOND, $7, '', $8, '', '', '', '', $9)`,
        [e.project ?? 1, uuid(e.n), e.event, e.distinctId, e.personId ?? null, e.ts, JSON.stringify(e.props), e.group0 ?? '', e.n],
      );
    }
  });
  const persons: Array<[string, Record<string, unknown>, string[]]> = [
    [PERSON.alice, { email: 'alice@example.com', name: 'Alice', plan: 'pro', age: 31 }, ['alice', 'alice-anon']],
    [PERSON.bob, { email: 'bob@test.org', age: 25, beta: true }, ['bob']],
    [PERSON.carol, {}, ['carol']],
  ];
  for (const [id, props, distinctIds] of persons) {
    await conn.run(`INSERT INTO persons VALUES (1, CAST($1 AS UUID), $2, true, TIMESTAMP '2024-01-01 00:00:00')`, [id, JSON.stringify(props)]);
    for (const distinctId of distinctIds) {
      await conn.run('INSERT INTO person_distinct_ids VALUES (1, $1, CAST($2 AS UUID))', [distinctId, id]);
    }
  }
  // Same distinct id in another project must not leak into project 1 joins.
  await conn.run(`INSERT INTO person_distinct_ids VALUES (2, 'alice', CAST($1 AS UUID))`, [PERSON.bob]);
});

after(() => {
  conn?.closeSync();
  db?.closeSync();
});

const DECLARED: Record<string, PropertyValueType> = {
  'event:typed_price': 'Numeric',
  'event:signup_at': 'DateTime',
  'person:age': 'Numeric',
  'person:beta': 'Boolean',
};

function context(declared: Record<string, PropertyValueType> = DECLARED): CompileContext {
  return { propertyType: (kind, key) => declared[`${kind}:${key}`] ?? null, now: NOW };
}

interface QueryInput {
  select?: string[];
  where?: string[];
  properties?: unknown;
  declared?: Record<string, PropertyValueType>;
}

/** Builds the events query the way the API does: project scope, compiled parts, joins on demand. */
function buildQuery({ select = ['toString(uuid)'], where = [], properties, declared }: QueryInput) {
  const scope = new EventsScope(context(declared), 1);
  const columns = compileSelect(select, scope);
  const conditions = compileWhere(where, scope);
  const filters = compileFilters(properties, scope);
  const grouped = columns.hasAggregate || conditions.having !== null;
  const query = ir.select({
    columns: columns.exprs.map((expr, i) => ({ expr, name: `c${i}` })),
    from: { kind: 'table', table: 'events', alias: 'e', projectId: 1 },
    joins: lazyJoins(scope.binding),
    where: ir.allOf([conditions.where, filters]),
    groupBy: groupByFor(columns, conditions),
    having: conditions.having,
    orderBy: grouped ? columns.exprs.map((expr) => ({ expr, desc: false })) : [{ expr: ir.column('e', 'events', '$flush_seq', 'Integer'), desc: false }],
  });
  const { sql, params } = storeDialect().print(query);
  return { sql, values: params, columns, needsPerson: scope.needsPerson };
}

async function run(input: QueryInput): Promise<unknown[][]> {
  const { sql, values } = buildQuery(input);
  const reader = await conn.runAndReadAll(sql, values as never[]);
  return reader.getRowsJson() as unknown[][];
}

/** Numbers of the events an expression / filter selects. */
async function ids(input: Omit<QueryInput, 'select'>): Promise<number[]> {
  const rows = await run({ ...input, select: ['toString(uuid)'] });
  return rows.map(([id]) => Number(String(id).slice(-12)));
}

const where = (...exprs: string[]) => ids({ where: exprs });
const filter = (properties: unknown, declared?: Record<string, PropertyValueType>) => ids({ properties, declared });

describe('where expressions on DuckDB', () => {
  it('filters by columns', async () => {
    assert.deepEqual(await where("event = '$pageview'"), [1, 2, 3, 7, 8, 15, 16, 18, 19]);
    assert.deepEqual(await where("distinct_id == 'bob'"), [3, 4, 6, 15, 16]);
    assert.deepEqual(await where("$group_0 = 'acme'"), [5]);
    assert.deepEqual(await where("elements_chain != ''"), []);
    assert.deepEqual(await where(`uuid = '${uuid(5)}'`), [5]);
    assert.deepEqual(await where(`uuid = '${uuid(5).toUpperCase()}'`), [5]);
    assert.deepEqual(await where("uuid = 'not-a-uuid'"), []);
    assert.deepEqual(await where("created_at > '2024-03-01 10:00:00'"), [17, 18, 19]);
    assert.deepEqual(await where('true'), PROJECT_1);
  });

  it('reads event properties in every spelling', async () => {
    const chrome = [1, 7, 12, 16, 19];
    assert.deepEqual(await where("properties.$browser = 'Chrome'"), chrome);
    assert.deepEqual(await where("properties['$browser'] = 'Chrome'"), chrome);
    assert.deepEqual(await where("properties.`$browser` = 'Chrome'"), chrome);
    assert.deepEqual(await where('properties."$browser" = \'Chrome\''), chrome);
    assert.deepEqual(await where('properties.`$screen width` = 1920'), [1]);
    assert.deepEqual(await where("properties.nested.a.b = 'deep'"), [5]);
    assert.deepEqual(await where("properties.nested['a'].b = 'deep'"), [5]);
    assert.deepEqual(await where("properties.`a.b` = 'dotted'"), [9]);
    assert.deepEqual(await where("properties['a/b'] = 'slashed'"), [9]);
    assert.deepEqual(await where("properties['a~b'] = 'tilde'"), [9]);
    assert.deepEqual(await where("properties[''] = 'empty key'"), [18]);
    assert.deepEqual(await where("properties.`100%` = 'yes'"), [7]);
  });

  it('treats JSON null and missing properties as NULL', async () => {
    assert.deepEqual(await where("properties.$browser IS NULL AND event = '$pageview'"), [8]);
    assert.deepEqual(await where('properties.$browser = NULL', "event = '$pageview'"), [8]);
    assert.deepEqual(await where('properties.utm_source IS NOT NULL'), [15, 16]);
    assert.deepEqual(await where('properties.utm_source != NULL'), [15, 16]);
  });

  it('compares untyped properties with numbers numerically', async () => {
    assert.deepEqual(await where('properties.price > 5'), [1, 2, 3, 5]);
    assert.deepEqual(await where('properties.price = 20'), [2]);
    assert.deepEqual(await where("properties.price = '20'"), [2]);
    assert.deepEqual(await where("properties.price = '10'"), [1]);
    assert.deepEqual(await where('properties.price * 2 > 100'), [5]);
    assert.deepEqual(await where('properties.price % 2 = 1'), [6]);
    assert.deepEqual(await where('properties.price IN (1, 10)'), [1, 6]);
  });

  it('uses declared property types', async () => {
    const asNumeric = { 'event:price': 'Numeric' as const };
    assert.deepEqual(await ids({ where: ["properties.price = '20'"], declared: asNumeric }), [2]);
    assert.deepEqual(await ids({ where: ["properties.price >= '5.5'"], declared: asNumeric }), [1, 2, 3, 5]);
    const asBoolean = { 'event:is_paid': 'Boolean' as const };
    assert.deepEqual(await ids({ where: ['properties.is_paid = true'], declared: asBoolean }), [1]);
    assert.deepEqual(await ids({ where: ["properties.is_paid = 'false'"], declared: asBoolean }), [2]);
    assert.deepEqual(await ids({ where: ['NOT properties.is_paid'], declared: asBoolean }), [2]);
    assert.deepEqual(await where("properties.signup_at > '2024-01-02'"), [4]);
    assert.deepEqual(await where("properties.signup_at < '2024-01-02'"), [13]);
    assert.deepEqual(await where("person.properties.age > '30'"), [1, 2, 5, 12, 17, 19]);
    assert.deepEqual(await where('person.properties.beta'), [3, 4, 6, 15, 16]);
  });

  it('compares untyped properties with booleans as booleans', async () => {
    assert.deepEqual(await where('properties.is_paid = true'), [1]);
    assert.deepEqual(await where('properties.is_paid = false'), [2]);
    assert.deepEqual(await where("properties.is_paid = 'true'"), [1]);
  });

  it('reads person data through the joins', async () => {
    const alice = [1, 2, 5, 12, 17, 19];
    assert.deepEqual(await where("person.properties.email = 'alice@example.com'"), alice);
    assert.deepEqual(await where(`person_id = '${PERSON.alice}'`), alice);
    assert.deepEqual(await where(`person_id = '${PERSON.orphan}'`), [18]);
    assert.deepEqual(await where('person_id IS NULL'), [8, 9]);
    assert.deepEqual(await where("person.properties.email ILIKE '%@TEST.org'"), [3, 4, 6, 15, 16]);
  });

  it('joins persons only when needed', () => {
    assert.equal(buildQuery({ where: ["event = 'a'"] }).needsPerson, false);
    assert.doesNotMatch(buildQuery({ where: ["event = 'a'"] }).sql, /pdi|persons/);
    assert.equal(buildQuery({ where: ['person_id IS NULL'] }).needsPerson, true);
    assert.equal(buildQuery({ select: ['person.properties.email'] }).needsPerson, true);
    assert.equal(buildQuery({ properties: [{ key: 'email', value: 'x', type: 'person' }] }).needsPerson, true);
  });

  it('compares timestamps with date strings', async () => {
    assert.deepEqual(await where("timestamp > '2024-02-01'"), [15, 16, 17, 18, 19]);
    assert.deepEqual(await where("timestamp >= '2024-01-03 12:00:00' AND timestamp < '2024-01-04'"), [3, 4]);
    assert.deepEqual(await where("timestamp = '2024-01-03T12:00:00Z'"), [3]);
    assert.deepEqual(await where("timestamp = '2024-01-03T14:00:00+02:00'"), [3]);
    assert.deepEqual(await where("timestamp IN ('2024-01-03 12:00:00', '2024-01-05 09:00:00')"), [3, 5]);
  });

  it('evaluates date functions', async () => {
    assert.deepEqual(await where("toDate(timestamp) = '2024-01-03'"), [3, 4]);
    assert.deepEqual(await where("toStartOfDay(timestamp) = '2024-01-03'"), [3, 4]);
    assert.deepEqual(await where("toStartOfHour(timestamp) = '2024-01-03 12:00:00'"), [3]);
    // 2024-01-07 is a Sunday: ClickHouse's default week starts on Sunday, mode 1 on Monday.
    assert.deepEqual(await where("toStartOfWeek(timestamp) = '2024-01-07'"), [7, 8, 9, 10, 11, 12, 13]);
    assert.deepEqual(await where("toStartOfWeek(timestamp, 1) = '2024-01-08'"), [8, 9, 10, 11, 12, 13, 14]);
    assert.deepEqual(await where("toStartOfMonth(timestamp) = '2024-02-01'"), [15, 16]);
    assert.deepEqual(await where("dateDiff('day', timestamp, now()) <= 1"), [19]);
    assert.deepEqual(await where("dateDiff('month', timestamp, now()) = 3"), [17, 18]);
    assert.deepEqual(await where('toDate(timestamp) = today() - 1'), [19]);
    assert.deepEqual(await where("timestamp - 3600 = '2024-01-03 11:00:00'"), [3]);
    assert.deepEqual(await where("1 + toDate(timestamp) = '2024-01-04'"), [3, 4]);
    assert.deepEqual(await where("now() - timestamp < 86400"), [19]);
    assert.deepEqual(await where("today() - toDate(timestamp) = 1"), [19]);
    assert.deepEqual(await where("toDateTime('2024-01-03 12:00:00') = timestamp"), [3]);
    assert.deepEqual(await where("timestamp > toDate('2024-05-30')"), [19]);
  });

  it('evaluates string functions and LIKE', async () => {
    assert.deepEqual(await where("lower(properties.text) = 'hello world'"), [10, 11]);
    assert.deepEqual(await where("upper(properties.text) = 'HELLO WORLD'"), [10, 11]);
    assert.deepEqual(await where('length(event) = 8'), [5, 6, 14]);
    assert.deepEqual(await where("concat(event, '-', distinct_id) = 'signup-bob'"), [4]);
    assert.deepEqual(await where("concat(properties.missing, event) = 'signup'"), [4, 13]);
    assert.deepEqual(await where('notEmpty(properties.utm_source)'), [15, 16]);
    assert.deepEqual(await where('empty(properties.blank)'), [16]);
    assert.deepEqual(await where("properties.utm_source LIKE 'goo%'"), [15]);
    assert.deepEqual(await where("properties.utm_source ILIKE 'goo%'"), [15, 16]);
    assert.deepEqual(await where("properties.utm_source NOT LIKE 'goo%'"), [16]);
    assert.deepEqual(await where("properties.utm_source NOT ILIKE 'goo%'"), []);
    assert.deepEqual(await where("properties.under_score LIKE 'a_b'"), [7, 8]);
    assert.deepEqual(await where("properties.under_score LIKE 'a\\\\_b'"), [7]);
    assert.deepEqual(await where("properties.`100%` LIKE '%'"), [7]);
    assert.deepEqual(await where("event LIKE properties.tag"), []);
  });

  it('evaluates conversion, logic and number functions', async () => {
    assert.deepEqual(await where("coalesce(properties.plan, 'none') = 'pro'"), [13]);
    assert.deepEqual(await where("if(properties.price > 50, 'big', 'small') = 'big'"), [5]);
    assert.deepEqual(await where('round(toFloat(properties.price)) = 100'), [5]);
    assert.deepEqual(await where('round(properties.price, 1) = 5.5'), [3]);
    assert.deepEqual(await where('abs(toFloat(properties.price) - 10) < 1'), [1]);
    assert.deepEqual(await where('toInt(properties.count) = 7'), [11]);
    assert.deepEqual(await where('toInt(properties.price) = 5'), [3]);
    assert.deepEqual(await where('toFloat(properties.price) = 99.99'), [5]);
    assert.deepEqual(await where("toString(properties.count) = '3'"), [10]);
    assert.deepEqual(await where('toString(properties.duration) = toString(120)'), [12]);
    assert.deepEqual(await where("event IN ('signup', 'purchase')"), [4, 5, 6, 13, 14]);
    assert.deepEqual(await where("event NOT IN ('signup', 'purchase', '$pageview')"), [9, 10, 11, 12, 17]);
  });

  it('applies precedence like ClickHouse', async () => {
    assert.deepEqual(await where("event = 'signup' OR event = 'purchase' AND distinct_id = 'bob'"), [4, 6, 13]);
    assert.deepEqual(await where("(event = 'signup' OR event = 'purchase') AND distinct_id = 'bob'"), [4, 6]);
    assert.deepEqual(await where("NOT event = '$pageview' AND distinct_id = 'bob'"), [4, 6]);
    assert.deepEqual(await where('1 + 2 * 3 = 7'), PROJECT_1);
    assert.deepEqual(await where('-2 * 3 + 10 = 4'), PROJECT_1);
  });

  it('ANDs several where expressions', async () => {
    assert.deepEqual(await where("event = '$pageview'", "distinct_id = 'bob'", "properties.$browser = 'Chrome'"), [16]);
  });

  it('turns integer overflow into NULL instead of a query error', async () => {
    assert.deepEqual(await where('9007199254740991 * 9007199254740991 IS NULL'), PROJECT_1);
    assert.deepEqual(await where('9223372036854775807 * 2 > 0'), PROJECT_1);
    assert.deepEqual(await where('-(9007199254740991 * 1024 * 1024) IS NULL'), PROJECT_1);
    assert.deepEqual(await where('toDate(timestamp) + 3000000000 IS NULL'), PROJECT_1);
  });
});

describe('select expressions and aggregates on DuckDB', () => {
  it('returns typed columns', async () => {
    const rows = await run({
      select: ['event', "properties.$browser AS browser", 'toDate(timestamp)', 'properties.price + 1', 'count(*)'],
      where: ["distinct_id = 'bob'", "event = '$pageview'"],
    });
    assert.deepEqual(rows, [
      ['$pageview', 'Chrome', '2024-02-15', null, '1'],
      ['$pageview', 'Safari', '2024-01-03', 6.5, '1'],
      ['$pageview', 'Safari', '2024-02-01', null, '1'],
    ]);
  });

  it('returns plain rows without aggregates', async () => {
    const rows = await run({ select: ['distinct_id', 'lower(event)', 'timestamp'], where: ["event = 'signup'"] });
    assert.deepEqual(rows, [
      ['bob', 'signup', '2024-01-03 13:00:00'],
      ['carol', 'signup', '2024-01-13 08:00:00'],
    ]);
  });

  it('aggregates the whole set', async () => {
    const rows = await run({ select: ['count()', 'uniq(distinct_id)', 'min(timestamp)', 'max(timestamp)'] });
    assert.deepEqual(rows, [['19', '6', '2024-01-01 10:00:00', '2024-05-31 20:00:00']]);
  });

  it('sums and averages property values, skipping unparsable ones', async () => {
    const [[sum, avg, ints]] = (await run({ select: ['sum(properties.price)', 'avg(properties.price)', 'sum(toInt(properties.count))'] })) as number[][];
    assert.ok(Math.abs(sum - 136.49) < 1e-9);
    assert.ok(Math.abs(avg - 136.49 / 5) < 1e-9);
    assert.equal(ints, '10');
  });

  it('groups by the non-aggregate columns', async () => {
    const rows = await run({ select: ['event', 'count() AS c'], where: ["event IN ('signup', 'purchase', 'custom')"] });
    assert.deepEqual(rows, [
      ['custom', '2'],
      ['purchase', '3'],
      ['signup', '2'],
    ]);
  });

  it('groups by property values and person properties', async () => {
    assert.deepEqual(await run({ select: ['properties.$browser', 'count()'], where: ["event = '$pageview'"] }), [
      ['Chrome', '4'],
      ['Edge', '1'],
      ['Firefox', '1'],
      ['Safari', '2'],
      [null, '1'],
    ]);
    assert.deepEqual(await run({ select: ['person.properties.email', 'uniq(distinct_id)'] }), [
      ['alice@example.com', '2'],
      ['bob@test.org', '1'],
      [null, '3'],
    ]);
  });

  it('groups by date buckets', async () => {
    assert.deepEqual(await run({ select: ['toStartOfMonth(timestamp) AS month', 'count()'] }), [
      ['2024-01-01', '14'],
      ['2024-02-01', '2'],
      ['2024-03-01', '2'],
      ['2024-05-01', '1'],
    ]);
  });

  it('puts aggregate conditions in HAVING', async () => {
    assert.deepEqual(await run({ select: ['distinct_id', 'count()'], where: ['count() > 3'] }), [
      ['alice', '5'],
      ['bob', '5'],
      ['carol', '5'],
    ]);
  });

  it('groups by every column when only the where list aggregates', async () => {
    assert.deepEqual(await run({ select: ['distinct_id'], where: ['count() > 3'] }), [['alice'], ['bob'], ['carol']]);
    assert.deepEqual(await run({ select: ['count()'], where: ['count() > 100'] }), []);
  });

  it('combines aggregates in one expression', async () => {
    assert.deepEqual(await run({ select: ["if(count() > 10, 'many', 'few')", 'round(count() / uniq(distinct_id), 2)'] }), [['many', 3.17]]);
  });

  it('does integer arithmetic on aggregates (DuckDB refuses them inside TRY)', async () => {
    assert.deepEqual(await run({ select: ['count() * 10', 'count() - count()', '-count()'] }), [['190', '0', '-19']]);
  });

  it('evaluates now(), today() and constants from the context', async () => {
    assert.deepEqual(await run({ select: ['now()', 'today()', "'x'", '1.5', 'NULL', 'true'], where: ["uuid = '" + uuid(1) + "'"] }), [
      ['2024-06-01 12:00:00', '2024-06-01', 'x', 1.5, null, true],
    ]);
  });
});

describe('property filters on DuckDB', () => {
  it('exact and is_not, with scalar and list values', async () => {
    assert.deepEqual(await filter([{ key: '$browser', value: 'Chrome', operator: 'exact' }]), [1, 7, 12, 16, 19]);
    assert.deepEqual(await filter([{ key: '$browser', value: 'Chrome' }]), [1, 7, 12, 16, 19]);
    assert.deepEqual(await filter([{ key: '$browser', value: ['Safari', 'Edge'], operator: 'exact' }]), [3, 15, 18]);
    // Missing properties match negative operators, as in HogQL.
    assert.deepEqual(await filter([{ key: '$browser', value: 'Chrome', operator: 'is_not' }]), [2, 3, 4, 5, 6, 8, 9, 10, 11, 13, 14, 15, 17, 18]);
    assert.deepEqual(await filter([{ key: 'plan', value: ['free', 'pro'], operator: 'is_not' }]), PROJECT_1.filter((n) => n !== 4 && n !== 13));
    assert.deepEqual(await filter([{ key: 'price', value: 10, operator: 'exact' }]), [1]);
    assert.deepEqual(await filter([{ key: 'is_paid', value: true, operator: 'exact' }]), [1]);
    assert.deepEqual(await filter([{ key: 'is_paid', value: ['false'], operator: 'exact' }]), [2]);
  });

  it('icontains and not_icontains keep % and _ literal', async () => {
    assert.deepEqual(await filter([{ key: 'text', value: 'WORLD', operator: 'icontains' }]), [10, 11]);
    assert.deepEqual(await filter([{ key: 'under_score', value: '_', operator: 'icontains' }]), [7]);
    assert.deepEqual(await filter([{ key: 'utm_source', value: 'oo', operator: 'not_icontains' }]), PROJECT_1.filter((n) => n !== 15 && n !== 16));
    assert.deepEqual(await filter([{ key: 'price', value: 9, operator: 'icontains' }]), [5]);
  });

  it('regex and not_regex', async () => {
    assert.deepEqual(await filter([{ key: '$current_url', value: '^https://a\\.com/', operator: 'regex' }]), [1]);
    assert.deepEqual(await filter([{ key: 'text', value: '(?i)^hello', operator: 'regex' }]), [10, 11]);
    assert.deepEqual(await filter([{ key: 'text', value: '^Hello', operator: 'not_regex' }]), PROJECT_1.filter((n) => n !== 10));
  });

  it('gt, gte, lt, lte compare numbers numerically', async () => {
    assert.deepEqual(await filter([{ key: 'price', value: 10, operator: 'gt' }]), [2, 5]);
    assert.deepEqual(await filter([{ key: 'price', value: '10', operator: 'gte' }]), [1, 2, 5]);
    assert.deepEqual(await filter([{ key: 'price', value: 5.5, operator: 'lt' }]), [6]);
    assert.deepEqual(await filter([{ key: 'price', value: 5.5, operator: 'lte' }]), [3, 6]);
    assert.deepEqual(await filter([{ key: 'age', value: 30, operator: 'gt', type: 'person' }]), [1, 2, 5, 12, 17, 19]);
    assert.deepEqual(await filter([{ key: 'signup_at', value: '2024-01-02', operator: 'gt' }]), [4]);
  });

  it('is_set and is_not_set', async () => {
    assert.deepEqual(await filter([{ key: 'utm_source', operator: 'is_set' }]), [15, 16]);
    assert.deepEqual(await filter([{ key: 'utm_source', operator: 'is_set', value: 'is_set' }]), [15, 16]);
    // JSON null counts as not set.
    assert.deepEqual(await filter([{ key: '$browser', operator: 'is_not_set' }, { key: 'event', operator: 'is_not_set' }]), [4, 5, 6, 8, 9, 10, 11, 13, 14, 17]);
    assert.deepEqual(await filter([{ key: 'email', operator: 'is_set', type: 'person' }]), [1, 2, 3, 4, 5, 6, 12, 15, 16, 17, 19]);
  });

  it('is_date_before and is_date_after, absolute and relative', async () => {
    assert.deepEqual(await filter([{ key: 'signup_at', value: '2024-01-02', operator: 'is_date_before' }]), [13]);
    assert.deepEqual(await filter([{ key: 'signup_at', value: '2024-01-02T00:00:00Z', operator: 'is_date_after' }]), [4]);
    assert.deepEqual(await filter([{ key: 'signup_at', value: '-1y', operator: 'is_date_after' }]), [4, 13]);
    assert.deepEqual(await filter([{ key: 'signup_at', value: '-7d', operator: 'is_date_after' }]), []);
  });

  it('nests AND / OR groups', async () => {
    const group = {
      type: 'OR',
      values: [
        { type: 'AND', values: [{ key: '$browser', value: 'Chrome' }, { key: 'email', value: 'bob@test.org', type: 'person' }] },
        { type: 'AND', values: [{ key: 'plan', value: 'pro' }] },
      ],
    };
    assert.deepEqual(await filter(group), [13, 16]);
    assert.deepEqual(await filter({ type: 'AND', values: [] }), PROJECT_1);
    assert.deepEqual(await filter([]), PROJECT_1);
    assert.deepEqual(await filter(null), PROJECT_1);
    assert.deepEqual(await filter(JSON.stringify([{ key: 'plan', value: 'pro' }])), [13]);
  });

  it('accepts HogQL filters', async () => {
    assert.deepEqual(await filter([{ type: 'hogql', key: "person.properties.plan = 'pro' AND event = 'purchase'" }]), [5]);
  });

  it('combines with select and where', async () => {
    const rows = await run({
      select: ['distinct_id', 'count()'],
      where: ["event = '$pageview'"],
      properties: [{ key: '$browser', value: ['Chrome', 'Safari'] }],
    });
    assert.deepEqual(rows, [
      ['alice', '2'],
      ['bob', '3'],
      ['carol', '1'],
    ]);
  });

  it('rejects malformed filters with attr "properties"', () => {
    const bad: Array<[unknown, RegExp]> = [
      [[{ key: 'x', value: 'a', operator: 'nope' }], /operator 'nope' is not supported/],
      [[{ key: 'x', value: 'a', type: 'cohort' }], /Cohort filters need a cohort id/],
      [[{ value: 'a' }], /key must be a non-empty string/],
      [[{ key: 42, value: 'a' }], /key must be a non-empty string/],
      [[{ key: 'x', value: { a: 1 } }], /must be a string, number or boolean/],
      [[{ key: 'x', value: [] }], /must not be an empty list/],
      [[{ key: 'x', value: '(', operator: 'regex' }], /Invalid regular expression '\(': missing \)/],
      [[{ key: 'x', value: '\\1', operator: 'not_regex' }], /Invalid regular expression/],
      [[{ key: 'x', value: 'someday', operator: 'is_date_before' }], /must be a date or a relative date/],
      [[{ key: 'signup_at', value: 'abc', operator: 'gt' }], /must be a number or a date/],
      [[{ type: 'hogql', key: 'count() > 1' }], /cannot use aggregate functions/],
      [[{ type: 'hogql', key: 'nope = 1' }], /Unknown field 'nope' at position 0/],
      [{ type: 'AND', values: 'x' }, /values must be a list/],
      ['{not json', /valid JSON/],
      [42, /must be a list or a property group/],
    ];
    for (const [value, message] of bad) {
      assert.throws(
        () => compileFilters(value, new EventsScope(context(), 1)),
        (error: unknown) => error instanceof HogQLError && error.attr === 'properties' && message.test(error.message),
        JSON.stringify(value),
      );
    }
    let deep: unknown = { key: 'x', value: 1 };
    for (let i = 0; i < 50; i++) deep = { type: 'AND', values: [deep] };
    assert.throws(() => compileFilters(deep, new EventsScope(context(), 1)), /nested too deeply/);
  });
});
