import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { HogQLError } from '../../../src/hogql/errors.js';
import { FUNCTION_NAMES } from '../../../src/hogql/functions.js';
import { EventsScope, compileSelect, compileWhere } from '../../../src/hogql/compile.js';
import type { CompileContext } from '../../../src/hogql/context.js';
import { parseExpression } from '../../../src/hogql/parser.js';
import { validateExpr } from '../../../src/hogql/validate.js';

const context: CompileContext = { propertyType: () => null, now: new Date('2024-06-01T12:00:00Z') };
const ctx = () => new EventsScope(context, 1);

function rejection(source: string): HogQLError {
  try {
    validateExpr(parseExpression(source));
  } catch (error) {
    assert.ok(error instanceof HogQLError, `expected HogQLError, got ${String(error)}`);
    return error;
  }
  assert.fail(`expected ${JSON.stringify(source)} to be rejected`);
}

describe('field whitelist', () => {
  it('accepts every whitelisted field', () => {
    const fields = [
      'event', 'distinct_id', 'timestamp', 'created_at', 'uuid', 'person_id', 'elements_chain',
      '$group_0', '$group_1', '$group_2', '$group_3', '$group_4',
      'properties.$browser', "properties['$browser']", 'properties.`$screen width`', 'properties.a.b',
      "properties.a['b']", 'person.properties.email', "person.properties['email']",
      // The whole JSON and the person's own columns, as in PostHog's HogQL.
      'properties', 'person.properties', 'person.id', 'person.created_at',
    ];
    for (const field of fields) assert.doesNotThrow(() => validateExpr(parseExpression(field)), field);
  });

  it('reports person data needs', () => {
    const needs = (source: string) => validateExpr(parseExpression(source)).needsPerson;
    assert.equal(needs('person.properties.email'), true);
    assert.equal(needs('person_id'), true);
    assert.equal(needs('properties.email'), false);
    assert.equal(needs('distinct_id'), false);
  });

  it('rejects unknown fields with their position', () => {
    const cases: Array<[string, string]> = [
      ["event = 'a' AND foo = 1", "Unknown field 'foo' at position 16"],
      ['person.nope', "Unknown field 'person.nope' at position 0"],
      ['e.event', "Unknown field 'e.event' at position 0"],
      ['events.event', "Unknown field 'events.event' at position 0"],
      ['1 + $group_5', "Unknown field '$group_5' at position 4"],
      ['Event', "Unknown field 'Event' at position 0"],
      ['pdi.person_id', "Unknown field 'pdi.person_id' at position 0"],
    ];
    for (const [source, message] of cases) assert.equal(rejection(source).message, message);
  });

  it('only takes string keys inside []', () => {
    assert.equal(rejection('properties[1]').message, 'Only string keys are supported inside [] at position 11');
    assert.equal(rejection("event['x']").message, "Unknown field 'event.x' at position 0");
    assert.equal(rejection("lower(event)['x']").message, '[] can only be applied to properties at position 0');
  });
});

