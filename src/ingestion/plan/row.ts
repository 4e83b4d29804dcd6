/** Step 6, the row: the event as the event store keeps it, its properties serialised once. */
import type { StoredEvent } from '../../store/types.js';
import type { IncomingEvent } from '../types.js';

export function toRow(projectId: number, event: IncomingEvent, personId: string, groups: StoredEvent['groups'], receivedAt: Date): StoredEvent {
  return {
    project_id: projectId,
    uuid: event.uuid,
    event: event.event,
    distinct_id: event.distinctId,
    person_id: personId,
    timestamp: event.timestamp,
    created_at: receivedAt,
    properties_json: JSON.stringify(event.properties),
    elements_chain: event.elementsChain,
    groups,
  };
}
