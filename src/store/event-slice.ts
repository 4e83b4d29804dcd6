import type { EventSlice, EventStorePosition } from './types.js';

/** Where the event store stands once it holds a slice: after its last flush, or inside it. */
export function positionAfter({ flushes, to, after }: EventSlice): EventStorePosition {
  const last = flushes[flushes.length - 1];
  if (to >= last.events) return { seq: last.seq, events: 0 };
  return { seq: flushes.length > 1 ? flushes[flushes.length - 2].seq : after, events: to };
}

/** How many events a slice holds. */
export function sliceEvents({ flushes, from, to }: EventSlice): number {
  if (flushes.length === 1) return to - from;
  let events = flushes[0].events - from + to;
  for (let i = 1; i < flushes.length - 1; i++) events += flushes[i].events;
  return events;
}
