/**
 * What the persons and groups stores of both engines share: row → record mappers (SQLite gives
 * JSON as text and booleans as 0/1, PostgreSQL parsed JSON, true/false and bigint ids as
 * strings), and the order of distinct ids.
 */
import type { JsonObject } from '../kernel/json.js';
import type { ActivityEntry, GroupType, PersonDeletion, StoredGroup, StoredPerson } from './types.js';
import { jsonColumn, nullableNumber, toBool } from './rows.js';

type Row = Record<string, unknown>;

export const personFromRow = (row: Row, distinctIds: string[]): StoredPerson => ({
  id: Number(row.id),
  uuid: row.uuid as string,
  project_id: row.project_id as number,
  properties: jsonColumn<JsonObject>(row.properties, {}),
  is_identified: toBool(row.is_identified),
  created_at: row.created_at as string,
  version: row.version as number,
  distinct_ids: distinctIds,
});

export const deletionFromRow = (row: Row): PersonDeletion => ({
  id: Number(row.id),
  project_id: row.project_id as number,
  person_uuid: row.person_uuid as string,
  distinct_ids: jsonColumn<string[]>(row.distinct_ids, []),
  delete_events: toBool(row.delete_events),
  after_flush_seq: Number(row.after_flush_seq),
  flushes_before: jsonColumn<Record<string, number> | null>(row.flushes_before, null),
  requested_by: nullableNumber(row.requested_by),
  requested_at: row.requested_at as string,
  finished_at: (row.finished_at as string | null) ?? null,
  purged_at: (row.purged_at as string | null) ?? null,
});

export const activityFromRow = (row: Row): ActivityEntry => ({
  id: Number(row.id),
  project_id: row.project_id as number,
  scope: row.scope as string,
  item_id: row.item_id as string,
  activity: row.activity as string,
  user_id: nullableNumber(row.user_id),
  detail: jsonColumn<JsonObject>(row.detail, {}),
  created_at: row.created_at as string,
});

export const groupFromRow = (row: Row): StoredGroup => ({
  group_type_index: row.group_type_index as number,
  group_key: row.group_key as string,
  properties: jsonColumn<JsonObject>(row.properties, {}),
  created_at: row.created_at as string,
});

export const groupTypeFromRow = (row: Row): GroupType => ({
  group_type: row.group_type as string,
  group_type_index: row.group_type_index as number,
  name_singular: (row.name_singular as string | null) ?? null,
  name_plural: (row.name_plural as string | null) ?? null,
});

/** The newest-persons plan looks at this many persons per row of the page before it scans them all. */
export const WINDOW_PER_PAGE = 20;

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Each person's distinct ids from rows sorted by distinct id, in PostHog's order: ids that are
 * not uuids (identified ones) first.
 */
export function distinctIdsByPerson(rows: { person_uuid: string; distinct_id: string }[]): Map<string, string[]> {
  const byPerson = new Map<string, string[]>();
  for (const row of rows) {
    let list = byPerson.get(row.person_uuid);
    if (!list) byPerson.set(row.person_uuid, (list = []));
    list.push(row.distinct_id);
  }
  for (const list of byPerson.values()) list.sort((a, b) => Number(UUID_SHAPE.test(a)) - Number(UUID_SHAPE.test(b)));
  return byPerson;
}

/** Group property names with their counts, by group type (rows sorted by type, then most common first). */
export function propertyNamesByType(rows: { idx: number; name: string; n: number | string }[]): Map<number, { name: string; count: number }[]> {
  const byType = new Map<number, { name: string; count: number }[]>();
  for (const row of rows) {
    let list = byType.get(row.idx);
    if (!list) byType.set(row.idx, (list = []));
    list.push({ name: row.name, count: Number(row.n) });
  }
  return byType;
}
