/** What an events API request asks for, once its query parameters are validated. */
import type { ActionStep } from '../store/types.js';
import type { GroupValues } from './group-filters.js';

export interface EventsQuery {
  projectId: number;
  /** The request's "now": relative dates and HogQL's now() use it. */
  now: Date;
  /** Exclusive bounds, as DateTime text with microseconds (hogql/dates.ts). */
  after: string | null;
  before: string | null;
  distinctId: string | null;
  event: string | null;
  /** Person uuid: the events of every distinct id of that person. */
  personId: string | null;
  /** The steps of the action `action_id` names: events matching any of them. */
  actionSteps: ActionStep[] | null;
  /** What the group filters of `properties` read (events/group-filters.ts), or null. */
  groupValues: GroupValues | null;
  /** Parsed `properties` JSON (list of filters or a group), or null. */
  properties: unknown;
  select: string[] | null;
  where: string[] | null;
  /** HogQL expressions, `-` in front for descending; null = newest first. */
  orderBy: string[] | null;
}

/** A keyset position: the (timestamp, uuid) of a row in newest-first order. */
export interface Cursor {
  /** true: the rows newer than the position (a `previous` link), false: the older ones. */
  reverse: boolean;
  /** The row at the position itself is included. */
  inclusive: boolean;
  /** `YYYY-MM-DDTHH:MM:SS.ffffff`, UTC, microseconds as stored. */
  timestamp: string;
  uuid: string;
}

export interface Paging {
  limit: number;
  offset: number;
  cursor: Cursor | null;
}

export type Format = 'json' | 'csv';
