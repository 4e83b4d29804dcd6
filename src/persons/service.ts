/**
 * Persons as the management API shows and changes them. Property changes are events (`$set`,
 * `$delete_person_property`) through the group commit, as PostHog emits them, so ingestion stays
 * the only writer of person properties.
 */
import { v7 as uuidv7 } from 'uuid';
import { notFound, validationError } from '../kernel/errors.js';
import type { JsonObject } from '../kernel/json.js';
import type { PendingEvent } from '../ingestion/plan/plan.js';
import type { Project, PersonStore, StoredPerson } from '../store/types.js';
import { canonicalUuid } from '../util/uuid.js';

/** The properties PostHog takes a person's display name from, in order. */
const NAME_PROPERTIES = ['email', 'Email', '$email', 'name', 'Name', 'username', 'Username', 'UserName'];

export interface PersonView {
  type: 'person';
  id: number;
  uuid: string;
  name: string;
  distinct_ids: string[];
  properties: JsonObject;
  created_at: string;
  is_identified: boolean;
  matched_recordings: [];
  value_at_data_point: null;
}

export function personView(person: StoredPerson): PersonView {
  return {
    type: 'person',
    id: person.id,
    uuid: person.uuid,
    name: displayName(person),
    distinct_ids: person.distinct_ids,
    properties: person.properties,
    created_at: person.created_at,
    is_identified: person.is_identified,
    matched_recordings: [],
    value_at_data_point: null,
  };
}

function displayName(person: StoredPerson): string {
  for (const key of NAME_PROPERTIES) {
    const value = person.properties[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return person.distinct_ids[0] ?? person.uuid;
}

/** A path's person reference: a positive integer id or a uuid; anything else is a 400. */
export function personRef(raw: string): number | string {
  if (/^\d{1,15}$/.test(raw)) return Number(raw);
  const uuid = canonicalUuid(raw);
  if (uuid) return uuid;
  throw validationError('The person id must be its integer id or its uuid; to find a person by distinct id, list with ?distinct_id=.', 'id', 'invalid');
}

export class Persons {
  constructor(
    private readonly store: PersonStore,
    /** Hands events to the group commit; resolves once they are durable. */
    private readonly submit: (events: PendingEvent[]) => Promise<void>,
  ) {}

  async get(projectId: number, ref: number | string): Promise<StoredPerson> {
    const person = await this.store.get(projectId, ref);
    if (!person) throw notFound();
    return person;
  }

  // The person is looked up before the body is checked: another project's person is a 404 whatever the body.

  async updateProperty(project: Project, ref: number | string, key: unknown, value: unknown): Promise<void> {
    const person = await this.get(project.id, ref);
    if (typeof key !== 'string' || key === '') throw validationError('key is required.', 'key', 'required');
    if (value === undefined) throw validationError('value is required.', 'value', 'required');
    await this.emit(project, person, '$set', { $set: { [key]: value } });
  }

  /** PATCH: every property given is `$set`. */
  async setProperties(project: Project, ref: number | string, properties: JsonObject | undefined): Promise<void> {
    const person = await this.get(project.id, ref);
    if (properties === undefined) throw validationError('This field is required.', 'properties', 'required');
    await this.emit(project, person, '$set', { $set: properties });
  }

  async deleteProperty(project: Project, ref: number | string, key: unknown): Promise<void> {
    const person = await this.get(project.id, ref);
    if (typeof key !== 'string' || key === '') throw validationError('$unset is required.', '$unset', 'required');
    await this.emit(project, person, '$delete_person_property', { $unset: [key] });
  }

  private async emit(project: Project, person: StoredPerson, event: string, properties: JsonObject): Promise<void> {
    const distinctId = person.distinct_ids[0];
    if (distinctId === undefined) throw notFound();
    await this.submit([
      {
        projectId: project.id,
        anonymizeIps: project.anonymize_ips,
        event: { uuid: uuidv7(), event, distinctId, properties, timestamp: new Date(), elementsChain: '' },
      },
    ]);
  }
}
