/**
 * HogQL functions in the ClickHouse 18.16 dialect. DateTime values are Int64 microseconds
 * (values.ts): calendar functions read them as a DateTime in the time zone, then give µs back.
 * A function 18.16 lacks, or one whose argument must be a constant there, is refused (400).
 */
import type { IrCall, IrConst, IrExpr } from '../ir.js';
import { intFromFloat, jsonRaw, jsonText, roundHalfAway, unsupported, withoutJsonSpaces, type SqlWriter } from './sql.js';
import { stringLiteral } from './values.js';

type Print = (p: SqlWriter, c: IrCall, args: string[]) => string;

function constText(expr: IrExpr | undefined, what: string): string {
  if (!expr || expr.kind !== 'const' || typeof expr.value !== 'string') throw unsupported(`A ${what} that is not a constant`);
  return expr.value;
}

const tzArg = (c: IrCall, index: number) => stringLiteral(constText(c.args[index], 'time zone'));
/** The µs value as a DateTime in the call's time zone (wall clock for the calendar functions). */
const wall = (x: string, tz: string) => `toDateTime(intDiv(${x}, 1000000), ${tz})`;
const micros = (dateTime: string) => `(toInt64(toUnixTimestamp(${dateTime})) * 1000000)`;
const UNITS = /^(second|minute|hour|day|week|month|quarter|year)$/;

/** A regular expression argument: 18.16 compiles only constant patterns. */
function constantPattern(c: IrCall, index: number): void {
  if (c.args[index]?.kind !== 'const') throw unsupported('A regular expression that is not a constant');
}

/** Flags set at a pattern's start for the whole of it: `(?i)pricing`. */
const LEADING_FLAGS = /^\(\?([imsU-]+)\)([\s\S]*)$/;

/**
 * A constant pattern, its leading flags turned into a group around the rest (`(?i)x` → `(?i:x)`,
 * the same pattern in RE2): ClickHouse 18.16's match() ignored a leading `(?i)`, and answered
 * case-sensitively.
 */
function patternLiteral(c: IrCall, index: number): string {
  constantPattern(c, index);
  const pattern = (c.args[index] as IrConst).value;
  if (typeof pattern !== 'string') return pattern === null ? 'NULL' : stringLiteral(String(pattern));
  const flags = LEADING_FLAGS.exec(pattern);
  return stringLiteral(flags ? `(?${flags[1]}:${flags[2]})` : pattern);
}

function startOf(c: IrCall, x: string, fn: string): string {
  return micros(`${fn}(${wall(x, tzArg(c, 1))})`);
}

/**
 * A truncation below a day (`t`, a DateTime in `tz`) as one instant per wall time. Where the
 * clock goes back, each wall time of the repeated hour names two instants and ClickHouse keeps
 * the one its row came from: the hour would be two buckets (an actor counted in both, rows of
 * one wall hour added up). The later instant is taken, as the embedded mode's ICU does. Right
 * for shifts of a whole hour (every zone but Lord Howe's half hour and Troll's two hours).
 */
function oneInstantPerWallTime(t: string, tz: string): string {
  // UTC repeats no hour, and the check costs two time-zone lookups a row.
  if (tz === stringLiteral('UTC')) return micros(t);
  return micros(`(${t} + if(toHour(${t} + 3600, ${tz}) = toHour(${t}, ${tz}), 3600, 0))`);
}

function startOfWeek(date: string, mondayFirst: boolean): string {
  // Sunday-first weeks: the Monday after the day, less one day.
  return mondayFirst ? `toMonday(${date})` : `(toMonday(${date} + 1) - 1)`;
}

