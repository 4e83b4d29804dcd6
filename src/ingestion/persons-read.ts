/**
 * What a flush's planning reads of the persons, taken before planning changes the snapshot's
 * persons in place: a store that several nodes write checks it at apply time (PersonsChangedError).
 */
import type { IngestSnapshot, IngestSnapshotRequest, PersonRead } from '../store/types.js';

/** Every distinct id the flush looked up: found ones (the snapshot's) with their person's version, the rest as none. */
export function personsReadOf(snapshot: IngestSnapshot, request: IngestSnapshotRequest): PersonRead[] {
  const read: PersonRead[] = [];
  for (const [projectId, mapping] of snapshot.distinctIdToPerson) {
    for (const [distinctId, uuid] of mapping) {
      read.push({ project_id: projectId, distinct_id: distinctId, person_uuid: uuid, version: snapshot.persons.get(uuid)?.version ?? null });
    }
  }
  for (const [projectId, distinctIds] of request.distinctIds) {
    const mapping = snapshot.distinctIdToPerson.get(projectId);
    for (const distinctId of distinctIds) {
      if (!mapping?.has(distinctId)) read.push({ project_id: projectId, distinct_id: distinctId, person_uuid: null, version: null });
    }
  }
  return read;
}
