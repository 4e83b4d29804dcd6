/**
 * Wall-clock time in a time zone, for the calendar functions. DuckDB's time-zone functions
 * (ICU) cost ~25× a plain date_trunc per row; when the statement says which span its rows lie
 * in (PrintOptions.timeSpan), the conversion is instead the epoch plus the offset of the
 * segment the row falls in — integer arithmetic — and ICU is kept for rows outside the span.
 */
import { offsetSegments } from '../timezone.js';
import { timestampText } from '../dates.js';
import type { Binder, LocalTimeWriter } from './writer.js';

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

  /** The UTC TIMESTAMP of the wall-clock TIMESTAMP `sql` in `tz` (a gap takes the later offset). */
  instant(sql: string, tz: string): string {
    if (tz === 'UTC') return sql;
    return `timezone('UTC', timezone(${this.printer.bind(tz, 'String')}, ${sql}))`;
  }
}
