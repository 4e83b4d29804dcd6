/**
 * Events of a redelivered log batch whose uuids the metadata store already holds. The node that
 * took the batch first may have died after its metadata commit and before its event-store
 * write, so the metadata store's "seen" is no proof that the event store has the row. With an
 * event store that keeps one row per uuid, such an event is written again: the row the first
 * delivery made (under the person its distinct id has now), without person, group or definition
 * changes (those were committed), and its person's mirror rows are copied again (they were part
 * of the lost write too).
 */
import type { StoredEvent } from '../../store/types.js';
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
  persons: PersonWorkingSet,
  groups: GroupWorkingSet,
  projectId: number,
  anonymizeIps: boolean,
  event: IncomingEvent,
  deps: { enrich?: Enricher; now: Date },
): RewrittenEvent {
  const processPerson = event.properties.$process_person_profile !== false;
  enrich(event.properties, anonymizeIps, deps.enrich);
  const columns = groupColumnsOf(groups, projectId, event, processPerson);
  const personId = persons.personOf(projectId, event.distinctId)?.uuid ?? personUuidFor(projectId, event.distinctId);
  return { row: toRow(projectId, event, personId, columns, deps.now), personId };
}
