/**
 * One ingestion flush as bytes: its metadata changes and its events, one line. The flush log
 * keeps it until both stores have it, and the event store is handed the same bytes, so the main
 * thread serialises a flush once.
 *
 * Layout: `<header length> <header JSON><properties of event 1><properties of event 2>…\n`. The
 * header holds the changes and every event's columns with the byte length of its properties;
 * the properties follow as the JSON text made for the event store. Reading a record therefore
 * slices the properties out instead of parsing and re-serialising them, which was most of the
 * event store's decoding cost. JSON text holds no raw newline, so the newline ends the record.
 */
import type { EncodedFlush, IngestChanges, StoredEvent } from './types.js';

export type { EncodedFlush };
import { asBuffer } from '../util/bytes.js';

const FORMAT = 2;

export interface FlushRecord {
  changes: IngestChanges;
  events: StoredEvent[];
}

type EventColumns = [
  project_id: number,
  uuid: string,
  event: string,
  distinct_id: string,
  person_id: string | null,
  timestamp_ms: number,
  created_at_ms: number,
  elements_chain: string,
  groups: StoredEvent['groups'],
  properties_bytes: number,
];

interface Header {
  format: number;
  changes: Omit<IngestChanges, 'eventUuids'>;
  events: EventColumns[];
}

/**
 * Memory for a record's bytes, shared: the flush log's file thread then sees it without a copy (a
 * view of an ordinary buffer would be cloned whole, with all of the buffer around it). The event
 * store's process gets a copy of the record alone, through its pipe.
 */
export function sharedBytes(length: number): Buffer {
  return Buffer.from(new SharedArrayBuffer(length));
}

/** Encodes a flush into memory from `alloc` (shared memory, see `sharedBytes`). */
export function encodeFlushRecord({ changes, events }: FlushRecord, alloc: (length: number) => Buffer = sharedBytes): EncodedFlush {
  const { eventUuids: _derived, ...rest } = changes;
  const columns = new Array<EventColumns>(events.length);
  let propertiesBytes = 0;
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    const length = Buffer.byteLength(e.properties_json);
    propertiesBytes += length;
    columns[i] = [e.project_id, e.uuid, e.event, e.distinct_id, e.person_id, e.timestamp.getTime(), e.created_at.getTime(), e.elements_chain, e.groups, length];
  }
  const header = JSON.stringify({ format: FORMAT, changes: rest, events: columns } satisfies Header);
  const headerBytes = Buffer.byteLength(header);
  const prefix = `${headerBytes} `;
  // One exact allocation, each part written once.
  const bytes = alloc(prefix.length + headerBytes + propertiesBytes + 1);
  let at = bytes.write(prefix, 0, 'latin1');
  at += bytes.write(header, at);
  for (const e of events) at += bytes.write(e.properties_json, at);
  bytes[at] = 0x0a;
  return { seq: changes.flushSeq, events: events.length, bytes };
}

/**
 * One record opened for reading: its changes, and its events built one at a time (the event
 * store appends each and drops it, so a big write never holds all of its events decoded).
 */
export interface FlushRecordReader {
  changes: Omit<IngestChanges, 'eventUuids'>;
  count: number;
  /** Events `from` to `to` (exclusive), each decoded when reached. */
  events(from: number, to: number): Generator<StoredEvent>;
}

/** Checks that the record is whole and of this format, and parses its header; throws otherwise. */
export function readFlushRecord(record: Uint8Array): FlushRecordReader {
  const bytes = asBuffer(record);
  const space = bytes.indexOf(0x20);
  const headerBytes = Number(bytes.toString('latin1', 0, Math.max(space, 0)));
  if (space < 1 || !Number.isSafeInteger(headerBytes) || space + 1 + headerBytes > bytes.length) throw new Error('not a flush record');
  const header = JSON.parse(bytes.toString('utf8', space + 1, space + 1 + headerBytes)) as Header;
  if (header.format !== FORMAT) throw new Error(`unknown flush record format ${String(header.format)}`);
  if (!Number.isSafeInteger(header.changes?.flushSeq) || !Array.isArray(header.events)) throw new Error('not a flush record');
  // Where each event's properties start.
  const offsets = new Array<number>(header.events.length + 1);
  offsets[0] = space + 1 + headerBytes;
  for (let i = 0; i < header.events.length; i++) offsets[i + 1] = offsets[i] + header.events[i][9];
  const end = offsets[header.events.length];
  if (end !== bytes.length - 1 || bytes[end] !== 0x0a) throw new Error('flush record length does not match its header');
  return {
    changes: header.changes,
    count: header.events.length,
    *events(from: number, to: number): Generator<StoredEvent> {
      for (let i = from; i < to; i++) {
        const [project_id, uuid, event, distinct_id, person_id, timestamp, created_at, elements_chain, groups] = header.events[i];
        yield {
          project_id,
          uuid,
          event,
          distinct_id,
          person_id,
          timestamp: new Date(timestamp),
          created_at: new Date(created_at),
          properties_json: bytes.toString('utf8', offsets[i], offsets[i + 1]),
          elements_chain,
          groups,
        };
      }
    },
  };
}

/** Parses one whole record; throws on anything that is not a whole record of this format. */
export function decodeFlushRecord(record: Uint8Array): FlushRecord {
  const reader = readFlushRecord(record);
  const events = [...reader.events(0, reader.count)];
  const eventUuids = events.map((e) => ({ project_id: e.project_id, uuid: e.uuid }));
  return { changes: { ...reader.changes, eventUuids }, events };
}
