/**
 * A person's data export (a subject access request): the person and every event of theirs, as
 * one JSON document or as CSV (the person's fields first, then the events' rows), streamed.
 */
import { csvExport, eventsJson, planRequest } from '../events/service.js';
import { MAX_CSV_LIMIT } from '../events/params.js';
import type { PersonLookup } from '../events/persons.js';
import type { TypeLookup } from '../events/typed-compile.js';
import { csvLine } from '../events/csv.js';
import type { EventStore, StoredPerson } from '../store/types.js';
import { personView } from './service.js';

/** Every event: the export walks them a part at a time, up to the CSV exports' own cap. */
const ALL = { limit: MAX_CSV_LIMIT, offset: 0, cursor: null };

export interface ExportDeps {
  events: EventStore;
  persons: PersonLookup;
  types: TypeLookup;
}

async function planFor(person: StoredPerson, types: TypeLookup) {
  const query = {
    projectId: person.project_id,
    now: new Date(),
    after: null,
    before: null,
    distinctId: null,
    event: null,
    personId: person.uuid,
    actionSteps: null,
    groupValues: null,
    properties: null,
    select: null,
    where: null,
    orderBy: null,
  };
  return planRequest(query, types, ALL);
}

export async function personJson(person: StoredPerson, deps: ExportDeps): Promise<AsyncIterable<string>> {
  const events = await eventsJson(deps.events, deps.persons, await planFor(person, deps.types), ALL);
  return (async function* () {
    yield `{"person":${JSON.stringify(personView(person))},"events":[`;
    let first = true;
    for await (const chunk of events) {
      for (const event of chunk) {
        yield (first ? '' : ',') + JSON.stringify(event);
        first = false;
      }
    }
    yield ']}';
  })();
}

export async function personCsv(person: StoredPerson, deps: ExportDeps): Promise<AsyncIterable<string>> {
  const events = await csvExport(deps.events, await planFor(person, deps.types), ALL);
  const view = personView(person);
  return (async function* () {
    yield csvLine(['person_id', 'uuid', 'name', 'distinct_ids', 'created_at', 'is_identified', 'properties']);
    yield csvLine([view.id, view.uuid, view.name, view.distinct_ids, view.created_at, view.is_identified, view.properties]);
    yield '\r\n';
    yield* events;
  })();
}
