/** What ingestion takes in: events after capture has normalised them, and why one may be dropped. */
import type { JsonObject } from '../kernel/json.js';

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
  /** A redelivered event whose person was deleted after its first delivery's commit (plan/redelivered.ts). */
  | 'person_deleted'
  | 'performance_event'
  | 'process_person_profile_false_person_event'
  | 'not_an_object'
  | 'event_too_large'
  | 'bot';