describe('function whitelist', () => {
  const usage: Record<string, string> = {
    count: 'count()',
    uniq: 'uniq(distinct_id)',
    sum: 'sum(properties.price)',
    avg: 'avg(properties.price)',
    min: 'min(timestamp)',
    max: 'max(timestamp)',
    toDate: 'toDate(timestamp)',
    toDateTime: "toDateTime('2024-01-01 10:00:00')",
    toStartOfHour: 'toStartOfHour(timestamp)',
    toStartOfDay: 'toStartOfDay(timestamp)',
    toStartOfWeek: 'toStartOfWeek(timestamp, 1)',
    toStartOfMonth: 'toStartOfMonth(timestamp)',
    now: 'now()',
    today: 'today()',
    dateDiff: "dateDiff('day', timestamp, now())",
    toString: 'toString(uuid)',
    toInt: 'toInt(properties.n)',
    toFloat: 'toFloat(properties.n)',
    lower: 'lower(event)',
    upper: 'upper(event)',
    length: 'length(event)',
    concat: "concat(event, '-', distinct_id)",
    empty: 'empty(properties.x)',
    notEmpty: 'notEmpty(properties.x)',
    coalesce: "coalesce(properties.x, 'none')",
    if: "if(event = 'a', 1, 2)",
    round: 'round(properties.n, 2)',
    abs: 'abs(properties.n)',
    uniqExact: 'uniqExact(distinct_id)',
    countIf: "countIf(event = 'a')",
    sumIf: "sumIf(toInt(properties.n), event = 'a')",
    avgIf: "avgIf(properties.n, event = 'a')",
    any: 'any(event)',
    groupArray: 'groupArray(event)',
    median: 'median(properties.n)',
    quantile: 'quantile(0.9)(properties.n)',
    quantiles: 'quantiles(0.5, 0.9)(properties.n)',
    row_number: 'row_number() over (partition by event order by timestamp)',
    rank: 'rank() over (order by timestamp desc)',
    dense_rank: 'dense_rank() over (order by timestamp)',
    lagInFrame: 'lagInFrame(event) over (order by timestamp)',
    leadInFrame: 'leadInFrame(event, 2) over (order by timestamp)',
    lag: 'lag(event) over (order by timestamp)',
    lead: 'lead(event) over (order by timestamp)',
    first_value: 'first_value(event) over (partition by distinct_id order by timestamp)',
    last_value: 'last_value(event) over (partition by distinct_id order by timestamp)',
    toStartOfMinute: 'toStartOfMinute(timestamp)',
    toStartOfQuarter: 'toStartOfQuarter(timestamp)',
    toStartOfYear: 'toStartOfYear(timestamp)',
    dateTrunc: "dateTrunc('week', timestamp)",
    toYear: 'toYear(timestamp)',
    toQuarter: 'toQuarter(timestamp)',
    toMonth: 'toMonth(timestamp)',
    toDayOfMonth: 'toDayOfMonth(timestamp)',
    toHour: 'toHour(timestamp)',
    toMinute: 'toMinute(timestamp)',
    toSecond: 'toSecond(timestamp)',
    toDayOfWeek: 'toDayOfWeek(timestamp)',
    toDayOfYear: 'toDayOfYear(timestamp)',
    toUnixTimestamp: 'toUnixTimestamp(timestamp)',
    toIntervalSecond: 'timestamp - toIntervalSecond(30)',
    toIntervalMinute: 'timestamp - toIntervalMinute(30)',
    toIntervalHour: 'timestamp - toIntervalHour(3)',
    toIntervalDay: 'now() - toIntervalDay(7)',
    toIntervalWeek: 'now() - toIntervalWeek(1)',
    toIntervalMonth: 'now() - toIntervalMonth(1)',
    toIntervalQuarter: 'today() - toIntervalQuarter(1)',
    toIntervalYear: 'today() - toIntervalYear(1)',
    dateAdd: "dateAdd('day', 1, timestamp)",
    dateSub: "dateSub('hour', 1, timestamp)",
    yesterday: 'yesterday()',
    substring: 'substring(event, 1, 3)',
    replaceAll: "replaceAll(event, '$', '')",
    trim: 'trim(event)',
    match: "match(event, '^\\$page')",
    extract: "extract(properties.$current_url, 'utm_source=([^&]+)')",
    replaceRegexpAll: "replaceRegexpAll(event, '[0-9]+', '#')",
    JSONExtractString: "JSONExtractString(properties, '$browser')",
    JSONExtractRaw: "JSONExtractRaw(properties, 'a', 'b')",
    JSONExtractInt: "JSONExtractInt(properties, 'n')",
    JSONExtractFloat: "JSONExtractFloat(properties, 'n')",
    JSONExtractBool: "JSONExtractBool(properties, 'flag')",
    JSONHas: "JSONHas(properties, 'flag')",
    ifNull: "ifNull(properties.x, 'none')",
    isNull: 'isNull(properties.x)',
    isNotNull: 'isNotNull(properties.x)',
    multiIf: "multiIf(event = 'a', 1, event = 'b', 2, 3)",
    groupUniqArray: 'groupUniqArray(event)',
    argMax: 'argMax(event, timestamp)',
    argMin: 'argMin(event, timestamp)',
    toTimeZone: "toTimeZone(timestamp, 'Europe/Paris')",
    arrayMap: 'arrayMap(x -> x + 1, [1, 2])',
    arrayFilter: "arrayFilter(x -> x != '', splitByChar(',', event))",
    arrayExists: 'arrayExists(x -> x = event, [event])',
    arrayJoin: "arrayJoin(['a', 'b'])",
    has: "has(['a'], event)",
    indexOf: "indexOf(['a'], event)",
    arraySort: 'arraySort([3, 1])',
    arrayDistinct: 'arrayDistinct([1, 1])',
    splitByChar: "splitByChar('/', event)",
    JSONExtractArrayRaw: "JSONExtractArrayRaw(properties.x, 'k')",
  };
  const AGGREGATES = ['count', 'uniq', 'sum', 'avg', 'min', 'max', 'uniqExact', 'countIf', 'sumIf', 'avgIf', 'any', 'groupArray', 'groupUniqArray', 'argMax', 'argMin', 'median', 'quantile', 'quantiles'];

  it('has a usage example for every function', () => {
    assert.deepEqual([...FUNCTION_NAMES].sort(), Object.keys(usage).sort());
  });

  for (const [name, source] of Object.entries(usage)) {
    it(`compiles ${name}`, () => {
      const result = compileSelect([source], ctx());
      assert.equal(result.exprs.length, 1);
      assert.equal(result.hasAggregate, AGGREGATES.includes(name));
    });
  }

  it('matches SQL-standard names in any case, ClickHouse-specific ones exactly', () => {
    for (const source of ['COUNT()', 'Sum(properties.n)', 'LOWER(event)', 'IF(true, 1, 2)', 'Coalesce(event)', 'DATEDIFF(\'day\', timestamp, now())']) {
      assert.doesNotThrow(() => validateExpr(parseExpression(source)), source);
    }
    assert.equal(rejection('TODATE(timestamp)').message, "Unknown function 'TODATE' at position 0");
    assert.equal(rejection('Uniq(event)').message, "Unknown function 'Uniq' at position 0");
  });

  it('rejects unknown functions with their position', () => {
    assert.equal(rejection("event = 'a' OR sleep(10)").message, "Unknown function 'sleep' at position 15");
    assert.equal(rejection("read_csv('/etc/passwd')").message, "Unknown function 'read_csv' at position 0");
    assert.equal(rejection('lower(getenv(event))').message, "Unknown function 'getenv' at position 6");
  });

  it('checks arity', () => {
    const cases: Array<[string, string]> = [
      ['count(event, uuid)', "Function 'count' takes 0 to 1 arguments, got 2 at position 0"],
      ['uniq()', "Function 'uniq' takes 1 argument, got 0 at position 0"],
      ['if(true, 1)', "Function 'if' takes 3 arguments, got 2 at position 0"],
      ['now(1)', "Function 'now' takes 0 arguments, got 1 at position 0"],
      ['concat()', "Function 'concat' takes at least 1 argument, got 0 at position 0"],
      ['1 + round(1, 2, 3)', "Function 'round' takes 1 to 2 arguments, got 3 at position 4"],
      ['sum(*)', "'*' is only allowed in count(*) at position 4"],
    ];
    for (const [source, message] of cases) assert.equal(rejection(source).message, message);
  });

  it('checks constant arguments', () => {
    assert.equal(
      rejection("dateDiff('fortnight', timestamp, now())").message,
      'dateDiff unit must be one of second, minute, hour, day, week, month, quarter, year at position 9',
    );
    assert.equal(rejection('dateDiff(event, timestamp, now())').message.startsWith('dateDiff unit must be'), true);
    assert.equal(rejection('toStartOfWeek(timestamp, event)').message, 'toStartOfWeek mode must be an integer constant at position 25');
    assert.equal(rejection('round(1.5, 99)').message, 'round precision must be between -30 and 30 at position 11');
    assert.doesNotThrow(() => validateExpr(parseExpression('round(15, -1)')));
  });

  it('refuses aggregates inside aggregates', () => {
    assert.equal(
      rejection('sum(count())').message,
      "Aggregate function 'count' cannot be used inside aggregate function 'sum' at position 4",
    );
    assert.equal(
      rejection('avg(1 + max(properties.n))').message,
      "Aggregate function 'max' cannot be used inside aggregate function 'avg' at position 8",
    );
  });

  it('refuses bare fields next to an aggregate', () => {
    assert.equal(
      rejection('count() + length(event)').message,
      "Field 'event' must be inside an aggregate function in an expression that aggregates at position 17",
    );
    assert.doesNotThrow(() => validateExpr(parseExpression('if(count() > 1, uniq(event), 0)')));
  });
});

