/**
 * DuckDB's JSON-compatible row values (`getRowObjectsJson`: BIGINT and HUGEINT as text,
 * TIMESTAMP as `YYYY-MM-DD HH:MM:SS[.f…]`) into the dialect-neutral forms of dialect.ts.
 */
import type { HogQLType } from '../types.js';

const TIMESTAMP = /^(\d{4,}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?$/;

export function decodeValue(value: unknown, type: HogQLType, item?: HogQLType): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'Integer': {
      if (typeof value !== 'string') return value;
      // Beyond 2^53 the text is kept rather than rounded.
      const number = Number(value);
      return /^-?\d+$/.test(value) && Number.isSafeInteger(number) ? number : value;
    }
    case 'Float': {
      if (typeof value !== 'string') return value;
      const number = Number(value);
      return Number.isFinite(number) ? number : value;
    }
    case 'DateTime':
      return typeof value === 'string' ? timestampValue(value) : value;
    case 'Array':
      return Array.isArray(value) ? value.map((element) => decodeValue(element, item ?? 'Any')) : value;
    case 'Any':
      return typeof value === 'string' && TIMESTAMP.test(value) ? timestampValue(value) : value;
    default:
      return value;
  }
}

/** `YYYY-MM-DD HH:MM:SS.ffffff`: the fraction padded (or cut) to microseconds. */
function timestampValue(text: string): string {
  const match = TIMESTAMP.exec(text);
  if (!match) return text;
  return `${match[1]} ${match[2]}.${(match[3] ?? '').padEnd(6, '0').slice(0, 6)}`;
}
