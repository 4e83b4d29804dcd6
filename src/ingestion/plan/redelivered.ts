/**
 * Events of a redelivered log batch whose uuids the metadata store already holds. The node that
 * took the batch first may have died after its metadata commit and before its event-store
 * write, so the metadata store's "seen" is no proof that the event store has the row. With an
 * event store that keeps one row per uuid, such an event is written again: the row the first
 * delivery made (under the person its distinct id has now), without person, group or definition
 * changes (those were committed), and its person's mirror rows are copied again (they were part
 * of the lost write too).
 *
 * An event that made or used a person is not written when a person deletion took its distinct id
 * after the first delivery's commit: the deletion could not see this row and must not be undone
 * by it, even when a later event made a new person for that distinct id. The store says which
 * flush first committed the event and which flushes came before each such deletion; without that
 * (a store that keeps no record), a distinct id with no person now means the same, as only a
 * deletion takes a distinct id from its person.
 */
import type { IngestSnapshot, StoredEvent } from '../../store/types.js';
import type { IncomingEvent } from '../types.js';
import { enrich, type Enricher } from './enrich.js';
import { groupColumnsOf, type GroupWorkingSet } from './groups.js';
import { personUuidFor, type PersonWorkingSet } from './persons.js';
import { toRow } from './row.js';

export interface RewrittenEvent {
  row: StoredEvent;
  /** The person the row is stored under: its distinct id's person now. */
  personId: string;
}

export function rewrittenEvent(
  snapshot: Pick<IngestSnapshot, 'firstCommits' | 'deletionsOfDistinctIds'>,
  persons: PersonWorkingSet,
  groups: GroupWorkingSet,
  projectId: number,
  anonymizeIps: boolean,
  event: IncomingEvent,
  deps: { enrich?: Enricher; now: Date },
): RewrittenEvent | null {
  const processPerson = event.properties.$process_person_profile !== false;
  const person = persons.personOf(projectId, event.distinctId);
  if (processPerson && (!person || deletedSinceFirstCommit(snapshot, projectId, event))) return null;
  enrich(event.properties, anonymizeIps, deps.enrich);
  const columns = groupColumnsOf(groups, projectId, event, processPerson);
  const personId = person?.uuid ?? personUuidFor(projectId, event.distinctId);
  return { row: toRow(projectId, event, personId, columns, deps.now), personId };
}

/** Whether a person deletion took the event's distinct id after the flush that first committed the event. */
function deletedSinceFirstCommit(snapshot: Pick<IngestSnapshot, 'firstCommits' | 'deletionsOfDistinctIds'>, projectId: number, event: IncomingEvent): boolean {
  const commit = snapshot.firstCommits?.get(`${projectId}:${event.uuid}`);
  if (!commit) return false;
  const deletions = snapshot.deletionsOfDistinctIds?.get(`${projectId}:${event.distinctId}`) ?? [];
  return deletions.some((flushesBefore) => commit.flushSeq <= (flushesBefore[commit.node] ?? -1));
}
