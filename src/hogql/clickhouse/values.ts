/**
 * ClickHouse literals and result values. ClickHouse 18.16 has no server-side parameters
 * (`{name:Type}` came later), so constants are written into the statement as escaped literals;
 * DateTime is a count of microseconds (the store keeps Int64 µs: 18.16 has no DateTime64).
 */
import { HogQLError } from '../errors.js';
import type { HogQLType } from '../types.js';

/** A string literal: backslash and quote escaped, control characters as \xHH. */
export function stringLiteral(text: string): string {
  // eslint-disable-next-line no-control-regex
  const escaped = text.replace(/[\\']/g, (ch) => `\\${ch}`).replace(/[\u0000-\u001f\u007f]/g, (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return `'${escaped}'`;
}

const TIMESTAMP = /^(\d{4,})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `YYYY-MM-DD HH:MM:SS[.f]` (UTC) as microseconds since the epoch; null when it is not one. */
export function timestampMicros(text: string): number | null {
  const m = TIMESTAMP.exec(text);
  if (!m) return null;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  if (!Number.isFinite(ms)) return null;
  return ms * 1000 + Number((m[7] ?? '').padEnd(6, '0').slice(0, 6));
}

/** `YYYY-MM-DD HH:MM:SS.ffffff` (UTC) of a count of microseconds. */
export function microsText(micros: number): string {
  const ms = Math.floor(micros / 1000);
  const iso = new Date(ms).toISOString();
  const fraction = String(((micros % 1_000_000) + 1_000_000) % 1_000_000).padStart(6, '0');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${fraction}`;
}

/** A constant of the IR as a ClickHouse literal of the dialect's type for `type`. */
export function literal(value: unknown, type: HogQLType): string {
  if (value === null || value === undefined) return 'NULL';
  switch (type) {
    case 'Integer': {
      const text = String(value);
      if (!/^-?\d+$/.test(text)) throw new Error(`not an integer constant: ${text}`);
      return `toInt64(${text})`;
    }
    case 'Float': {
      const n = Number(value);
      if (Number.isNaN(n)) return 'nan';
      if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
      return `toFloat64(${stringLiteral(String(n))})`;
    }
    case 'Boolean':
      return value === true || value === 1 ? 'toUInt8(1)' : 'toUInt8(0)';
    case 'DateTime': {
      const micros = typeof value === 'string' ? timestampMicros(value) : null;
      if (micros === null) throw new HogQLError(`not a date-time: ${String(value)}`);
      return `toInt64(${micros})`;
    }
    case 'Date':
      if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) throw new HogQLError(`not a date: ${String(value)}`);
      return `toDate(${stringLiteral(value)})`;
    case 'UUID':
      return typeof value === 'string' && UUID.test(value) ? stringLiteral(value.toLowerCase()) : 'NULL';
    default:
      if (typeof value === 'number') return Number.isInteger(value) ? `toInt64(${value})` : `toFloat64(${stringLiteral(String(value))})`;
      if (typeof value === 'boolean') return value ? 'toUInt8(1)' : 'toUInt8(0)';
      return stringLiteral(String(value));
  }
}

/**
 * JSONEachRow values (64-bit integers quoted, as 18.16 sends them) into the dialect-neutral forms
 * of dialect.ts.
 */
export function decodeValue(value: unknown, type: HogQLType, item?: HogQLType): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'Integer': {
      if (typeof value !== 'string') return value;
      const number = Number(value);
      return /^-?\d+$/.test(value) && Number.isSafeInteger(number) ? number : value;
    }
    case 'Float': {
      if (typeof value === 'string') {
        const number = Number(value);
        return Number.isFinite(number) ? number : value;
      }
      return value;
    }
    case 'Boolean':
      return value === 1 || value === '1' || value === true;
    case 'DateTime': {
      const micros = Number(value);
      return Number.isFinite(micros) ? microsText(micros) : value;
    }
    case 'Array':
      return Array.isArray(value) ? value.map((element) => decodeValue(element, item ?? 'Any')) : value;
    default:
      return value;
  }
}