const FUNCTIONS: Record<string, Print> = {
  // --- aggregates
  count: (_p, c, args) => (args.length === 0 ? 'count()' : c.distinct ? `uniqExact(${args[0]})` : `count(${args[0]})`),
  sum: (_p, _c, [x]) => `sum(${x})`,
  avg: (_p, _c, [x]) => `avg(${x})`,
  min: (_p, _c, [x]) => `min(${x})`,
  max: (_p, _c, [x]) => `max(${x})`,
  // A NULL condition counts as false: 18.16's -If of a Nullable condition answers NULL where none holds.
  countIf: (_p, _c, [cond]) => `countIf(ifNull(${cond}, 0))`,
  sumIf: (_p, _c, [x, cond]) => `sumIf(${x}, ifNull(${cond}, 0))`,
  avgIf: (_p, _c, [x, cond]) => `avgIf(${x}, ifNull(${cond}, 0))`,
  any: (_p, _c, [x]) => `any(${x})`,
  groupArray: (_p, _c, [x]) => `groupArray(${x})`,
  groupUniqArray: (_p, _c, [x]) => `groupUniqArray(${x})`,
  argMax: (_p, _c, [value, key]) => `argMax(${value}, ${key})`,
  quantile: (_p, c, [x]) => `quantile(${level(c.params?.[0])})(${x})`,
  quantiles: (_p, c, [x]) => `quantiles(${(c.params ?? []).map(level).join(', ')})(${x})`,

  // --- dates
  toDateTime: (_p, c, [x]) => micros(`toDateTime(${x}, ${tzArg(c, 1)})`),
  // Values are µs instants: only the calendar functions around it read the zone (functions.ts).
  toTimeZone: (_p, _c, [x]) => x,
  toDate: (_p, c, [x]) => `toDate(${wall(x, tzArg(c, 1))})`,
  toStartOfHour: (_p, c, [x]) => oneInstantPerWallTime(`toStartOfHour(${wall(x, tzArg(c, 1))})`, tzArg(c, 1)),
  toStartOfDay: (_p, c, [x]) => startOf(c, x, 'toStartOfDay'),
  toStartOfWeek: (_p, c, [x]) => startOfWeek(`toDate(${wall(x, tzArg(c, 1))})`, c.args[2]?.kind === 'const' && c.args[2].value === 1),
  toStartOfMonth: (_p, c, [x]) => `toStartOfMonth(toDate(${wall(x, tzArg(c, 1))}))`,
  dateDiff: (_p, c, [, from, to]) => {
    const unit = constText(c.args[0], 'dateDiff unit');
    if (!UNITS.test(unit)) throw unsupported(`The dateDiff unit ${unit}`);
    const tz = tzArg(c, 3);
    const [a, b] = c.args[1].type === 'Date' ? [from, to] : [wall(from, tz), wall(to, tz)];
    return `dateDiff(${stringLiteral(unit)}, ${a}, ${b}, ${tz})`;
  },
  dateTrunc: (_p, c, [, x]) => {
    const unit = constText(c.args[0], 'dateTrunc unit');
    const tz = tzArg(c, 2);
    const local = wall(x, tz);
    const fn: Record<string, string> = {
      second: '',
      minute: 'toStartOfMinute',
      hour: 'toStartOfHour',
      day: 'toStartOfDay',
      month: 'toStartOfMonth',
      quarter: 'toStartOfQuarter',
      year: 'toStartOfYear',
    };
    if (unit === 'second') return oneInstantPerWallTime(local, tz);
    if (unit === 'week') return micros(`toDateTime(toMonday(toDate(${local})), ${tz})`);
    if (!fn[unit]) throw unsupported(`The dateTrunc unit ${unit}`);
    if (unit === 'minute' || unit === 'hour') return oneInstantPerWallTime(`${fn[unit]}(${local})`, tz);
    const truncated = ['month', 'quarter', 'year'].includes(unit) ? `toDateTime(${fn[unit]}(toDate(${local})), ${tz})` : `${fn[unit]}(${local})`;
    return micros(truncated);
  },
  datePart: (_p, c, [, x]) => {
    const part = constText(c.args[0], 'date part');
    const fn: Record<string, string> = {
      year: 'toYear',
      quarter: 'toQuarter',
      month: 'toMonth',
      day: 'toDayOfMonth',
      hour: 'toHour',
      minute: 'toMinute',
      second: 'toSecond',
      isodow: 'toDayOfWeek',
      doy: 'toDayOfYear',
    };
    if (!fn[part]) throw unsupported(`The date part ${part}`);
    return `toInt64(${fn[part]}(${wall(x, tzArg(c, 2))}))`;
  },
  addDays: (_p, c, [date, n]) => (c.args[0].type === 'Date' ? `addDays(${date}, toInt64(${n}))` : `(${date} + toInt64(${n}) * 86400000000)`),
  addSeconds: (_p, _c, [date, n]) => `(${date} + toInt64(${n} * 1000000))`,

  // --- conversions and strings
  toInt: (_p, _c, [x]) => intFromFloat(`toFloat64(${x})`),
  lower: (_p, _c, [x]) => `lowerUTF8(${x})`,
  upper: (_p, _c, [x]) => `upperUTF8(${x})`,
  length: (_p, _c, [x]) => `toInt64(length(${x}))`,
  arrayLength: (_p, _c, [x]) => `toInt64(length(${x}))`,
  // HogQL's concat reads NULL as ''.
  concat: (_p, _c, args) => (args.length === 1 ? `ifNull(${args[0]}, '')` : `concat(${args.map((a) => `ifNull(${a}, '')`).join(', ')})`),
  empty: (_p, _c, [x]) => `(length(${x}) = 0)`,
  notEmpty: (_p, _c, [x]) => `(length(${x}) > 0)`,
  substring: (_p, c, [x, from, length]) => {
    // 18.16's substringUTF8 takes exactly three unsigned arguments, the length a constant ("to the
    // end" is the longest a String can be). Start 0 counts a position before the first character,
    // as DuckDB does; a negative start (from the end, in DuckDB) is read as 1.
    if (length !== undefined && (c.args[2].kind !== 'const' || c.args[1].kind !== 'const')) throw unsupported('A substring start or length that is not a constant');
    const start = `greatest(toInt64(${from}), 1)`;
    const count = length === undefined ? 'toUInt64(4294967295)' : `toUInt64(greatest(toInt64(${length}) - if(toInt64(${from}) = 0, 1, 0), 0))`;
    return `substringUTF8(${x}, toUInt64(${start}), ${count})`;
  },
  // Nothing to replace for an empty pattern (18.16 refuses one).
  replaceAll: (_p, c, [x, a, b]) => (c.args[1].kind === 'const' && c.args[1].value === '' ? x : `replaceAll(${x}, ${a}, ${b})`),
  // Spaces only, as trimBoth and DuckDB's trim do (not tabs or line breaks).
  trim: (_p, _c, [x]) => `replaceRegexpAll(${x}, '^ +| +$', '')`,
  extract: (_p, c, [s]) => `extract(${s}, ${patternLiteral(c, 1)})`,
  replaceRegexpAll: (_p, c, [s, , by]) => `replaceRegexpAll(${s}, ${patternLiteral(c, 1)}, ${by})`,
  match: (_p, c, [s]) => `match(${s}, ${patternLiteral(c, 1)})`,
  // Constant key paths through visitParam (any-depth caveat, printer.ts), on every server: 18.16 has
  // no JSONExtract*, and a current server's answers '' and 0 for every key of a document holding a
  // number past 64 bits, which the embedded mode reads. visitParam wants JSON without spaces, as
  // Sightline stores it: a JSON literal is printed compacted.
  JSONExtractString: (p, c) => `ifNull(${jsonString(jsonArg(p, c), keysOf(c))}, '')`,
  JSONExtractRaw: (p, c) => jsonRaw(jsonArg(p, c), keysOf(c)),
  JSONExtractInt: (p, c) => `ifNull(${intFromFloat(`toFloat64OrNull(${jsonRaw(jsonArg(p, c), keysOf(c))})`)}, 0)`,
  JSONExtractFloat: (p, c) => `ifNull(toFloat64OrNull(${jsonRaw(jsonArg(p, c), keysOf(c))}), 0)`,
  JSONExtractBool: (p, c) => `(${jsonRaw(jsonArg(p, c), keysOf(c))} = 'true')`,
  JSONHas: (p, c) => `(${jsonRaw(jsonArg(p, c), keysOf(c))} != '')`,

  // --- logic and numbers
  coalesce: (_p, _c, args) => (args.length === 1 ? args[0] : `coalesce(${args.join(', ')})`),
  round: (_p, c, [x]) => {
    if (c.args.length < 2) return roundHalfAway(x, 0);
    const digits = c.args[1];
    if (digits.kind !== 'const' || typeof digits.value !== 'number') throw unsupported('round() with digits that are not a constant');
    return roundHalfAway(x, Math.trunc(digits.value));
  },
  abs: (_p, _c, [x]) => `abs(${x})`,
  arrayJoin: (_p, _c, [x]) => `arrayJoin(${x})`,
  /** Every match's first group (element values of elements_chain, hogql/elements.ts). */
  extractAll: (_p, c, [s, pattern]) => {
    constantPattern(c, 1);
    return `extractAll(${s}, ${pattern})`;
  },
  arrayExists: (_p, _c, [fn, list]) => `arrayExists(${fn}, ${list})`,
  arrayMap: (_p, _c, [fn, list]) => `arrayMap(${fn}, ${list})`,
  arrayFilter: (_p, _c, [fn, list]) => `arrayFilter(${fn}, ${list})`,
  has: (_p, _c, [list, x]) => `has(${list}, ${x})`,
  indexOf: (_p, _c, [list, x]) => `toInt64(indexOf(${list}, ${x}))`,
  arrayDistinct: (_p, _c, [list]) => `arrayDistinct(${list})`,
  splitByChar: (_p, _c, [separator, s]) => `splitByChar(${separator}, ${s})`,
  JSONExtractArrayRaw: (p, _c, args) => {
    const printed = native(p, 'JSONExtractArrayRaw', args);
    if (printed === null) throw unsupported('JSONExtractArrayRaw (ClickHouse 18.16 has no JSONExtract functions)');
    return printed;
  },

  // --- for the insights' own statements
  toUnixTimestamp64Micro: (_p, _c, [x]) => x,
  argMin: (_p, _c, [value, key]) => `argMin(${value}, ${key})`,
  arraySort: (_p, _c, [x]) => `arraySort(${x})`,
  arrayElement: (_p, _c, [x, i]) => `arrayElement(${x}, ${i})`,

  // --- Sightline's own
  __trimTrailingSlash: (_p, _c, [x]) => `replaceRegexpOne(${x}, '(.)/$', '\\\\1')`,
  __icontains: (_p, _c, [s, part]) => `(positionCaseInsensitiveUTF8(${s}, ${part}) > 0)`,
  __jsonRaw: (_p, c, [json]) => `nullIf(${jsonRaw(json, keysOf(c))}, '')`,
  /** A JSON value's text: a list's string items one by one, anything else as a one-item list. */
  __jsonTexts: (_p, _c, [value]) => {
    // The argument may be NULL (a missing key): read as '' so that the result is an array, not a Nullable one.
    const j = `ifNull(${value}, '')`;
    const items = `extractAll(${j}, '"((?:[^"\\\\\\\\]|\\\\\\\\.)*)"')`;
    return `if(substring(${j}, 1, 1) = '[', arrayMap(x -> toNullable(visitParamExtractString(concat('{"k":"', x, '"}'), 'k')), ${items}), [${jsonText(j)}])`;
  },
  __nullIfEmpty: (_p, _c, [s]) => `nullIf(${s}, '')`,
  __storeSeq: (p) => `(SELECT max(seq) FROM ${p.table('sync_state')} FINAL WHERE node = ${stringLiteral(p.tables.node)})`,
};

