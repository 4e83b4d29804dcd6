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
import { type IrExpr, type IrLambda, call, cast, constant, op } from './ir.js';
import { re2SyntaxError } from './re2.js';
import { type HogQLType, type IntervalUnit, INTERVAL_UNITS, isNumeric } from './types.js';

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
  /** Only over a window: `row_number() OVER (…)`. */
  windowOnly?: boolean;
  /** Takes `count(DISTINCT x)`. */
  distinct?: boolean;
  /** ClickHouse accepts these in any letter case (the SQL-standard ones). */
  caseInsensitive?: boolean;
  /** The first argument is a lambda over the items of the array arguments after it. */
  lambda?: boolean;
  /** Extra checks on constant arguments (units, modes), before anything is typed. */
  check?: (call: Call) => void;
  resolve: (args: Arg[], ctx: FunctionContext, call: Call) => IrExpr;
}

export const DATE_DIFF_UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'];

/** The zone a DateTime is read in: the one `toTimeZone` gave it, else the project's. */
const zoneOf = (x: IrExpr, ctx: FunctionContext) =>
  x.kind === 'call' && x.fn === 'toTimeZone' && x.args[1].kind === 'const' ? String(x.args[1].value) : ctx.timeZone;
const tz = (ctx: FunctionContext, x?: IrExpr) => constant(x ? zoneOf(x, ctx) : ctx.timeZone, 'String');
const text1 = (name: string, type: HogQLType) => ([x]: Arg[]) => call(name, [asText(x.ir)], type);
const calendar = (name: string, type: HogQLType) => ([x]: Arg[], ctx: FunctionContext) => call(name, [asDateTime(x.ir, x.at, ctx.timeZone), tz(ctx, x.ir)], type);
const itemOf = (x: IrExpr) => ('item' in x && x.item ? { item: x.item } : {});

