/**
 * Collects bound parameter values while SQL is printed. Every user value goes through
 * `add`; the SQL only ever holds the returned `$n` placeholder. A caller may add its own
 * values first (project id, limits) and share one sink across several compile calls.
 */
export type ParamValue = string | number | boolean | null;

export class ParamSink {
  private readonly list: ParamValue[] = [];

  add(value: ParamValue): string {
    this.list.push(value);
    return `$${this.list.length}`;
  }

  /** Values in placeholder order, ready for `connection.runAndReadAll(sql, values)`. */
  get values(): ParamValue[] {
    return [...this.list];
  }

  get size(): number {
    return this.list.length;
  }
}

export type PropertyKind = 'event' | 'person';
export type PropertyValueType = 'Numeric' | 'Boolean' | 'DateTime' | 'String';

/** What compilation needs from the outside world. */
export interface CompileContext {
  params: ParamSink;
  /** Declared type of a property (from property definitions), or null when unknown. */
  propertyType: (kind: PropertyKind, key: string) => PropertyValueType | null;
  /** The request's "now": `now()`, `today()` and relative dates use it. */
  now: Date;
}
