/** SQL pieces shared by the ClickHouse printer and its functions. */
import { HogQLError } from '../errors.js';
import type { IrExpr } from '../ir.js';
import type { HogQLType } from '../types.js';
import { stringLiteral } from './values.js';

/** What the function printers need from the statement printer. */
export interface SqlWriter {
  readonly tables: { database: string; node: string; current?: boolean };
  expr(e: IrExpr): string;
  table(name: string): string;
  literal(value: unknown, type: HogQLType): string;
}

export const unsupported = (what: string) =>
  new HogQLError(`${what} cannot run on this event store's ClickHouse (the 18.16 dialect Sightline prints for); see docs/scale-out-cluster.md`);

/** An if() condition 18.16 takes: it refuses a constant Nullable one (a NULL reads as false). */
const condition = (sql: string) => `ifNull(${sql}, 0)`;

/** Float to Int64 truncating, NULL where it does not fit. */
export const intFromFloat = (sql: string) => `if(${condition(`isFinite(${sql}) AND abs(${sql}) < 9.2e18`)}, toInt64(${sql}), NULL)`;

/**
 * A Float as text, as the embedded mode writes it: an integral value below 1e16 keeps a '.0'
 * (DuckDB's '3.0', where ClickHouse writes '3'). Exponent forms still differ ('1e-07' there, '1e-7' here).
 */
export const floatText = (sql: string) => `if(${condition(`${sql} = trunc(${sql}) AND abs(${sql}) < 1e16`)}, concat(toString(${sql}), '.0'), toString(${sql}))`;


/**
 * round(x, digits) half away from zero, as the embedded mode (C's round) does; ClickHouse's own
 * round of a Float goes to the even neighbour (2.5 → 2). x − trunc(x) is exact in floating point,
 * so the half is found without the error of floor(x + 0.5); a scaled value that overflows gives x.
 */
export function roundHalfAway(sql: string, digits: number): string {
  const scale = `toFloat64(${10 ** Math.abs(digits)})`;
  const scaled = digits >= 0 ? `(${sql} * ${scale})` : `(${sql} / ${scale})`;
  // No `+ 0` when the half is not reached: -0.4 rounds to -0, as in C.
  const rounded = `if(${condition(`abs(${scaled} - trunc(${scaled})) >= 0.5`)}, trunc(${scaled}) + if(${condition(`${scaled} < 0`)}, -1, 1), trunc(${scaled}))`;
  if (digits === 0) return rounded;
  return `if(${condition(`isFinite(${scaled})`)}, ${rounded} ${digits >= 0 ? '/' : '*'} ${scale}, ${sql})`;
}

/** JSON booleans read back as 'true'/'false'; any other text is NULL. */
export const boolFromText = (sql: string) => `multiIf(lowerUTF8(${sql}) = 'true', toUInt8(1), lowerUTF8(${sql}) = 'false', toUInt8(0), NULL)`;

/** Property text as µs: an ISO date-time (whole seconds), or a number of Unix seconds. */
export function timestampFromText(sql: string): string {
  const parsed = `parseDateTimeBestEffortOrNull(toString(${sql}))`;
  const seconds = `toFloat64OrNull(toString(${sql}))`;
  return `if(isNotNull(${seconds}), toInt64(${seconds} * 1000000), toInt64(toUnixTimestamp(${parsed})) * 1000000)`;
}

/**
 * The raw JSON text at a key path (`''` when missing). visitParamExtractRaw finds the first
 * `"key":` at any depth of the text: exact for flat properties, but a nested object written
 * before the key with the same key inside is read instead (docs/scale-out-cluster.md).
 */
export function jsonRaw(sql: string, path: string[]): string {
  const { parent, key } = lastStep(sql, path);
  const raw = `visitParamExtractRaw(${parent}, ${key})`;
  // 18.16's visitParamExtractRaw answers '' for a string ending in an escaped backslash ("x\\\\"):
  // such a value, which the key does hold, is re-quoted from visitParamExtractString.
  const requoted = `concat('"', replaceAll(replaceAll(visitParamExtractString(${parent}, ${key}), '\\\\', '\\\\\\\\'), '"', '\\\\"'), '"')`;
  return `if(${raw} = '' AND visitParamHas(${parent}, ${key}), ${requoted}, ${raw})`;
}

/** The object holding the path's last key (raw JSON), and that key as a literal. */
function lastStep(sql: string, path: string[]): { parent: string; key: string } {
  let parent = sql;
  for (const key of path.slice(0, -1)) parent = `visitParamExtractRaw(${parent}, ${jsonKey(key)})`;
  return { parent, key: jsonKey(path[path.length - 1]) };
}

/** A key as it is written inside the JSON text (escaped), as a literal. */
const jsonKey = (key: string) => stringLiteral(JSON.stringify(key).slice(1, -1));

/** The text of a JSON value as `properties.x` reads it: a string unquoted, other values as JSON, NULL when missing or null. */
export function jsonText(raw: string): string {
  return `multiIf(${raw} IN ('', 'null'), NULL, substring(${raw}, 1, 1) = '"', visitParamExtractString(concat('{"k":', ${raw}, '}'), 'k'), ${raw})`;
}

export function propertyText(column: string, path: string[]): string {
  const { parent, key } = lastStep(column, path);
  const raw = `visitParamExtractRaw(${parent}, ${key})`;
  // A string (raw starts with a quote, or is '' for the 18.16 bug above while the key is there) is read unescaped.
  return `multiIf(${raw} = 'null', NULL, ${raw} != '' AND substring(${raw}, 1, 1) != '"', ${raw}, visitParamHas(${parent}, ${key}), visitParamExtractString(${parent}, ${key}), NULL)`;
}


/** JSON text without the whitespace between tokens (strings kept as they are). */
export function withoutJsonSpaces(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      out += ch;
      if (ch === '\\') out += text[++i] ?? '';
      else if (ch === '"') inString = false;
    } else if (ch === '"') {
      inString = true;
      out += ch;
    } else if (ch !== ' ' && ch !== '\t' && ch !== '\n' && ch !== '\r') {
      out += ch;
    }
  }
  return out;
}
