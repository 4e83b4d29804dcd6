/** Shapes that flow through ingestion: decoded request → normalised event → pipeline. */

export type JsonObject = Record<string, unknown>;

/** What the HTTP layer hands to the decoder for one capture request. */
export interface CaptureInput {
  /** Request path without the query string, e.g. `/i/v0/e/`. */
  path: string;
  /** Query parameters (first value of each). */
  query: Record<string, string | undefined>;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  /** Raw request body (may be empty for GET). */
  body: Buffer;
  /** Largest decompressed/decoded payload accepted, in bytes. */
  maxDecodedBytes: number;
  /** HTTP method; GET requests may carry the token in the query string. */
  method?: string;
}

/** A capture request after decoding: the events as sent, plus request-level fields. */
export interface DecodedCapture {
  /** Project token found per the token rules, or null when none was sent. */
  token: string | null;
  /** Request-level `sent_at` (batch envelope, or query `_` in ms), if any. */
  sentAt: Date | null;
  /** Events as sent by the client; each is a plain object (never null/array). */
  events: JsonObject[];
  /** UTF-8 size of the decoded JSON text: no event in it is larger. */
  payloadBytes: number;
  /** Batch items that were not JSON objects; count them as drops with reason `not_an_object`. */
  droppedNonObjects?: number;
  /** `$performance_event` items removed while decoding; count them with reason `performance_event`. */
  droppedPerformanceEvents?: number;
  /** Envelope flag `historical_migration: true` (bulk imports of old data). */
  historicalMigration?: boolean;
  /**
   * `project_id` as sent (query, else the envelope or first event), unchecked: it names the
   * project when the token is a personal API key instead of the project's.
   */
  projectId?: unknown;
}

/** One event after normalisation, ready for the pipeline. */
export interface IncomingEvent {
  uuid: string;
  event: string;
  distinctId: string;
  /** Event properties; `$set`/`$set_once` from the top level already merged in. */
  properties: JsonObject;
  timestamp: Date;
  /** Autocapture elements chain (from `elements_chain`/`$elements_chain`/`$elements`), '' when none. */
  elementsChain: string;
}

/** Why an event was not stored; counted in metrics and logged, never silent. */
export type DropReason =
  | 'missing_event_name'
  | 'missing_distinct_id'
  | 'invalid_uuid'
  | 'duplicate_uuid'
  | 'performance_event'
  | 'process_person_profile_false_person_event'
  | 'not_an_object'
  | 'event_too_large'
  | 'bot';

export type Outcome<T> = { ok: true; value: T } | { ok: false; reason: DropReason };
