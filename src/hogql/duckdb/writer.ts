/** What the DuckDB function and time-zone printers need from the statement printer. */
import type { IrCall, IrExpr } from '../ir.js';
import type { HogQLType } from '../types.js';

export interface Binder {
  /** A bound value, cast to the SQL type of `type`. */
  bind(value: unknown, type: HogQLType): string;
}

export interface LocalTimeWriter {
  /** The wall-clock TIMESTAMP in `tz` of the UTC TIMESTAMP `sql`. */
  wall(sql: string, tz: string): string;
  /** The UTC TIMESTAMP of the wall-clock TIMESTAMP `sql` in `tz`. */
  instant(sql: string, tz: string): string;
}

export interface SqlWriter extends Binder {
  readonly local: LocalTimeWriter;
  expr(e: IrExpr): string;
  args(c: IrCall): string[];
}

/** RFC 6901: `~` → `~0`, `/` → `~1`. Works for every key, including empty and `$`-prefixed ones. */
export function jsonPointer(path: string[]): string {
  return `/${path.map((key) => key.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
}
