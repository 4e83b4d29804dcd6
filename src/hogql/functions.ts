/**
 * The functions HogQL text may call: arity, whether they aggregate, checks on constant
 * arguments, and how their arguments and result are typed. Dialect-neutral: each builds an IR
 * call that a dialect prints (dialects/<name>/functions.ts). A name not listed here can never
 * reach SQL.
 */
import type { Call, Expr } from './ast.js';
import { asBool, asDate, asDateTime, asFloat, asNumber, asText, localDateText, unify } from './coerce.js';
import { timestampText } from './dates.js';
import { errorAt } from './errors.js';
import { type IrExpr, call, constant } from './ir.js';
import type { HogQLType } from './types.js';

/** A resolved argument with the source offset errors point at. */
export interface Arg {
  ir: IrExpr;
  at: number;
}

/** What typing a call may need from the request. */
export interface FunctionContext {
  /** The project's time zone: calendar functions work in it unless given another. */
  timeZone: string;
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
  /** Extra checks on constant arguments (units, modes), before anything is typed. */
  check?: (call: Call) => void;
  resolve: (args: Arg[], ctx: FunctionContext, call: Call) => IrExpr;
}

export const DATE_DIFF_UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'];

const tz = (ctx: FunctionContext) => constant(ctx.timeZone, 'String');
const text1 = (name: string, type: HogQLType) => ([x]: Arg[]) => call(name, [asText(x.ir)], type);
const calendar = (name: string, type: HogQLType) => ([x]: Arg[], ctx: FunctionContext) => call(name, [asDateTime(x.ir, x.at, ctx.timeZone), tz(ctx)], type);

