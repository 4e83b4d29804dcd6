/**
 * HogQL functions in DuckDB, with ClickHouse's results: the IR has typed and converted the
 * arguments, this prints them. Names starting with `__` are Sightline's own (property filters,
 * the events API); HogQL text cannot call them.
 */
import type { IrCall, IrExpr } from '../ir.js';
import { jsonPointer, type SqlWriter } from './writer.js';

type Print = (p: SqlWriter, c: IrCall, args: string[]) => string;

/** A time-zone argument: always a constant the resolver put there. */
function constText(expr: IrExpr | undefined, what: string): string {
  if (!expr || expr.kind !== 'const' || typeof expr.value !== 'string') throw new Error(`${what} must be a constant`);
  return expr.value;
}

const tzArg = (c: IrCall, index: number) => constText(c.args[index], 'time zone');
const wall = (p: SqlWriter, c: IrCall, args: string[], tzIndex = 1) => p.local.wall(args[0], tzArg(c, tzIndex));

const FUNCTIONS: Record<string, Print> = {
  // --- aggregates
  count: (_p, c, args) => (args.length === 0 ? 'count(*)' : `count(${c.distinct ? 'DISTINCT ' : ''}${args[0]})`),
  // DuckDB sums integers as HUGEINT; ClickHouse gives Int64.
  sum: (_p, c, [x]) => (c.type === 'Integer' ? `TRY_CAST(sum(${x}) AS BIGINT)` : `sum(${x})`),
  avg: (_p, _c, [x]) => `avg(${x})`,
  min: (_p, _c, [x]) => `min(${x})`,
  max: (_p, _c, [x]) => `max(${x})`,
  countIf: (_p, _c, [cond]) => `count(*) FILTER (WHERE ${cond})`,
  sumIf: (_p, c, [x, cond]) => (c.type === 'Integer' ? `TRY_CAST(sum(${x}) FILTER (WHERE ${cond}) AS BIGINT)` : `sum(${x}) FILTER (WHERE ${cond})`),
  avgIf: (_p, _c, [x, cond]) => `avg(${x}) FILTER (WHERE ${cond})`,
  any: (_p, _c, [x]) => `any_value(${x})`,
  // ClickHouse's groupArray leaves NULLs out.
  groupArray: (_p, _c, [x]) => `list(${x}) FILTER (WHERE ${x} IS NOT NULL)`,
  groupUniqArray: (_p, _c, [x]) => `list(DISTINCT ${x}) FILTER (WHERE ${x} IS NOT NULL)`,
  argMax: (_p, _c, [value, key]) => `arg_max(${value}, ${key})`,
  // Levels are numbers the resolver checked; DuckDB wants them as constants, not parameters.
  quantile: (_p, c, [x]) => `quantile_cont(${x}, ${level(c.params?.[0])})`,
  quantiles: (_p, c, [x]) => `quantile_cont(${x}, [${(c.params ?? []).map(level).join(', ')}])`,

  // --- window-only
  row_number: () => 'row_number()',
  rank: () => 'rank()',
  dense_rank: () => 'dense_rank()',
  lag: (_p, _c, args) => `lag(${args.join(', ')})`,
  lead: (_p, _c, args) => `lead(${args.join(', ')})`,
  first_value: (_p, _c, [x]) => `first_value(${x})`,
  last_value: (_p, _c, [x]) => `last_value(${x})`,

  // --- dates (the last argument of the calendar functions is the time zone)
  toDateTime: (p, c, [x]) => p.local.instant(`CAST(${x} AS TIMESTAMP)`, tzArg(c, 1)),
  // The same instant: only the calendar functions around it read the zone (functions.ts).
  toTimeZone: (_p, _c, [x]) => x,
  toDate: (p, c, args) => `CAST(${wall(p, c, args)} AS DATE)`,
  toStartOfHour: (p, c, args) => startOf(p, c, args, 'hour'),
  toStartOfDay: (p, c, args) => startOf(p, c, args, 'day'),
  toStartOfWeek: (p, c, args) => {
    const local = wall(p, c, args);
    // Monday: ISO weeks; Sunday (ClickHouse's default): back by the day of the week (Sunday = 0).
    return c.args[2]?.kind === 'const' && c.args[2].value === 1
      ? `CAST(date_trunc('week', ${local}) AS DATE)`
      : `CAST(CAST(${local} AS DATE) - CAST(dayofweek(${local}) AS INTEGER) AS DATE)`;
  },
  toStartOfMonth: (p, c, args) => `CAST(date_trunc('month', ${wall(p, c, args)}) AS DATE)`,
  dateDiff: (p, c, [, from, to]) => {
    const unit = constText(c.args[0], 'dateDiff unit');
    const tz = tzArg(c, 3);
    if (!/^(second|minute|hour|day|week|month|quarter|year)$/.test(unit)) throw new Error(`unknown unit ${unit}`);
    // Counts unit boundaries crossed, in wall-clock time as ClickHouse does.
    const both = c.args[1].type === 'Date' ? [from, to] : [p.local.wall(from, tz), p.local.wall(to, tz)];
    return `date_diff('${unit}', ${both[0]}, ${both[1]})`;
  },
  dateTrunc: (p, c, [, x]) => {
    const unit = constText(c.args[0], 'dateTrunc unit');
    if (!/^(second|minute|hour|day|week|month|quarter|year)$/.test(unit)) throw new Error(`unknown unit ${unit}`);
    const tz = tzArg(c, 2);
    return p.local.instant(`date_trunc('${unit}', ${p.local.wall(x, tz)})`, tz);
  },
  datePart: (p, c, [, x]) => {
    const part = constText(c.args[0], 'date part');
    if (!/^(year|quarter|month|day|hour|minute|second|isodow|doy)$/.test(part)) throw new Error(`unknown part ${part}`);
    return `CAST(date_part('${part}', ${p.local.wall(x, tzArg(c, 2))}) AS BIGINT)`;
  },
  // A shift out of the representable range becomes NULL.
  addDays: (_p, _c, [date, n]) => `TRY(${date} + TRY_CAST(${n} AS INTEGER))`,
  addSeconds: (_p, _c, [date, n]) => `TRY(${date} + to_seconds(${n}))`,

  // --- conversions and strings
  toInt: (_p, _c, [x]) => `TRY_CAST(trunc(${x}) AS BIGINT)`,
  lower: (_p, _c, [x]) => `lower(${x})`,
  upper: (_p, _c, [x]) => `upper(${x})`,
  // ClickHouse counts bytes.
  length: (_p, _c, [x]) => `strlen(${x})`,
  arrayLength: (_p, _c, [x]) => `CAST(len(${x}) AS BIGINT)`,
  // DuckDB's concat skips NULLs, as HogQL's treats them as empty strings.
  concat: (_p, _c, args) => `concat(${args.join(', ')})`,
  empty: (_p, _c, [x]) => `(strlen(${x}) = 0)`,
  substring: (_p, _c, [x, from, length]) =>
    length === undefined ? `substring(${x}, CAST(${from} AS BIGINT))` : `substring(${x}, CAST(${from} AS BIGINT), CAST(${length} AS BIGINT))`,
  replaceAll: (_p, _c, [x, a, b]) => `replace(${x}, ${a}, ${b})`,
  trim: (_p, _c, [x]) => `trim(${x})`,
  // ClickHouse: the first group's text when the pattern has one, else the whole match; '' when none.
  extract: (_p, c, [s, pattern]) => {
    const group = c.args[1].kind === 'const' && hasCaptureGroup(String(c.args[1].value)) ? 1 : 0;
    return tryUnlessConstant(c, `regexp_extract(${s}, ${pattern}, ${group})`);
  },
  replaceRegexpAll: (_p, c, [s, pattern, by]) => tryUnlessConstant(c, `regexp_replace(${s}, ${pattern}, ${by}, 'g')`),
  // JSON text read at constant keys; ClickHouse's defaults ('' / 0 / false) where a key is
  // missing, the value has another type or the text is not JSON.
  JSONExtractString: (p, c, [j]) => {
    const at = jsonPath(p, c);
    return `coalesce(TRY(CASE WHEN json_type(${j}, ${at}) = 'VARCHAR' THEN json_extract_string(${j}, ${at}) END), '')`;
  },
  JSONExtractRaw: (p, c, [j]) => `coalesce(TRY(CAST(json_extract(${j}, ${jsonPath(p, c)}) AS VARCHAR)), '')`,
  JSONExtractInt: (p, c, [j]) => `coalesce(TRY_CAST(trunc(TRY_CAST(TRY(json_extract_string(${j}, ${jsonPath(p, c)})) AS DOUBLE)) AS BIGINT), 0)`,
  JSONExtractFloat: (p, c, [j]) => `coalesce(TRY_CAST(TRY(json_extract_string(${j}, ${jsonPath(p, c)})) AS DOUBLE), 0)`,
  JSONExtractBool: (p, c, [j]) => {
    const at = jsonPath(p, c);
    return `coalesce(TRY(CASE WHEN json_type(${j}, ${at}) = 'BOOLEAN' THEN CAST(json_extract_string(${j}, ${at}) AS BOOLEAN) END), FALSE)`;
  },
  JSONHas: (p, c, [j]) => `coalesce(TRY(json_extract(${j}, ${jsonPath(p, c)}) IS NOT NULL), FALSE)`,
  notEmpty: (_p, _c, [x]) => `(strlen(${x}) > 0)`,

  // --- logic and numbers
  coalesce: (_p, _c, args) => `coalesce(${args.join(', ')})`,
  round: (_p, _c, [x, digits]) => (digits ? `round(${x}, CAST(${digits} AS INTEGER))` : `round(${x})`),
  abs: (_p, c, [x]) => (c.type === 'Integer' ? `TRY(abs(${x}))` : `abs(${x})`),
  // RE2 patterns; one that only exists per row may be invalid, which is NULL rather than an error.
  match: (_p, c, [s, pattern]) => (c.args[1].kind === 'const' ? `regexp_matches(${s}, ${pattern})` : `TRY(regexp_matches(${s}, ${pattern}))`),

  /** One row per element (ClickHouse's arrayJoin in a select list). */
  arrayJoin: (_p, _c, [x]) => `unnest(${x})`,

  // --- for the insights' own statements (HogQL text cannot call these; ClickHouse has each name)
  /** Microseconds since the epoch, exact (window frames and differences stay integral). */
  toUnixTimestamp64Micro: (_p, _c, [x]) => `epoch_us(${x})`,
  argMin: (_p, _c, [value, key]) => `arg_min(${value}, ${key})`,
  /** Ascending, NULLs last (ClickHouse's order). */
  arraySort: (_p, _c, [x]) => `list_sort(${x}, 'ASC', 'NULLS LAST')`,
  /** 1-based; NULL past the end. */
  arrayElement: (_p, _c, [x, i]) => `${x}[CAST(${i} AS BIGINT)]`,

  arrayMap: (_p, _c, [fn, list]) => `list_transform(${list}, ${fn})`,
  arrayFilter: (_p, _c, [fn, list]) => `list_filter(${list}, ${fn})`,
  has: (_p, _c, [list, x]) => `coalesce(list_contains(${list}, ${x}), FALSE)`,
  indexOf: (_p, _c, [list, x]) => `CAST(coalesce(list_position(${list}, ${x}), 0) AS BIGINT)`,
  /** First occurrences in order, NULLs dropped (ClickHouse's arrayDistinct). */
  arrayDistinct: (_p, _c, [list]) => `list_filter(${list}, (__item, __at) -> __item IS NOT NULL AND list_position(${list}, __item) = __at)`,
  splitByChar: (_p, _c, [separator, s]) => `string_split(${s}, ${separator})`,
  JSONExtractArrayRaw: (p, c, [j]) => {
    const at = jsonPath(p, c);
    return `(CASE WHEN TRY(json_type(${j}, ${at})) = 'ARRAY' THEN CAST(from_json(json_extract(${j}, ${at}), '["JSON"]') AS VARCHAR[]) ELSE CAST([] AS VARCHAR[]) END)`;
  },

  /** Every match's first group (ClickHouse's extractAll of a pattern with one group). */
  extractAll: (_p, _c, [s, pattern]) => `regexp_extract_all(${s}, ${pattern}, 1)`,
  /** Some item passes the lambda; false for an empty or NULL list. */
  arrayExists: (_p, _c, [fn, list]) => `coalesce(len(list_filter(${list}, ${fn})) > 0, FALSE)`,

  // --- Sightline's own
  /** A URL without its one trailing slash (`/` itself stays), as paths name pageviews. */
  __trimTrailingSlash: (_p, _c, [x]) => `regexp_replace(${x}, '(.)/$', '\\1')`,
  /** Case-insensitive substring; % and _ stay literal. */
  __icontains: (_p, _c, [s, part]) => `contains(lower(${s}), lower(${part}))`,
  /** The JSON value at a key path (constant keys after the column). */
  __jsonRaw: (p, c, [json]) => `json_extract(${json}, ${p.bind(jsonPointer(c.args.slice(1).map((arg) => constText(arg, 'JSON key'))), 'String')})`,
  /** A JSON value's text: a list's items one by one, anything else as a one-item list. */
  __jsonTexts: (_p, _c, [j]) => `(CASE WHEN json_type(${j}) = 'ARRAY' THEN json_extract_string(${j}, '$[*]') ELSE [json_extract_string(${j}, '$')] END)`,
  /** How far the store has taken ingestion flushes (rows are stamped with theirs). */
  /** NULL for an empty string, the argument printed (and computed) once: insight breakdown values. */
  __nullIfEmpty: (_p, _c, [s]) => `nullif(${s}, '')`,
  __storeSeq: () => "(SELECT value FROM sync_state WHERE key = 'flush_seq')",
};

