/**
 * Decoded rows (hogql/dialect.ts: DateTime as `YYYY-MM-DD HH:MM:SS.ffffff` UTC) into API
 * values: stored events with their person, and `select` rows typed by the compiler's columns.
 */
import type { HogQLType } from '../hogql/index.js';
import { timestampMs as textMs } from '../hogql/dates.js';
import { parseElementsChain, type Element } from './elements.js';
import type { Row } from './run.js';

/** Where a row sits in the walk: list rows carry ts/id, `select` rows their hidden key columns. */
export type RowKey = (row: Row) => { timestamp: string; uuid: string };

export const eventKey: RowKey = (row) => ({ timestamp: (row.ts as string).replace(' ', 'T'), uuid: row.id as string });
export const selectKey: RowKey = (row) => ({ timestamp: (row.__ts as string).replace(' ', 'T'), uuid: row.__uuid as string });

export interface Person {
  is_identified: boolean;
  distinct_ids: string[];
  properties: Record<string, unknown>;
}

export interface EventResult {
  id: string;
  distinct_id: string;
  properties: Record<string, unknown>;
  event: string;
  timestamp: string;
  person: Person | null;
  elements: Element[];
  elements_chain: string;
}

/** `2026-11-22 01:02:03.456000` (stored UTC) → `2026-11-22T01:02:03.456000+00:00`. */
export const isoTimestamp = (ts: string) => `${ts.replace(' ', 'T')}+00:00`;

/** A decoded DateTime → epoch milliseconds. */
export const timestampMs = (text: string) => textMs(text);

export const parseObject = (json: unknown): Record<string, unknown> => {
  const value: unknown = typeof json === 'string' ? JSON.parse(json) : json;
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
};

export function eventResult(row: Row, persons: Map<string, Person>): EventResult {
  const distinctId = row.distinct_id as string;
  const chain = row.elements_chain as string;
  return {
    id: row.id as string,
    distinct_id: distinctId,
    properties: parseObject(row.properties),
    event: row.event as string,
    timestamp: isoTimestamp(row.ts as string),
    person: persons.get(distinctId) ?? null,
    elements: parseElementsChain(chain),
    elements_chain: chain,
  };
}


/** A `select` row (columns c0, c1, …) as a list of values in select order. */
export function selectValues(row: Row, types: HogQLType[]): unknown[] {
  return types.map((type, i) => {
    const value = row[`c${i}`];
    return type === 'DateTime' && typeof value === 'string' ? isoTimestamp(value) : value;
  });
}
