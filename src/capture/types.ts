/** Shapes of a capture request: what the HTTP layer hands the decoder, and what it decodes to. */

import type { JsonObject } from '../kernel/json.js';
import type { DropReason } from '../ingestion/types.js';

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

export type Outcome<T> = { ok: true; value: T } | { ok: false; reason: DropReason };
