/** What compiling HogQL needs from the request and the project. */
export type PropertyKind = 'event' | 'person' | 'group';
export type PropertyValueType = 'Numeric' | 'Boolean' | 'DateTime' | 'String';

export interface CompileContext {
  /** Declared type of a property (from property definitions), or null when unknown. */
  propertyType: (kind: PropertyKind, key: string) => PropertyValueType | null;
  /** The request's "now": `now()`, `today()` and relative dates use it. */
  now: Date;
  /** The project's time zone: calendar functions and naive date literals use it (UTC when absent). */
  timeZone?: string;
}

export const timeZoneOf = (ctx: CompileContext) => ctx.timeZone ?? 'UTC';