const SPECS: FunctionSpec[] = [
  // --- aggregates
  {
    name: 'count',
    minArgs: 0,
    maxArgs: 1,
    aggregate: true,
    caseInsensitive: true,
    resolve: (args) => call('count', args.map((a) => a.ir), 'Integer'),
  },
  { name: 'uniq', minArgs: 1, maxArgs: 1, aggregate: true, resolve: ([x]) => call('count', [x.ir], 'Integer', { distinct: true }) },
  { name: 'sum', minArgs: 1, maxArgs: 1, aggregate: true, caseInsensitive: true, resolve: ([x]) => numericAggregate('sum', x.ir) },
  { name: 'avg', minArgs: 1, maxArgs: 1, aggregate: true, caseInsensitive: true, resolve: ([x]) => call('avg', [asFloat(x.ir)], 'Float') },
  { name: 'min', minArgs: 1, maxArgs: 1, aggregate: true, caseInsensitive: true, resolve: ([x]) => call('min', [x.ir], x.ir.type) },
  { name: 'max', minArgs: 1, maxArgs: 1, aggregate: true, caseInsensitive: true, resolve: ([x]) => call('max', [x.ir], x.ir.type) },
  // --- dates
  { name: 'toDate', minArgs: 1, maxArgs: 1, resolve: ([x], ctx) => asDate(x.ir, x.at, ctx.timeZone) },
  { name: 'toDateTime', minArgs: 1, maxArgs: 1, resolve: ([x], ctx) => asDateTime(x.ir, x.at, ctx.timeZone) },
  { name: 'toStartOfHour', minArgs: 1, maxArgs: 1, resolve: calendar('toStartOfHour', 'DateTime') },
  { name: 'toStartOfDay', minArgs: 1, maxArgs: 1, resolve: calendar('toStartOfDay', 'DateTime') },
  {
    name: 'toStartOfWeek',
    minArgs: 1,
    maxArgs: 2,
    check: (c) => {
      if (c.args.length === 2) integerConstant(c.args[1], 'toStartOfWeek mode', 0, 9);
    },
    // ClickHouse mode 0 (default) starts weeks on Sunday; odd modes start on Monday.
    resolve: ([x, mode], ctx) => {
      const monday = mode !== undefined && Number((mode.ir as { value: number }).value) % 2 === 1;
      return call('toStartOfWeek', [asDateTime(x.ir, x.at, ctx.timeZone), tz(ctx), constant(monday ? 1 : 0, 'Integer')], 'Date');
    },
  },
  { name: 'toStartOfMonth', minArgs: 1, maxArgs: 1, resolve: calendar('toStartOfMonth', 'Date') },
  {
    name: 'now',
    minArgs: 0,
    maxArgs: 0,
    caseInsensitive: true,
    resolve: (_args, ctx) => constant(timestampText(ctx.now), 'DateTime'),
  },
  {
    name: 'today',
    minArgs: 0,
    maxArgs: 0,
    caseInsensitive: true,
    resolve: (_args, ctx) => constant(localDateText(ctx.now.getTime(), ctx.timeZone), 'Date'),
  },
  {
    name: 'dateDiff',
    minArgs: 3,
    maxArgs: 3,
    caseInsensitive: true,
    check: (c) => {
      const unit = c.args[0];
      if (unit.kind !== 'constant' || typeof unit.value !== 'string' || !DATE_DIFF_UNITS.includes(unit.value.toLowerCase())) {
        throw errorAt(`dateDiff unit must be one of ${DATE_DIFF_UNITS.join(', ')}`, unit.start);
      }
    },
    // Counts unit boundaries crossed between the two dates, as ClickHouse does.
    resolve: ([unit, from, to], ctx) =>
      call(
        'dateDiff',
        [constant(String((unit.ir as { value: string }).value).toLowerCase(), 'String'), asDateTime(from.ir, from.at, ctx.timeZone), asDateTime(to.ir, to.at, ctx.timeZone), tz(ctx)],
        'Integer',
      ),
  },
  // --- conversions and strings
  { name: 'toString', minArgs: 1, maxArgs: 1, resolve: ([x]) => asText(x.ir) },
  {
    name: 'toInt',
    minArgs: 1,
    maxArgs: 1,
    // Truncates toward zero like ClickHouse; unparsable text gives NULL.
    resolve: ([x]) => (x.ir.type === 'Integer' ? x.ir : call('toInt', [asFloat(x.ir)], 'Integer')),
  },
  { name: 'toFloat', minArgs: 1, maxArgs: 1, resolve: ([x]) => asFloat(x.ir) },
  { name: 'lower', minArgs: 1, maxArgs: 1, caseInsensitive: true, resolve: text1('lower', 'String') },
  { name: 'upper', minArgs: 1, maxArgs: 1, caseInsensitive: true, resolve: text1('upper', 'String') },
  // ClickHouse counts bytes.
  { name: 'length', minArgs: 1, maxArgs: 1, caseInsensitive: true, resolve: text1('length', 'Integer') },
  {
    name: 'concat',
    minArgs: 1,
    maxArgs: Infinity,
    caseInsensitive: true,
    // Like HogQL, NULL arguments count as empty strings.
    resolve: (args) => call('concat', args.map((a) => asText(a.ir)), 'String'),
  },
  { name: 'empty', minArgs: 1, maxArgs: 1, resolve: text1('empty', 'Boolean') },
  { name: 'notEmpty', minArgs: 1, maxArgs: 1, resolve: text1('notEmpty', 'Boolean') },
  // --- logic and numbers
  {
    name: 'coalesce',
    minArgs: 1,
    maxArgs: Infinity,
    caseInsensitive: true,
    resolve: (args, ctx) => {
      const { exprs, type } = unify(args.map((a) => a.ir), args.map((a) => a.at), ctx.timeZone);
      return call('coalesce', exprs, type);
    },
  },
  {
    name: 'if',
    minArgs: 3,
    maxArgs: 3,
    caseInsensitive: true,
    resolve: ([condition, then, otherwise], ctx) => {
      const { exprs, type } = unify([then.ir, otherwise.ir], [then.at, otherwise.at], ctx.timeZone);
      return { kind: 'case', branches: [[asBool(condition.ir, condition.at), exprs[0]]], otherwise: exprs[1], type };
    },
  },
  {
    name: 'round',
    minArgs: 1,
    maxArgs: 2,
    caseInsensitive: true,
    check: (c) => {
      if (c.args.length === 2) integerConstant(c.args[1], 'round precision', -30, 30);
    },
    resolve: ([x, digits]) => call('round', digits ? [asFloat(x.ir), digits.ir] : [asFloat(x.ir)], 'Float'),
  },
  {
    name: 'abs',
    minArgs: 1,
    maxArgs: 1,
    caseInsensitive: true,
    resolve: ([x]) => {
      const value = asNumber(x.ir);
      return call('abs', [value], value.type);
    },
  },
];

/** sum: integers stay integers (Int64 in ClickHouse), anything else sums as floats. */
function numericAggregate(name: string, x: IrExpr): IrExpr {
  return x.type === 'Integer' ? call(name, [x], 'Integer') : call(name, [asFloat(x)], 'Float');
}

const EXACT = new Map(SPECS.map((spec) => [spec.name, spec]));
const FOLDED = new Map(SPECS.filter((spec) => spec.caseInsensitive).map((spec) => [spec.name.toLowerCase(), spec]));

export function findFunction(name: string): FunctionSpec | undefined {
  return EXACT.get(name) ?? FOLDED.get(name.toLowerCase());
}

export const FUNCTION_NAMES: readonly string[] = SPECS.map((spec) => spec.name);

/** An integer literal, possibly negative, within [min, max]. */
export function integerConstant(expr: Expr, what: string, min: number, max: number): number {
  const negative = expr.kind === 'negate';
  const inner = negative ? expr.expr : expr;
  if (inner.kind !== 'constant' || typeof inner.value !== 'number' || !inner.integer) {
    throw errorAt(`${what} must be an integer constant`, expr.start);
  }
  const value = negative ? -inner.value : inner.value;
  if (value < min || value > max) throw errorAt(`${what} must be between ${min} and ${max}`, expr.start);
  return value;
}

/** A string literal argument, e.g. a time zone or a unit. */
export function stringConstant(expr: Expr, what: string): string {
  if (expr.kind !== 'constant' || typeof expr.value !== 'string') throw errorAt(`${what} must be a string constant`, expr.start);
  return expr.value;
}