/** `fn(args…)` as written on a current server; null on 18.16. */
function native(p: SqlWriter, fn: string, args: string[]): string | null {
  return p.tables.current ? `${fn}(${args.join(', ')})` : null;
}

/** The JSON argument, printed; a constant one without the spaces between its tokens. */
function jsonArg(p: SqlWriter, c: IrCall): string {
  const json = c.args[0];
  return json.kind === 'const' && typeof json.value === 'string' ? p.literal(withoutJsonSpaces(json.value), 'String') : p.expr(json);
}

function keysOf(c: IrCall): string[] {
  return c.args.slice(1).map((arg) => constText(arg, 'JSON key'));
}

/** The string at a key path; NULL when it is missing or not a string. */
function jsonString(j: string, keys: string[]): string {
  const raw = jsonRaw(j, keys);
  return `if(substring(${raw}, 1, 1) = '"', visitParamExtractString(concat('{"k":', ${raw}, '}'), 'k'), NULL)`;
}

function level(param: IrExpr | undefined): string {
  const value = param?.kind === 'const' ? param.value : null;
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) throw new Error('quantile level must be a number in [0, 1]');
  return String(value);
}

export function printFunction(p: SqlWriter, c: IrCall): string {
  const print = Object.hasOwn(FUNCTIONS, c.fn) ? FUNCTIONS[c.fn] : undefined;
  if (!print) throw unsupported(`The function ${c.fn}`);
  return print(p, c, c.args.map((arg) => p.expr(arg)));
}
