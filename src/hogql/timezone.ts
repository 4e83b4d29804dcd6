/**
 * A time zone's offset over a bounded span of time, as a few constant segments. Dialects use it
 * to turn UTC timestamps into wall-clock time with plain arithmetic instead of a time-zone
 * library call per row, when the caller knows which span its rows lie in.
 */
import { offsetMs } from './dates.js';

export interface OffsetSegment {
  /** First instant (epoch ms) of the segment; the first segment starts at the span's start. */
  from: number;
  /** Offset from UTC in ms during the segment. */
  offset: number;
}

const STEP_MS = 6 * 3_600_000;
/** Spans longer than this are not cut into segments (callers fall back to the library). */
export const MAX_SEGMENT_SPAN_MS = 3 * 366 * 86_400_000;

/** The offset segments of `timeZone` over [fromMs, toMs]; null when the span is too long. */
export function offsetSegments(timeZone: string, fromMs: number, toMs: number): OffsetSegment[] | null {
  if (toMs - fromMs > MAX_SEGMENT_SPAN_MS || toMs < fromMs) return null;
  const segments: OffsetSegment[] = [{ from: fromMs, offset: offsetMs(fromMs, timeZone) }];
  let at = fromMs;
  let current = segments[0].offset;
  while (at < toMs) {
    const next = Math.min(at + STEP_MS, toMs);
    const offset = offsetMs(next, timeZone);
    if (offset !== current) {
      // The change lies in (at, next]: find its first millisecond.
      let lo = at;
      let hi = next;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (offsetMs(mid, timeZone) === current) lo = mid;
        else hi = mid;
      }
      segments.push({ from: hi, offset });
      current = offset;
    }
    at = next;
  }
  return segments;
}
