/** Snapshots and events for unit tests of ingestion's planning steps, without a store. */
import type { IngestSnapshot, PersonRecord } from '../../src/store/types.js';
import type { IncomingEvent } from '../../src/ingestion/types.js';
import type { JsonObject } from '../../src/kernel/json.js';

export function emptySnapshot(): IngestSnapshot {
  return { distinctIdToPerson: new Map(), persons: new Map(), existingUuids: new Map(), groupTypes: new Map(), groups: new Map() };
}

let counter = 0;

/** An event as capture hands it over; uuids are unique unless given. */
export function incoming(event: string, distinctId: string, properties: JsonObject = {}, extra: Partial<IncomingEvent> = {}): IncomingEvent {
  counter += 1;
  return {
    uuid: `00000000-0000-7000-8000-${String(counter).padStart(12, '0')}`,
    event,
    distinctId,
    properties,
    timestamp: new Date('2026-11-01T12:00:00Z'),
    elementsChain: '',
    ...extra,
  };
}

/** Puts an existing person into a snapshot, owning the given distinct ids. */
export function withPerson(snapshot: IngestSnapshot, projectId: number, person: Partial<PersonRecord> & { uuid: string }, distinctIds: string[]): PersonRecord {
  const record: PersonRecord = { project_id: projectId, properties: {}, is_identified: false, created_at: '2026-01-01T00:00:00.000Z', version: 0, ...person };
  snapshot.persons.set(record.uuid, record);
  let ids = snapshot.distinctIdToPerson.get(projectId);
  if (!ids) snapshot.distinctIdToPerson.set(projectId, (ids = new Map()));
  for (const id of distinctIds) ids.set(id, record.uuid);
  return record;
}
