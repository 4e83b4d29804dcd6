/**
 * The types HogQL tracks, dialect-neutral. They decide casts, function overloads, how result
 * values are decoded and which ClickHouse type names a response reports.
 */
export type HogQLType =
  | 'String'
  | 'Integer'
  | 'Float'
  | 'Boolean'
  | 'DateTime'
  | 'Date'
  | 'UUID'
  | 'Null'
  | 'Interval'
  | 'Array'
  | 'Tuple'
  /** Values whose type only the engine knows (an element of an untyped array). */
  | 'Any';

export const isNumeric = (type: HogQLType) => type === 'Integer' || type === 'Float';
export const isTemporal = (type: HogQLType) => type === 'DateTime' || type === 'Date';

/** Interval units, as ClickHouse names them (`INTERVAL 7 DAY`, `toIntervalDay(7)`). */
export const INTERVAL_UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'] as const;
export type IntervalUnit = (typeof INTERVAL_UNITS)[number];

export function intervalUnit(text: string): IntervalUnit | null {
  const word = text.toLowerCase().replace(/s$/, '');
  return (INTERVAL_UNITS as readonly string[]).includes(word) ? (word as IntervalUnit) : null;
}
