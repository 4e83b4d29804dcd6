/**
 * The whitelist of callable functions: arity, aggregate flag, and how each prints to
 * DuckDB with ClickHouse-like results. SQL text here is fixed; user values arrive only as
 * already-printed operands.
 */
import type { Call, Expr } from './ast.js';
import { asBool, asDate, asDouble, asText, asTimestamp, unify } from './coerce.js';
import { toSqlTimestamp } from './dates.js';
import { errorAt } from './errors.js';
import { type Operand, computed } from './operand.js';
import type { ParamSink } from './params.js';

export interface PrintTools {
  params: ParamSink;
  now: Date;
}

export interface FunctionSpec {
  /** Canonical (ClickHouse) spelling. */
  name: string;
  minArgs: number;
  maxArgs: number;
  aggregate?: boolean;
  /** ClickHouse accepts these in any letter case (the SQL-standard ones). */
  caseInsensitive?: boolean;
  /** Extra checks on constant arguments (units, modes). */
  check?: (call: Call) => void;
  print: (args: Operand[], tools: PrintTools, call: Call) => Operand;
}

const DATE_DIFF_UNITS: Record<string, string> = {
  second: 'second',
  minute: 'minute',
  hour: 'hour',
  day: 'day',
  week: 'week',
  month: 'month',
  quarter: 'quarter',
  year: 'year',
};

