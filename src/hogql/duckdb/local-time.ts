/**
 * Wall-clock time in a time zone, for the calendar functions. DuckDB's time-zone functions
 * (ICU) cost ~25× a plain date_trunc per row; when the statement says which span its rows lie
 * in (PrintOptions.timeSpan), the conversion is instead the epoch plus the offset of the
 * segment the row falls in — integer arithmetic — and ICU is kept for rows outside the span.
 */
import { offsetSegments } from '../timezone.js';
import { timestampText } from '../dates.js';
import type { Binder, LocalTimeWriter } from './writer.js';

/** How far beyond the span the offsets are read for instant(), and how close to those ends a wall is left to ICU (more than any one change of offset). */
const INSTANT_MARGIN_MS = 2 * 86_400_000;
const EDGE_MS = 3 * 3_600_000;

export class LocalTime implements LocalTimeWriter {
  constructor(
    private readonly printer: Binder,
    private readonly span: { from: Date; to: Date } | null,
  ) {}

  /** The wall-clock TIMESTAMP in `tz` of the UTC TIMESTAMP `sql`. */
  wall(sql: string, tz: string): string {
    if (tz === 'UTC') return sql;
    const p = this.printer;
    const icu = `timezone(${p.bind(tz, 'String')}, timezone('UTC', ${sql}))`;
    const segments = this.span ? offsetSegments(tz, this.span.from.getTime(), this.span.to.getTime()) : null;
    if (!this.span || !segments) return icu;
    const micros = (ms: number) => p.bind(ms * 1000, 'Integer');
    const at = (ms: number) => p.bind(timestampText(new Date(ms)), 'DateTime');
    let offset: string;
    if (segments.length === 1) {
      offset = micros(segments[0].offset);
    } else {
      const branches = segments.slice(1).map((segment, i) => `WHEN ${sql} < ${at(segment.from)} THEN ${micros(segments[i].offset)}`);
      offset = `CASE ${branches.join(' ')} ELSE ${micros(segments[segments.length - 1].offset)} END`;
    }
    const fast = `make_timestamp(epoch_us(${sql}) + ${offset})`;
    return `(CASE WHEN ${sql} >= ${at(this.span.from.getTime())} AND ${sql} <= ${at(this.span.to.getTime())} THEN ${fast} ELSE ${icu} END)`;
  }

  /**
   * The UTC TIMESTAMP of the wall-clock TIMESTAMP `sql` in `tz` (a gap takes the later offset).
   * Near the span, a wall time that only one offset segment can name (not in a DST gap or
   * overlap) is the wall minus that offset — so grouping by an hour bucket's instant does not
   * run the time-zone library on every row; anything else goes through ICU. The segments are
   * read a margin beyond the span so that a change just outside it is known, and walls the
   * margin's edges could make ambiguous are left to ICU.
   */
  instant(sql: string, tz: string): string {
    if (tz === 'UTC') return sql;
    const p = this.printer;
    const icu = `timezone('UTC', timezone(${p.bind(tz, 'String')}, ${sql}))`;
    if (!this.span) return icu;
    const start = this.span.from.getTime() - INSTANT_MARGIN_MS;
    const end = this.span.to.getTime() + INSTANT_MARGIN_MS;
    const segments = offsetSegments(tz, start, end);
    if (!segments) return icu;
    const lowest = start + segments[0].offset + EDGE_MS;
    const highest = end + segments[segments.length - 1].offset - EDGE_MS;
    const at = (ms: number) => p.bind(timestampText(new Date(ms)), 'DateTime');
    const branches = segments.flatMap((segment, i) => {
      const next = segments[i + 1];
      const previous = segments[i - 1];
      // Wall times of this segment, less those a neighbouring segment names too.
      const from = Math.max(segment.from + segment.offset, previous ? segment.from + previous.offset : lowest, lowest);
      const to = Math.min((next ? next.from : end) + segment.offset, next ? next.from + next.offset : highest, highest);
      return from < to ? [`WHEN ${sql} >= ${at(from)} AND ${sql} < ${at(to)} THEN make_timestamp(epoch_us(${sql}) - ${p.bind(segment.offset * 1000, 'Integer')})`] : [];
    });
    return branches.length > 0 ? `(CASE ${branches.join(' ')} ELSE ${icu} END)` : icu;
  }
}
