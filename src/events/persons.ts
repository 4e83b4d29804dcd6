/**
 * The `person` of each result: the current person of its distinct id (after merges) with all of
 * its distinct ids. Read from the metadata store, where persons are keyed and indexed (a point
 * lookup), rather than from the event store's mirror, which is built for joins over many rows.
 */
import type { IngestStore } from '../store/types.js';
import type { Person } from './rows.js';

export type PersonLookup = (projectId: number, distinctIds: string[]) => Promise<Map<string, Person>>;

export function personLookup(store: Pick<IngestStore, 'personsOf'>): PersonLookup {
  return async (projectId, distinctIds) => {
    if (distinctIds.length === 0) return new Map();
    const found = await store.personsOf(projectId, [...new Set(distinctIds)]);
    const persons = new Map<string, Person>();
    for (const [distinctId, { person, distinct_ids }] of found) {
      persons.set(distinctId, { is_identified: person.is_identified, distinct_ids, properties: person.properties });
    }
    return persons;
  };
}