const SPECS: FunctionSpec[] = [
  // --- aggregates
  {
    name: 'count',
    minArgs: 0,
    maxArgs: 1,
    aggregate: true,
    caseInsensitive: true,
    print: (args, _tools, call) => computed(args.length === 0 ? 'count(*)' : `count(${args[0].sql})`, 'Integer', call.start),
  },
  {
    name: 'uniq',
    minArgs: 1,
    maxArgs: 1,
    aggregate: true,
    print: ([x], _tools, call) => computed(`count(DISTINCT ${x.sql})`, 'Integer', call.start),
  },
  {
    name: 'sum',
    minArgs: 1,
    maxArgs: 1,
    aggregate: true,
    caseInsensitive: true,
    // DuckDB sums integers as HUGEINT; ClickHouse gives Int64.
    print: ([x], _tools, call) =>
      x.type === 'Integer'
        ? computed(`TRY_CAST(sum(${x.sql}) AS BIGINT)`, 'Integer', call.start)
        : computed(`sum(${asDouble(x)})`, 'Float', call.start),
  },
  {
    name: 'avg',
    minArgs: 1,
    maxArgs: 1,
    aggregate: true,
    caseInsensitive: true,
    print: ([x], _tools, call) => computed(`avg(${asDouble(x)})`, 'Float', call.start),
  },
  {
    name: 'min',
    minArgs: 1,
    maxArgs: 1,
    aggregate: true,
    caseInsensitive: true,
    print: ([x], _tools, call) => computed(`min(${x.sql})`, x.type, call.start),
  },
  {
    name: 'max',
    minArgs: 1,
    maxArgs: 1,
    aggregate: true,
    caseInsensitive: true,
    print: ([x], _tools, call) => computed(`max(${x.sql})`, x.type, call.start),
  },
  // --- dates
  {
    name: 'toDate',
    minArgs: 1,
    maxArgs: 1,
    print: ([x], { params }, call) => computed(asDate(x, params), 'Date', call.start),
  },
  {
    name: 'toDateTime',
    minArgs: 1,
    maxArgs: 1,
    print: ([x], { params }, call) => computed(asTimestamp(x, params), 'DateTime', call.start),
  },
  {
    name: 'toStartOfHour',
    minArgs: 1,
    maxArgs: 1,
    print: ([x], { params }, call) => computed(`date_trunc('hour', ${asTimestamp(x, params)})`, 'DateTime', call.start),
  },
  {
    name: 'toStartOfDay',
    minArgs: 1,
    maxArgs: 1,
    print: ([x], { params }, call) => computed(`date_trunc('day', ${asTimestamp(x, params)})`, 'DateTime', call.start),
  },
  {
    name: 'toStartOfWeek',
    minArgs: 1,
    maxArgs: 2,
    check: (call) => {
      if (call.args.length === 2) integerConstant(call.args[1], 'toStartOfWeek mode', 0, 9);
    },
    // ClickHouse mode 0 (default) starts weeks on Sunday; odd modes start on Monday.
    print: (args, { params }, call) => {
      const ts = asTimestamp(args[0], params);
      const mode = args.length === 2 ? Number(args[1].constant!.value) : 0;
      const sql =
        mode % 2 === 1
          ? `CAST(date_trunc('week', ${ts}) AS DATE)`
          : `CAST(CAST(${ts} AS DATE) - CAST(dayofweek(${ts}) AS INTEGER) AS DATE)`;
      return computed(sql, 'Date', call.start);
    },
  },
  {
    name: 'toStartOfMonth',
    minArgs: 1,
    maxArgs: 1,
    print: ([x], { params }, call) =>
      computed(`CAST(date_trunc('month', ${asTimestamp(x, params)}) AS DATE)`, 'Date', call.start),
  },
  {
    name: 'now',
    minArgs: 0,
    maxArgs: 0,
    caseInsensitive: true,
    print: (_args, { params, now }, call) =>
      computed(`CAST(${params.add(toSqlTimestamp(now))} AS TIMESTAMP)`, 'DateTime', call.start),
  },
  {
    name: 'today',
    minArgs: 0,
    maxArgs: 0,
    caseInsensitive: true,
    print: (_args, { params, now }, call) =>
      computed(`CAST(CAST(${params.add(toSqlTimestamp(now))} AS TIMESTAMP) AS DATE)`, 'Date', call.start),
  },
  {
    name: 'dateDiff',
    minArgs: 3,
    maxArgs: 3,
    caseInsensitive: true,
    check: (call) => {
      const unit = call.args[0];
      if (unit.kind !== 'constant' || typeof unit.value !== 'string' || !Object.hasOwn(DATE_DIFF_UNITS, unit.value.toLowerCase())) {
        throw errorAt(`dateDiff unit must be one of ${Object.keys(DATE_DIFF_UNITS).join(', ')}`, unit.start);
      }
    },
    // Counts unit boundaries crossed between the two dates, as ClickHouse does.
    print: ([unit, from, to], { params }, call) => {
      const name = DATE_DIFF_UNITS[String(unit.constant!.value).toLowerCase()];
      return computed(
        `date_diff('${name}', ${asTimestamp(from, params)}, ${asTimestamp(to, params)})`,
        'Integer',
        call.start,
      );
    },
  },
  // --- conversions and strings
  {
    name: 'toString',
    minArgs: 1,
    maxArgs: 1,
    print: ([x], _tools, call) => computed(asText(x), 'String', call.start),
  },
  {
    name: 'toInt',
    minArgs: 1,
    maxArgs: 1,
    // Truncates toward zero like ClickHouse; unparsable text gives NULL.
    print: ([x], _tools, call) =>
      computed(x.type === 'Integer' ? x.sql : `TRY_CAST(trunc(${asDouble(x)}) AS BIGINT)`, 'Integer', call.start),
  },
  {
    name: 'toFloat',
    minArgs: 1,
    maxArgs: 1,
    print: ([x], _tools, call) => computed(asDouble(x), 'Float', call.start),
  },
  {
    name: 'lower',
    minArgs: 1,
    maxArgs: 1,
    caseInsensitive: true,
    print: ([x], _tools, call) => computed(`lower(${asText(x)})`, 'String', call.start),
  },
  {
    name: 'upper',
    minArgs: 1,
    maxArgs: 1,
    caseInsensitive: true,
    print: ([x], _tools, call) => computed(`upper(${asText(x)})`, 'String', call.start),
  },
  {
    name: 'length',
    minArgs: 1,
    maxArgs: 1,
    caseInsensitive: true,
    // ClickHouse counts bytes.
    print: ([x], _tools, call) => computed(`strlen(${asText(x)})`, 'Integer', call.start),
  },
  {
    name: 'concat',
    minArgs: 1,
    maxArgs: Infinity,
    caseInsensitive: true,
    // Like HogQL, NULL arguments count as empty strings (DuckDB's concat skips them).
    print: (args, _tools, call) => computed(`concat(${args.map(asText).join(', ')})`, 'String', call.start),
  },
  {
    name: 'empty',
    minArgs: 1,
    maxArgs: 1,
    print: ([x], _tools, call) => computed(`(strlen(${asText(x)}) = 0)`, 'Boolean', call.start),
  },
  {
    name: 'notEmpty',
    minArgs: 1,
    maxArgs: 1,
    print: ([x], _tools, call) => computed(`(strlen(${asText(x)}) > 0)`, 'Boolean', call.start),
  },
  // --- logic and numbers
  {
    name: 'coalesce',
    minArgs: 1,
    maxArgs: Infinity,
    caseInsensitive: true,
    print: (args, { params }, call) => {
      const { sql, type } = unify(args, params);
      return computed(`coalesce(${sql.join(', ')})`, type, call.start);
    },
  },
  {
    name: 'if',
    minArgs: 3,
    maxArgs: 3,
    caseInsensitive: true,
    print: ([condition, then, otherwise], { params }, call) => {
      const { sql, type } = unify([then, otherwise], params);
      return computed(`(CASE WHEN ${asBool(condition)} THEN ${sql[0]} ELSE ${sql[1]} END)`, type, call.start);
    },
  },
  {
    name: 'round',
    minArgs: 1,
    maxArgs: 2,
    caseInsensitive: true,
    check: (call) => {
      if (call.args.length === 2) integerConstant(call.args[1], 'round precision', -30, 30);
    },
    print: ([x, digits], _tools, call) =>
      computed(
        digits ? `round(${asDouble(x)}, CAST(${digits.sql} AS INTEGER))` : `round(${asDouble(x)})`,
        'Float',
        call.start,
      ),
  },
  {
    name: 'abs',
    minArgs: 1,
    maxArgs: 1,
    caseInsensitive: true,
    print: ([x], _tools, call) =>
      x.type === 'Integer'
        ? computed(`TRY(abs(${x.sql}))`, 'Integer', call.start)
        : computed(`abs(${asDouble(x)})`, 'Float', call.start),
  },
];

const EXACT = new Map(SPECS.map((spec) => [spec.name, spec]));
const FOLDED = new Map(SPECS.filter((spec) => spec.caseInsensitive).map((spec) => [spec.name.toLowerCase(), spec]));

export function findFunction(name: string): FunctionSpec | undefined {
  return EXACT.get(name) ?? FOLDED.get(name.toLowerCase());
}

export const FUNCTION_NAMES: readonly string[] = SPECS.map((spec) => spec.name);

/** An integer literal, possibly negative, within [min, max]. */
function integerConstant(expr: Expr, what: string, min: number, max: number): number {
  const negative = expr.kind === 'negate';
  const inner = negative ? expr.expr : expr;
  if (inner.kind !== 'constant' || typeof inner.value !== 'number' || !inner.integer) {
    throw errorAt(`${what} must be an integer constant`, expr.start);
  }
  const value = negative ? -inner.value : inner.value;
  if (value < min || value > max) throw errorAt(`${what} must be between ${min} and ${max}`, expr.start);
  return value;
}