describe('compile results', () => {
  it('names columns by alias or source text and reports types', () => {
    const result = compileSelect(
      [' event ', 'count() AS total', 'avg(properties.n)', 'toDate(timestamp)', 'uuid', 'properties.x = 1', 'min(timestamp)', 'NULL'],
      ctx(),
    );
    assert.deepEqual(result.columns, ['event', 'total', 'avg(properties.n)', 'toDate(timestamp)', 'uuid', 'properties.x = 1', 'min(timestamp)', 'NULL']);
    assert.deepEqual(result.types, ['String', 'Integer', 'Float', 'Date', 'UUID', 'Boolean', 'DateTime', 'Null']);
    assert.equal(result.hasAggregate, true);
    assert.equal(result.groupBy.length, 5);
  });

  it('groups only when something aggregates', () => {
    const result = compileSelect(['event', 'distinct_id'], ctx());
    assert.equal(result.hasAggregate, false);
    assert.deepEqual(result.groupBy, []);
  });

  it('splits aggregate conditions into HAVING', () => {
    const result = compileWhere(["event = 'a'", 'count() > 1', 'distinct_id IS NOT NULL'], ctx());
    assert.ok(result.where?.kind === 'op' && result.where.op === 'and' && result.where.args.length === 2);
    assert.doesNotMatch(JSON.stringify(result.where), /count/);
    assert.match(JSON.stringify(result.having), /"fn":"count"/);
    assert.deepEqual(compileWhere([], ctx()), { where: null, having: null });
  });

  it('tags errors with the parameter and index', () => {
    try {
      compileWhere(["event = 'a'", 'nope = 1'], ctx());
      assert.fail('expected an error');
    } catch (error) {
      assert.ok(error instanceof HogQLError);
      assert.equal(error.attr, 'where');
      assert.equal(error.index, 1);
      assert.equal(error.position, 0);
    }
    assert.throws(() => compileSelect([42], ctx()), (error: unknown) => error instanceof HogQLError && error.attr === 'select');
    assert.throws(() => compileSelect(Array(101).fill('event'), ctx()), /too many expressions/);
  });

  it('rejects bad date literals at compile time', () => {
    assert.throws(() => compileWhere(["timestamp > 'yesterday'"], ctx()), /Cannot parse 'yesterday' as a DateTime at position 12/);
    assert.throws(() => compileWhere(["timestamp > '2024-02-30'"], ctx()), /Cannot parse/);
    assert.throws(() => compileWhere(["event LIKE 'abc\\\\'"], ctx()), /must not end with an unescaped backslash/);
  });

  it('refuses a non-boolean WHERE', () => {
    assert.throws(() => compileWhere(['timestamp'], ctx()), /Expected a boolean expression, got DateTime at position 0/);
  });
});