const SPECS: FunctionSpec[] = [
  // --- aggregates
  {
    name: 'count',
    minArgs: 0,
    maxArgs: 1,
    aggregate: true,
    caseInsensitive: true,
    distinct: true,
    resolve: (args) => call('count', args.map((a) => a.ir), 'Integer'),
  },
  { name: 'uniqExact', minArgs: 1, maxArgs: 1, aggregate: true, resolve: ([x]) => call('count', [x.ir], 'Integer', { distinct: true }) },
  { name: 'countIf', minArgs: 1, maxArgs: 1, aggregate: true, resolve: ([c]) => call('countIf', [asBool(c.ir, c.at)], 'Integer') },
  { name: 'sumIf', minArgs: 2, maxArgs: 2, aggregate: true, resolve: ([x, c]) => call('sumIf', [asNumber(x.ir), asBool(c.ir, c.at)], x.ir.type === 'Integer' ? 'Integer' : 'Float') },
  { name: 'avgIf', minArgs: 2, maxArgs: 2, aggregate: true, resolve: ([x, c]) => call('avgIf', [asFloat(x.ir), asBool(c.ir, c.at)], 'Float') },
  { name: 'any', minArgs: 1, maxArgs: 1, aggregate: true, resolve: ([x]) => call('any', [x.ir], x.ir.type) },
  { name: 'groupArray', minArgs: 1, maxArgs: 1, aggregate: true, resolve: ([x]) => call('groupArray', [x.ir], 'Array', { item: x.ir.type }) },
  { name: 'groupUniqArray', minArgs: 1, maxArgs: 1, aggregate: true, resolve: ([x]) => call('groupUniqArray', [x.ir], 'Array', { item: x.ir.type }) },
  ...(['argMax', 'argMin'] as const).map(
    (name): FunctionSpec => ({ name, minArgs: 2, maxArgs: 2, aggregate: true, resolve: ([value, key]) => call(name, [value.ir, key.ir], value.ir.type, itemOf(value.ir)) }),
  ),
  { name: 'median', minArgs: 1, maxArgs: 1, aggregate: true, resolve: ([x]) => call('quantile', [asFloat(x.ir)], 'Float', { params: [constant(0.5, 'Float')] }) },
  {
    name: 'quantile',
    minArgs: 1,
    maxArgs: 1,
    aggregate: true,
    check: (c) => quantileLevels(c, 1),
    resolve: ([x], _ctx, c) => call('quantile', [asFloat(x.ir)], 'Float', { params: quantileLevels(c, 1).map((p) => constant(p, 'Float')) }),
  },
  {
    name: 'quantiles',
    minArgs: 1,
    maxArgs: 1,
    aggregate: true,
    check: (c) => quantileLevels(c, Infinity),
    resolve: ([x], _ctx, c) => call('quantiles', [asFloat(x.ir)], 'Array', { item: 'Float', params: quantileLevels(c, Infinity).map((p) => constant(p, 'Float')) }),
  },
  // --- window-only
  { name: 'row_number', minArgs: 0, maxArgs: 0, windowOnly: true, resolve: () => call('row_number', [], 'Integer') },
  { name: 'rank', minArgs: 0, maxArgs: 0, windowOnly: true, resolve: () => call('rank', [], 'Integer') },
  { name: 'dense_rank', minArgs: 0, maxArgs: 0, windowOnly: true, resolve: () => call('dense_rank', [], 'Integer') },
  ...['lagInFrame', 'leadInFrame', 'lag', 'lead'].map(
    (name): FunctionSpec => ({
      name,
      minArgs: 1,
      maxArgs: 2,
      windowOnly: true,
      check: (c) => {
        if (c.args.length === 2) integerConstant(c.args[1], `${name} offset`, 0, 1_000_000);
      },
      resolve: ([x, n]) => call(name.startsWith('lag') ? 'lag' : 'lead', n ? [x.ir, n.ir] : [x.ir], x.ir.type),
    }),
  ),
  { name: 'first_value', minArgs: 1, maxArgs: 1, windowOnly: true, resolve: ([x]) => call('first_value', [x.ir], x.ir.type) },
  { name: 'last_value', minArgs: 1, maxArgs: 1, windowOnly: true, resolve: ([x]) => call('last_value', [x.ir], x.ir.type) },
  { name: 'uniq', minArgs: 1, maxArgs: 1, aggregate: true, resolve: ([x]) => call('count', [x.ir], 'Integer', { distinct: true }) },
  { name: 'sum', minArgs: 1, maxArgs: 1, aggregate: true, caseInsensitive: true, resolve: ([x]) => numericAggregate('sum', x.ir) },
  { name: 'avg', minArgs: 1, maxArgs: 1, aggregate: true, caseInsensitive: true, resolve: ([x]) => call('avg', [asFloat(x.ir)], 'Float') },
  { name: 'min', minArgs: 1, maxArgs: 1, aggregate: true, caseInsensitive: true, resolve: ([x]) => call('min', [x.ir], x.ir.type) },
  { name: 'max', minArgs: 1, maxArgs: 1, aggregate: true, caseInsensitive: true, resolve: ([x]) => call('max', [x.ir], x.ir.type) },
  // --- dates
  { name: 'toDate', minArgs: 1, maxArgs: 1, resolve: ([x], ctx) => asDate(x.ir, x.at, zoneOf(x.ir, ctx)) },
  {
    name: 'toDateTime',
    minArgs: 1,
    maxArgs: 2,
    check: (c) => c.args[1] && timeZoneConstant(c.args[1]),
    // A second argument says in which zone text without an offset is read.
    resolve: ([x, zone], ctx) => asDateTime(x.ir, x.at, zone ? String((zone.ir as { value: string }).value) : ctx.timeZone),
  },
  {
    name: 'toTimeZone',
    minArgs: 2,
    maxArgs: 2,
    check: (c) => timeZoneConstant(c.args[1]),
    // The same instant; calendar functions applied to it work in this zone (zoneOf).
    resolve: ([x, zone], ctx) => call('toTimeZone', [asDateTime(x.ir, x.at, ctx.timeZone), zone.ir], 'DateTime'),
  },
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
      return call('toStartOfWeek', [asDateTime(x.ir, x.at, ctx.timeZone), tz(ctx, x.ir), constant(monday ? 1 : 0, 'Integer')], 'Date');
    },
  },
  { name: 'toStartOfMonth', minArgs: 1, maxArgs: 1, resolve: calendar('toStartOfMonth', 'Date') },
  { name: 'toStartOfMinute', minArgs: 1, maxArgs: 1, resolve: ([x], ctx) => truncate('minute', x, ctx) },
  { name: 'toStartOfQuarter', minArgs: 1, maxArgs: 1, resolve: ([x], ctx) => cast(truncate('quarter', x, ctx), 'Date') },
  { name: 'toStartOfYear', minArgs: 1, maxArgs: 1, resolve: ([x], ctx) => cast(truncate('year', x, ctx), 'Date') },
  {
    name: 'dateTrunc',
    minArgs: 2,
    maxArgs: 2,
    caseInsensitive: true,
    check: (c) => unitConstant(c.args[0], 'dateTrunc unit', TRUNC_UNITS),
    // ClickHouse's weeks here start on Monday, whatever the project says.
    resolve: ([unit, x], ctx) => truncate(String((unit.ir as { value: string }).value).toLowerCase() as IntervalUnit, x, ctx),
  },
  ...(
    [
      ['toYear', 'year'],
      ['toQuarter', 'quarter'],
      ['toMonth', 'month'],
      ['toDayOfMonth', 'day'],
      ['toHour', 'hour'],
      ['toMinute', 'minute'],
      ['toSecond', 'second'],
      ['toDayOfWeek', 'isodow'],
      ['toDayOfYear', 'doy'],
    ] as const
  ).map(
    ([name, part]): FunctionSpec => ({
      name,
      minArgs: 1,
      maxArgs: 1,
      resolve: ([x], ctx) => call('datePart', [constant(part, 'String'), asDateTime(x.ir, x.at, ctx.timeZone), tz(ctx, x.ir)], 'Integer'),
    }),
  ),
  {
    name: 'toUnixTimestamp',
    minArgs: 1,
    maxArgs: 1,
    resolve: ([x], ctx) => call('toInt', [asFloat(asDateTime(x.ir, x.at, ctx.timeZone))], 'Integer'),
  },
  ...INTERVAL_UNITS.map(
    (unit): FunctionSpec => ({
      name: `toInterval${unit[0].toUpperCase()}${unit.slice(1)}`,
      minArgs: 1,
      maxArgs: 1,
      resolve: ([n]) => ({ kind: 'interval', amount: asNumber(n.ir), unit, type: 'Interval' }),
    }),
  ),
  ...(['dateAdd', 'dateSub'] as const).map(
    (name): FunctionSpec => ({
      name,
      minArgs: 3,
      maxArgs: 3,
      caseInsensitive: true,
      check: (c) => unitConstant(c.args[0], `${name} unit`, INTERVAL_UNITS),
      resolve: ([unit, n, x], ctx) => {
        const interval: IrExpr = { kind: 'interval', amount: asNumber(n.ir), unit: String((unit.ir as { value: string }).value).toLowerCase() as IntervalUnit, type: 'Interval' };
        return op(name === 'dateAdd' ? '+' : '-', [asDateTime(x.ir, x.at, ctx.timeZone), interval], 'DateTime');
      },
    }),
  ),
  {
    name: 'yesterday',
    minArgs: 0,
    maxArgs: 0,
    resolve: (_args, ctx) => constant(localDateText(ctx.now.getTime() - 86_400_000, ctx.timeZone), 'Date'),
  },
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
  {
    name: 'length',
    minArgs: 1,
    maxArgs: 1,
    caseInsensitive: true,
    // An array's length is its number of elements; anything else is text, measured in bytes.
    resolve: ([x]) => (x.ir.type === 'Array' ? call('arrayLength', [x.ir], 'Integer') : call('length', [asText(x.ir)], 'Integer')),
  },
  {
    name: 'concat',
    minArgs: 1,
    maxArgs: Infinity,
    caseInsensitive: true,
    // Like HogQL, NULL arguments count as empty strings.
    resolve: (args) => call('concat', args.map((a) => asText(a.ir)), 'String'),
  },
  { name: 'empty', minArgs: 1, maxArgs: 1, resolve: text1('empty', 'Boolean') },
  {
    name: 'substring',
    minArgs: 2,
    maxArgs: 3,
    caseInsensitive: true,
    resolve: ([x, from, length]) => call('substring', [asText(x.ir), asNumber(from.ir), ...(length ? [asNumber(length.ir)] : [])], 'String'),
  },
  { name: 'replaceAll', minArgs: 3, maxArgs: 3, resolve: ([x, a, b]) => call('replaceAll', [asText(x.ir), asText(a.ir), asText(b.ir)], 'String') },
  { name: 'trim', minArgs: 1, maxArgs: 1, caseInsensitive: true, resolve: text1('trim', 'String') },
  {
    name: 'match',
    minArgs: 2,
    maxArgs: 2,
    check: (c) => re2Constant(c.args[1]),
    resolve: ([x, pattern]) => call('match', [asText(x.ir), asText(pattern.ir)], 'Boolean'),
  },
  {
    name: 'extract',
    minArgs: 2,
    maxArgs: 2,
    check: (c) => re2Constant(c.args[1]),
    resolve: ([x, pattern]) => call('extract', [asText(x.ir), asText(pattern.ir)], 'String'),
  },
  {
    name: 'replaceRegexpAll',
    minArgs: 3,
    maxArgs: 3,
    check: (c) => re2Constant(c.args[1]),
    resolve: ([x, pattern, by]) => call('replaceRegexpAll', [asText(x.ir), asText(pattern.ir), asText(by.ir)], 'String'),
  },
  ...(
    [
      ['JSONExtractString', 'String'],
      ['JSONExtractRaw', 'String'],
      ['JSONExtractInt', 'Integer'],
      ['JSONExtractFloat', 'Float'],
      ['JSONExtractBool', 'Boolean'],
      ['JSONHas', 'Boolean'],
    ] as const
  ).map(
    ([name, type]): FunctionSpec => ({
      name,
      minArgs: 1,
      maxArgs: 20,
      // Keys are constants: a key path becomes one JSON pointer the dialect binds.
      check: (c) => c.args.slice(1).forEach((arg) => stringConstant(arg, `${name} key`)),
      resolve: ([json, ...keys]) => call(name, [asText(json.ir), ...keys.map((k) => k.ir)], type),
    }),
  ),
  { name: 'notEmpty', minArgs: 1, maxArgs: 1, resolve: text1('notEmpty', 'Boolean') },
  // --- arrays (ClickHouse argument order: the lambda first)
  {
    name: 'arrayMap',
    minArgs: 2,
    maxArgs: 2,
    lambda: true,
    resolve: ([fn, list]) => call('arrayMap', [fn.ir, list.ir], 'Array', { item: fn.ir.type }),
  },
  {
    name: 'arrayFilter',
    minArgs: 2,
    maxArgs: 2,
    lambda: true,
    resolve: ([fn, list]) => call('arrayFilter', [predicate(fn), list.ir], 'Array', itemOf(list.ir)),
  },
  { name: 'arrayExists', minArgs: 2, maxArgs: 2, lambda: true, resolve: ([fn, list]) => call('arrayExists', [predicate(fn), list.ir], 'Boolean') },
  {
    name: 'arrayJoin',
    minArgs: 1,
    maxArgs: 1,
    resolve: ([list]) => call('arrayJoin', [arrayArg(list, 'arrayJoin')], itemType(list.ir)),
  },
  {
    name: 'has',
    minArgs: 2,
    maxArgs: 2,
    resolve: ([list, x]) => call('has', [arrayArg(list, 'has'), toItem(x.ir, list.ir)], 'Boolean'),
  },
  {
    name: 'indexOf',
    minArgs: 2,
    maxArgs: 2,
    // 1-based; 0 when absent, as in ClickHouse.
    resolve: ([list, x]) => call('indexOf', [arrayArg(list, 'indexOf'), toItem(x.ir, list.ir)], 'Integer'),
  },
  { name: 'arraySort', minArgs: 1, maxArgs: 1, resolve: ([list]) => call('arraySort', [arrayArg(list, 'arraySort')], 'Array', itemOf(list.ir)) },
  { name: 'arrayDistinct', minArgs: 1, maxArgs: 1, resolve: ([list]) => call('arrayDistinct', [arrayArg(list, 'arrayDistinct')], 'Array', itemOf(list.ir)) },
  {
    name: 'splitByChar',
    minArgs: 2,
    maxArgs: 2,
    check: (c) => {
      if ([...stringConstant(c.args[0], 'splitByChar separator')].length !== 1) throw errorAt('splitByChar separator must be one character', c.args[0].start);
    },
    resolve: ([separator, s]) => call('splitByChar', [separator.ir, asText(s.ir)], 'Array', { item: 'String' }),
  },
  {
    name: 'JSONExtractArrayRaw',
    minArgs: 1,
    maxArgs: 20,
    check: (c) => c.args.slice(1).forEach((arg) => stringConstant(arg, 'JSONExtractArrayRaw key')),
    // Each item's JSON text; [] where the value is missing or not an array.
    resolve: ([json, ...keys]) => call('JSONExtractArrayRaw', [asText(json.ir), ...keys.map((k) => k.ir)], 'Array', { item: 'String' }),
  },
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
  { name: 'ifNull', minArgs: 2, maxArgs: 2, caseInsensitive: true, resolve: (args, ctx) => {
      const { exprs, type } = unify(args.map((a) => a.ir), args.map((a) => a.at), ctx.timeZone);
      return call('coalesce', exprs, type);
    } },
  { name: 'isNull', minArgs: 1, maxArgs: 1, resolve: ([x]) => op('isNull', [x.ir]) },
  { name: 'isNotNull', minArgs: 1, maxArgs: 1, resolve: ([x]) => op('isNotNull', [x.ir]) },
  {
    name: 'multiIf',
    minArgs: 3,
    maxArgs: 201,
    check: (c) => {
      if (c.args.length % 2 === 0) throw errorAt("Function 'multiIf' takes an odd number of arguments (conditions and values, then the default)", c.start);
    },
    resolve: (args, ctx) => {
      const values = args.filter((_a, i) => i % 2 === 1 || i === args.length - 1);
      const { exprs, type } = unify(values.map((a) => a.ir), values.map((a) => a.at), ctx.timeZone);
      const branches: Array<[IrExpr, IrExpr]> = [];
      for (let i = 0; i + 1 < args.length; i += 2) branches.push([asBool(args[i].ir, args[i].at), exprs[i / 2]]);
      return { kind: 'case', branches, otherwise: exprs[exprs.length - 1], type };
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

function arrayArg(x: Arg, fn: string): IrExpr {
  if (x.ir.type !== 'Array' && x.ir.type !== 'Null') throw errorAt(`Function '${fn}' needs an array, got ${x.ir.type}`, x.at);
  return x.ir;
}

const itemType = (list: IrExpr): HogQLType => ('item' in list && list.item ? list.item : 'Any');

/** A value compared with an array's items, brought to their type. */
function toItem(x: IrExpr, list: IrExpr): IrExpr {
  const item = itemType(list);
  if (item === 'Any' || x.type === item || x.type === 'Null') return x;
  if (item === 'String') return asText(x);
  if (isNumeric(item)) return isNumeric(x.type) ? asFloat(x) : asNumber(x);
  return cast(x, item);
}

/** A lambda whose body is a condition. */
function predicate(fn: Arg): IrExpr {
  const lambda = fn.ir as IrLambda;
  return { ...lambda, body: asBool(lambda.body, fn.at), type: 'Boolean' };
}

/** A time zone argument: a constant name the runtime knows. */
function timeZoneConstant(expr: Expr): void {
  const zone = stringConstant(expr, 'Time zone');
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    throw errorAt(`Unknown time zone ${JSON.stringify(zone.slice(0, 60))}`, expr.start);
  }
}

const TRUNC_UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'];

/** The start of the `unit` containing x, on the wall clock of the project's zone. */
function truncate(unit: IntervalUnit, x: Arg, ctx: FunctionContext): IrExpr {
  return call('dateTrunc', [constant(unit, 'String'), asDateTime(x.ir, x.at, ctx.timeZone), tz(ctx, x.ir)], 'DateTime');
}

function unitConstant(expr: Expr, what: string, units: readonly string[]): void {
  const unit = stringConstant(expr, what).toLowerCase();
  if (!units.includes(unit)) throw errorAt(`${what} must be one of ${units.join(', ')}`, expr.start);
}

/** A constant RE2 pattern is checked now, so a bad one is a 400 at its position. */
function re2Constant(expr: Expr): void {
  if (expr.kind !== 'constant' || typeof expr.value !== 'string') return;
  const problem = re2SyntaxError(expr.value);
  if (problem) throw errorAt(`Invalid regular expression: ${problem}`, expr.start);
}

/** The levels of `quantile(0.9)(x)` / `quantiles(0.5, 0.9)(x)`: constants in [0, 1]. */
function quantileLevels(c: Call, max: number): number[] {
  const params = c.params ?? [];
  if (params.length === 0 && c.name.toLowerCase() !== 'median') throw errorAt(`${c.name} needs its level as a parameter: ${c.name}(0.9)(x)`, c.start);
  if (params.length > max) throw errorAt(`${c.name} takes ${max} parameter`, c.start);
  return params.map((param) => {
    if (param.kind !== 'constant' || typeof param.value !== 'number' || param.value < 0 || param.value > 1) {
      throw errorAt(`${c.name} level must be a number between 0 and 1`, param.start);
    }
    return param.value;
  });
}

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

