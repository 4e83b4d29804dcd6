/** The wire form of a batch in the JetStream log: JSON, with timestamps as ISO texts. */
import type { JsonObject } from '../../kernel/json.js';
import type { PendingEvent } from '../plan/plan.js';
import { EventTooLargeError } from './types.js';

interface WireEvent {
  p: number;
  a: boolean;
  u: string;
  e: string;
  d: string;
  props: JsonObject;
  t: string;
  c: string;
}

export function encodeBatch(events: PendingEvent[]): Uint8Array {
  const wire: WireEvent[] = events.map(({ projectId, anonymizeIps, event }) => ({
    p: projectId,
    a: anonymizeIps,
    u: event.uuid,
    e: event.event,
    d: event.distinctId,
    props: event.properties,
    t: event.timestamp.toISOString(),
    c: event.elementsChain,
  }));
  return Buffer.from(JSON.stringify(wire));
}

/**
 * The events as messages of at most `maxBytes` each, in order: halved until each part fits, so
 * that the same events always give the same parts (a retry's message ids match the first
 * attempt's).
 */
export function encodeInParts(events: PendingEvent[], maxBytes: number): Uint8Array[] {
  const encoded = encodeBatch(events);
  if (encoded.byteLength <= maxBytes) return [encoded];
  if (events.length === 1) throw new EventTooLargeError(`an event of ${encoded.byteLength} bytes is larger than the log's ${maxBytes} byte message limit`);
  const half = Math.ceil(events.length / 2);
  return [...encodeInParts(events.slice(0, half), maxBytes), ...encodeInParts(events.slice(half), maxBytes)];
}

export function decodeBatch(bytes: Uint8Array): PendingEvent[] {
  const wire = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) as WireEvent[];
  return wire.map((w) => ({
    projectId: w.p,
    anonymizeIps: w.a,
    event: { uuid: w.u, event: w.e, distinctId: w.d, properties: w.props, timestamp: new Date(w.t), elementsChain: w.c },
  }));
}
