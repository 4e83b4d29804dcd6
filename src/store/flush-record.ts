/**
 * One ingestion flush as bytes: its metadata changes and its events, one line of JSON. The flush
 * log keeps it until both stores have it, and the event store is handed the same bytes (so the
 * main thread serialises a flush once). Encoding is the cheap side: each event's properties are
 * embedded as the JSON text already made for the event store rather than quoted again, and the
 * uuid list is derived from the events when read.
 */
import type { EventStoreWrite, IngestChanges, StoredEvent } from './types.js';

const FORMAT = 1;

export interface FlushRecord {
  changes: IngestChanges;
  events: StoredEvent[];
}

/** A flush as the flush log and the event store take it. */
export interface EncodedFlush {
  seq: number;
  /** How many events it holds. */
  events: number;
  /** One line of JSON, newline included (a Uint8Array once it crossed to a worker thread). */
  bytes: Uint8Array;
}

type EventRow = [
  project_id: number,
  uuid: string,
  event: string,
  distinct_id: string,
  person_id: string | null,
  timestamp_ms: number,
  created_at_ms: number,
  properties: unknown,
  elements_chain: string,
  groups: StoredEvent['groups'],
];

const q = JSON.stringify;

function eventRow(e: StoredEvent): string {
  return (
    `[${e.project_id},${q(e.uuid)},${q(e.event)},${q(e.distinct_id)},${q(e.person_id)},${e.timestamp.getTime()},` +
    `${e.created_at.getTime()},${e.properties_json},${q(e.elements_chain)},${q(e.groups)}]`
  );
}

export function encodeFlushRecord({ changes, events }: FlushRecord): EncodedFlush {
  const { eventUuids: _derived, ...rest } = changes;
  const rows = new Array<string>(events.length);
  for (let i = 0; i < events.length; i++) rows[i] = eventRow(events[i]);
  // JSON text never holds a raw newline, so the newline ends the record.
  const text = `{"format":${FORMAT},"changes":${q(rest)},"events":[${rows.join(',')}]}\n`;
  return { seq: changes.flushSeq, events: events.length, bytes: Buffer.from(text) };
}

/** Parses one record; throws on anything that is not a whole record of this format. */
export function decodeFlushRecord(bytes: Uint8Array): FlushRecord {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  const parsed = JSON.parse(text) as { format: number; changes: Omit<IngestChanges, 'eventUuids'>; events: EventRow[] };
  if (parsed.format !== FORMAT) throw new Error(`unknown flush record format ${String(parsed.format)}`);
  if (!Number.isSafeInteger(parsed.changes?.flushSeq) || !Array.isArray(parsed.events)) throw new Error('not a flush record');
  const events = parsed.events.map(
    ([project_id, uuid, event, distinct_id, person_id, timestamp, created_at, properties, elements_chain, groups]): StoredEvent => ({
      project_id,
      uuid,
      event,
      distinct_id,
      person_id,
      timestamp: new Date(timestamp),
      created_at: new Date(created_at),
      properties_json: q(properties),
      elements_chain,
      groups,
    }),
  );
  const eventUuids = events.map((e) => ({ project_id: e.project_id, uuid: e.uuid }));
  return { changes: { ...parsed.changes, eventUuids }, events };
}

/** What the event store takes of a flush: its events and the person mirror's changes. */
export function eventStoreWriteOf({ changes, events }: FlushRecord): EventStoreWrite {
  return {
    flushSeq: changes.flushSeq,
    events,
    upsertPersons: changes.upsertPersons,
    deletePersons: changes.deletePersons,
    reassignDistinctIds: changes.reassignDistinctIds,
    setDistinctIds: changes.setDistinctIds,
  };
}
