/** Reading every event back as StoredEvent, for exports (EventStore.exportEvents). */
import type { EventQuery, StoredEvent } from '../types.js';

/** No order: a plain scan streams without sorting the whole table. */
export const EXPORT_EVENTS: EventQuery = {
  sql: `SELECT project_id, uuid::VARCHAR AS uuid, event, distinct_id, person_id::VARCHAR AS person_id,
          epoch_ms(timestamp) AS timestamp_ms, epoch_ms(created_at) AS created_at_ms, properties::VARCHAR AS properties,
          elements_chain, "$group_0" AS g0, "$group_1" AS g1, "$group_2" AS g2, "$group_3" AS g3, "$group_4" AS g4
        FROM events`,
  params: [],
};

export function storedEventOf(row: Record<string, unknown>): StoredEvent {
  return {
    project_id: Number(row.project_id),
    uuid: String(row.uuid),
    event: String(row.event),
    distinct_id: String(row.distinct_id),
    person_id: row.person_id === null || row.person_id === undefined ? null : String(row.person_id),
    timestamp: new Date(Number(row.timestamp_ms)),
    created_at: new Date(Number(row.created_at_ms)),
    properties_json: String(row.properties),
    elements_chain: String(row.elements_chain),
    groups: [String(row.g0), String(row.g1), String(row.g2), String(row.g3), String(row.g4)],
  };
}

export async function* storedEvents(chunks: AsyncIterable<Record<string, unknown>[]>): AsyncIterable<StoredEvent[]> {
  for await (const rows of chunks) yield rows.map(storedEventOf);
}
