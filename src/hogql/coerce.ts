/**
 * Casts between HogQL types, written so that bad data yields NULL (TRY_CAST) rather than a
 * query error, and so that literals convert in JS (a bad date literal is a HogQLError).
 */
import { errorAt, quoteForMessage } from './errors.js';
import { parseDateLiteral, toSqlDate, toSqlTimestamp } from './dates.js';
import type { Operand } from './operand.js';
import type { ParamSink } from './params.js';
import { type HogQLType, isNumeric } from './types.js';

export function asDouble(op: Operand): string {
  switch (op.type) {
    case 'Integer':
    case 'Float':
      return op.sql;
    case 'Null':
      return 'CAST(NULL AS DOUBLE)';
    case 'Boolean':
      return `CAST(${op.sql} AS DOUBLE)`;
    case 'DateTime':
      return `epoch(${op.sql})`;
    case 'Date':
      return `epoch(CAST(${op.sql} AS TIMESTAMP))`;
    case 'UUID':
      return 'CAST(NULL AS DOUBLE)';
    case 'String':
      return `TRY_CAST(${op.sql} AS DOUBLE)`;
  }
}

export function asBool(op: Operand): string {
  switch (op.type) {
    case 'Boolean':
      return op.sql;
    case 'Null':
      return 'CAST(NULL AS BOOLEAN)';
    case 'Integer':
    case 'Float':
      return `(${op.sql} <> 0)`;
    case 'String':
      return boolFromText(op.sql);
    default:
      throw errorAt(`Expected a boolean expression, got ${op.type}`, op.start);
  }
}

/** JSON booleans read back as 'true'/'false'; any other text is NULL. */
export function boolFromText(sql: string): string {
  return `(CASE lower(${sql}) WHEN 'true' THEN TRUE WHEN 'false' THEN FALSE ELSE NULL END)`;
}

export function asText(op: Operand): string {
  if (op.type === 'String') return op.sql;
  if (op.type === 'Null') return 'CAST(NULL AS VARCHAR)';
  return `CAST(${op.sql} AS VARCHAR)`;
}

export function asTimestamp(op: Operand, params: ParamSink): string {
  switch (op.type) {
    case 'DateTime':
      return op.sql;
    case 'Date':
      return `CAST(${op.sql} AS TIMESTAMP)`;
    case 'Null':
      return 'CAST(NULL AS TIMESTAMP)';
    case 'Integer':
    case 'Float':
      return timestampFromSeconds(op.sql);
    case 'String': {
      if (op.constant && typeof op.constant.value === 'string') {
        return `CAST(${params.add(toSqlTimestamp(literalDate(op)))} AS TIMESTAMP)`;
      }
      return timestampFromText(op.sql);
    }
    default:
      throw errorAt(`Cannot convert ${op.type} to DateTime`, op.start);
  }
}

export function asDate(op: Operand, params: ParamSink): string {
  if (op.type === 'Date') return op.sql;
  if (op.type === 'String' && op.constant && typeof op.constant.value === 'string') {
    return `CAST(${params.add(toSqlDate(literalDate(op)))} AS DATE)`;
  }
  return `CAST(${asTimestamp(op, params)} AS DATE)`;
}

/** Property text as a timestamp: an ISO date-time, or a number of Unix seconds. */
export function timestampFromText(sql: string): string {
  return `COALESCE(TRY_CAST(${sql} AS TIMESTAMP), ${timestampFromSeconds(`TRY_CAST(${sql} AS DOUBLE)`)})`;
}

function timestampFromSeconds(sql: string): string {
  return `make_timestamp(TRY_CAST((${sql}) * 1000000 AS BIGINT))`;
}

function literalDate(op: Operand): Date {
  const text = String(op.constant!.value);
  const date = parseDateLiteral(text);
  if (!date) throw errorAt(`Cannot parse ${quoteForMessage(text)} as a DateTime`, op.start);
  return date;
}

/**
 * Brings operands of a comparison, IN list, coalesce or if() to one type, the way a
 * reader expects: dates beat text, booleans beat text, numbers beat text (so an untyped
 * property compared with a number compares numerically).
 */
export function unify(operands: Operand[], params: ParamSink): { sql: string[]; type: HogQLType } {
  const types = new Set(operands.map((op) => op.type).filter((type) => type !== 'Null'));
  if (types.size === 0) return { sql: operands.map((op) => op.sql), type: 'Null' };
  if (types.size === 1) return { sql: operands.map((op) => op.sql), type: [...types][0] };
  if (types.has('DateTime')) return { sql: operands.map((op) => asTimestamp(op, params)), type: 'DateTime' };
  if (types.has('Date')) return { sql: operands.map((op) => asDate(op, params)), type: 'Date' };
  if (types.has('Boolean')) return { sql: operands.map(asBool), type: 'Boolean' };
  if ([...types].every(isNumeric)) return { sql: operands.map((op) => op.sql), type: 'Float' };
  if (types.has('Integer') || types.has('Float')) return { sql: operands.map(asDouble), type: 'Float' };
  if (types.has('UUID')) {
    // UUIDs print lower-case; compare as text so a malformed string is simply unequal.
    return {
      sql: operands.map((op) => (op.type === 'UUID' ? `CAST(${op.sql} AS VARCHAR)` : `lower(${asText(op)})`)),
      type: 'String',
    };
  }
  return { sql: operands.map(asText), type: 'String' };
}