/** The JSON pointer of a call's constant keys (after the JSON argument); the root when none. */
function jsonPath(p: SqlWriter, c: IrCall): string {
  const keys = c.args.slice(1).map((arg) => constText(arg, 'JSON key'));
  return p.bind(keys.length === 0 ? '$' : jsonPointer(keys), 'String');
}

function level(param: IrExpr | undefined): string {
  const value = param?.kind === 'const' ? param.value : null;
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) throw new Error('quantile level must be a number in [0, 1]');
  return String(value);
}

/** A pattern that exists only per row may be invalid: NULL for that row, not a failed query. */
function tryUnlessConstant(c: IrCall, sql: string): string {
  return c.args[1].kind === 'const' ? sql : `TRY(${sql})`;
}

/** `(` that opens a capturing group: not escaped, not `(?…`, not inside a class. */
function hasCaptureGroup(pattern: string): boolean {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') i++;
    else if (inClass) inClass = ch !== ']';
    else if (ch === '[') inClass = true;
    else if (ch === '(' && pattern[i + 1] !== '?') return true;
  }
  return false;
}

function startOf(p: SqlWriter, c: IrCall, args: string[], unit: 'hour' | 'day'): string {
  const tz = tzArg(c, 1);
  if (tz === 'UTC') return `date_trunc('${unit}', ${args[0]})`;
  return p.local.instant(`date_trunc('${unit}', ${p.local.wall(args[0], tz)})`, tz);
}

export function printFunction(p: SqlWriter, c: IrCall): string {
  const print = Object.hasOwn(FUNCTIONS, c.fn) ? FUNCTIONS[c.fn] : undefined;
  if (!print) throw new Error(`the DuckDB dialect has no function ${c.fn}`);
  return print(p, c, p.args(c));
}
