/**
 * The person changes of consecutive flushes, combined so that an event store applies them with
 * a handful of statements per write instead of per flush (a write of small flushes holds
 * hundreds). Upserts and deletes are keyed by person, distinct-id assignments by distinct id,
 * so within a run the last change of each key is the net effect. A merge's reassignment moves
 * whatever the store holds at that point, so a flush with reassignments starts a new run.
 */
import type { IngestChanges } from './types.js';

export type PersonChanges = Pick<IngestChanges, 'upsertPersons' | 'deletePersons' | 'reassignDistinctIds' | 'setDistinctIds'>;

export function combinePersonChanges(flushes: PersonChanges[]): PersonChanges[] {
  const runs: PersonChanges[] = [];
  let persons = new Map<string, { project_id: number; uuid: string; upsert: IngestChanges['upsertPersons'][number] | null }>();
  let ids = new Map<string, IngestChanges['setDistinctIds'][number]>();
  let reassignments: PersonChanges['reassignDistinctIds'] = [];
  const close = () => {
    if (reassignments.length === 0 && persons.size === 0 && ids.size === 0) return;
    const upserts = [...persons.values()].flatMap((p) => (p.upsert ? [p.upsert] : []));
    const deletes = [...persons.values()].flatMap((p) => (p.upsert ? [] : [{ project_id: p.project_id, uuid: p.uuid }]));
    runs.push({ reassignDistinctIds: reassignments, deletePersons: deletes, upsertPersons: upserts, setDistinctIds: [...ids.values()] });
    persons = new Map();
    ids = new Map();
    reassignments = [];
  };
  for (const flush of flushes) {
    if (flush.reassignDistinctIds.length > 0) {
      close();
      reassignments = flush.reassignDistinctIds;
    }
    for (const p of flush.deletePersons) persons.set(p.uuid, { project_id: p.project_id, uuid: p.uuid, upsert: null });
    for (const p of flush.upsertPersons) persons.set(p.uuid, { project_id: p.project_id, uuid: p.uuid, upsert: p });
    for (const d of flush.setDistinctIds) ids.set(`${d.project_id}\u0000${d.distinct_id}`, d);
  }
  close();
  return runs;
}
