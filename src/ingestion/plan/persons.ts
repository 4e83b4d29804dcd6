/**
 * Step 4, persons, over an in-memory working set loaded from the metadata store: identify/alias
 * merges and $set/$set_once/$unset, as PostHog's `nodejs/src/worker/ingestion/persons/`
 * (`person-merge-service.ts`, `person-update.ts`; github.com/PostHog/posthog) has them. Changes
 * are collected and written by the store in one transaction after the whole batch is processed.
 */
import { v5 as uuidv5 } from 'uuid';
import { isPlainObject, type JsonObject } from '../../kernel/json.js';
import type { IngestChanges, IngestSnapshot, PersonRecord } from '../../store/types.js';
import type { IncomingEvent } from '../types.js';

const PERSON_NAMESPACE = '932979b4-65c3-4424-8467-0b66ec27bc22';

/** Deterministic person uuid from a project and its first distinct id, so retries agree. */
export const personUuidFor = (projectId: number, distinctId: string) => uuidv5(`${projectId}:${distinctId}`, PERSON_NAMESPACE);

const ILLEGAL_CASE_INSENSITIVE = new Set([
  'anonymous', 'guest', 'distinctid', 'distinct_id', 'id', 'not_authenticated', 'email', 'undefined', 'true', 'false',
]);
const ILLEGAL_CASE_SENSITIVE = new Set(['[object Object]', 'NaN', 'None', 'none', 'null', '0', 'undefined']);

/** Ids that clients send by mistake ("null", "undefined", …) must never merge people. */
export function isIllegalDistinctId(id: string): boolean {
  const trimmed = id.trim();
  if (trimmed === '') return true;
  const unquoted = /^(["'])(.*)\1$/.exec(trimmed)?.[2] ?? trimmed;
  for (const candidate of [trimmed, unquoted]) {
    if (ILLEGAL_CASE_INSENSITIVE.has(candidate.toLowerCase()) || ILLEGAL_CASE_SENSITIVE.has(candidate)) return true;
  }
  return false;
}

/** Events that always write the person, even when only "filtered" keys changed. */
const PERSON_EVENTS = new Set(['$identify', '$create_alias', '$merge_dangerously', '$set']);

/**
 * Keys that change on nearly every event (URL, viewport, browser, most GeoIP). As in the
 * original, a change made only of these does not by itself cause a person write on
 * ordinary events; it is stored with the next real change.
 */
const FILTERED_KEYS = new Set([
  '$current_url', '$pathname', '$referring_domain', '$referrer', '$screen_height', '$screen_width',
  '$viewport_height', '$viewport_width', '$browser', '$browser_version', '$device_type', '$raw_user_agent',
  '$os', '$os_name', '$os_version', '$geoip_postal_code', '$geoip_time_zone', '$geoip_latitude', '$geoip_longitude',
  '$geoip_accuracy_radius', '$geoip_subdivision_1_code', '$geoip_subdivision_1_name', '$geoip_subdivision_2_code',
  '$geoip_subdivision_2_name', '$geoip_city_confidence', '$geoip_continent_code', '$geoip_continent_name',
]);

export interface PropertyUpdate {
  set: JsonObject;
  setOnce: JsonObject;
  unset: string[];
}

export function personUpdateOf(properties: JsonObject): PropertyUpdate {
  const unset = properties.$unset;
  return {
    set: isPlainObject(properties.$set) ? properties.$set : {},
    setOnce: isPlainObject(properties.$set_once) ? properties.$set_once : {},
    unset: Array.isArray(unset) ? unset.filter((k): k is string => typeof k === 'string') : isPlainObject(unset) ? Object.keys(unset) : [],
  };
}

/** Events whose person is looked up but never created or changed. */
const PERSONLESS_EVENTS = new Set(['$exception', '$$heatmap']);

export type MergeWarning = 'cannot_merge_with_illegal_distinct_id' | 'cannot_merge_already_identified';

export class PersonWorkingSet {
  private readonly dirty = new Set<string>();
  private readonly deleted = new Map<string, number>();
  private readonly distinctIdWrites = new Map<string, { project_id: number; distinct_id: string; person_uuid: string }>();
  private readonly reassignments: IngestChanges['reassignDistinctIds'] = [];

  constructor(private readonly snapshot: IngestSnapshot) {}

  private mapping(projectId: number): Map<string, string> {
    let map = this.snapshot.distinctIdToPerson.get(projectId);
    if (!map) {
      map = new Map();
      this.snapshot.distinctIdToPerson.set(projectId, map);
    }
    return map;
  }

  personOf(projectId: number, distinctId: string): PersonRecord | undefined {
    const uuid = this.mapping(projectId).get(distinctId);
    return uuid ? this.snapshot.persons.get(uuid) : undefined;
  }

  private assign(projectId: number, distinctId: string, personUuid: string): void {
    this.mapping(projectId).set(distinctId, personUuid);
    this.distinctIdWrites.set(`${projectId}\u0000${distinctId}`, { project_id: projectId, distinct_id: distinctId, person_uuid: personUuid });
  }

  private create(projectId: number, distinctId: string, timestamp: Date, update: PropertyUpdate, eventUuid: string): PersonRecord {
    const properties: JsonObject = { ...update.setOnce, ...update.set, $creator_event_uuid: eventUuid };
    for (const key of update.unset) delete properties[key];
    const person: PersonRecord = {
      uuid: personUuidFor(projectId, distinctId),
      project_id: projectId,
      properties,
      is_identified: false,
      created_at: timestamp.toISOString(),
      version: 0,
    };
    this.snapshot.persons.set(person.uuid, person);
    this.deleted.delete(person.uuid);
    this.dirty.add(person.uuid);
    this.assign(projectId, distinctId, person.uuid);
    return person;
  }

  /** Applies a property update; creates the person when the distinct id has none. */
  update(projectId: number, distinctId: string, timestamp: Date, update: PropertyUpdate, eventUuid: string, eventName = '$set'): PersonRecord {
    const person = this.personOf(projectId, distinctId);
    if (!person) return this.create(projectId, distinctId, timestamp, update, eventUuid);
    const changed = applyUpdate(person.properties, update);
    if (changed.length > 0 && (PERSON_EVENTS.has(eventName) || changed.some((key) => !FILTERED_KEYS.has(key)))) {
      person.version += 1;
      this.dirty.add(person.uuid);
    }
    return person;
  }

  private markIdentified(person: PersonRecord): void {
    if (!person.is_identified) {
      person.is_identified = true;
      this.dirty.add(person.uuid);
    }
  }

  /**
   * Merges the person of `other` into the person of `into` (identify with $anon_distinct_id,
   * $create_alias, $merge_dangerously), then applies the event's property update.
   */
  merge(
    projectId: number,
    other: string,
    into: string,
    timestamp: Date,
    update: PropertyUpdate,
    eventUuid: string,
    dangerous: boolean,
  ): MergeWarning | null {
    if (other === into) {
      this.update(projectId, into, timestamp, update, eventUuid);
      return null;
    }
    if (isIllegalDistinctId(other) || isIllegalDistinctId(into)) {
      this.update(projectId, into, timestamp, update, eventUuid);
      return 'cannot_merge_with_illegal_distinct_id';
    }
    const otherPerson = this.personOf(projectId, other);
    const intoPerson = this.personOf(projectId, into);

    if (!otherPerson && !intoPerson) {
      const person = this.create(projectId, into, timestamp, update, eventUuid);
      this.assign(projectId, other, person.uuid);
      this.markIdentified(person);
      return null;
    }
    if (!otherPerson || !intoPerson) {
      const person = (otherPerson ?? intoPerson)!;
      this.assign(projectId, otherPerson ? into : other, person.uuid);
      this.markIdentified(person);
      this.update(projectId, into, timestamp, update, eventUuid);
      return null;
    }
    if (otherPerson.uuid === intoPerson.uuid) {
      this.markIdentified(intoPerson);
      this.update(projectId, into, timestamp, update, eventUuid);
      return null;
    }
    if (otherPerson.is_identified && !dangerous) {
      this.update(projectId, into, timestamp, update, eventUuid);
      return 'cannot_merge_already_identified';
    }
    // Real merge: the other person's properties under the surviving person's, then the event's update.
    intoPerson.properties = { ...otherPerson.properties, ...intoPerson.properties };
    applyUpdate(intoPerson.properties, update);
    if (otherPerson.created_at < intoPerson.created_at) intoPerson.created_at = otherPerson.created_at;
    intoPerson.version = Math.max(intoPerson.version, otherPerson.version) + 1;
    intoPerson.is_identified = true;
    this.dirty.add(intoPerson.uuid);

    for (const [distinctId, personUuid] of this.mapping(projectId)) {
      if (personUuid === otherPerson.uuid) this.assign(projectId, distinctId, intoPerson.uuid);
    }
    this.reassignments.push({ project_id: projectId, from_person_uuid: otherPerson.uuid, to_person_uuid: intoPerson.uuid });
    this.snapshot.persons.delete(otherPerson.uuid);
    this.dirty.delete(otherPerson.uuid);
    this.deleted.set(otherPerson.uuid, projectId);
    return null;
  }

  /** Everything this working set changed, for the stores. */
  changes(): Pick<IngestChanges, 'upsertPersons' | 'deletePersons' | 'reassignDistinctIds' | 'setDistinctIds'> {
    return {
      // Copies: the event store serialises them while the next flush already plans, and
      // cached persons are changed in place by that planning.
      upsertPersons: [...this.dirty].flatMap((uuid) => {
        const person = this.snapshot.persons.get(uuid);
        return person ? [{ ...person, properties: { ...person.properties } }] : [];
      }),
      deletePersons: [...this.deleted].map(([uuid, project_id]) => ({ project_id, uuid })),
      reassignDistinctIds: this.reassignments,
      setDistinctIds: [...this.distinctIdWrites.values()],
    };
  }
}

const sameValue = (a: unknown, b: unknown) =>
  a === b || (typeof a === 'object' && typeof b === 'object' && JSON.stringify(a) === JSON.stringify(b));

const has = (object: JsonObject, key: string) => Object.prototype.hasOwnProperty.call(object, key);

/** $set overwrites, $set_once fills only missing keys, $unset removes. Returns the changed keys. */
export function applyUpdate(properties: JsonObject, update: PropertyUpdate): string[] {
  const changed: string[] = [];
  for (const key in update.setOnce) {
    if (properties[key] === undefined && !has(properties, key)) {
      properties[key] = update.setOnce[key];
      changed.push(key);
    }
  }
  for (const key in update.set) {
    const value = update.set[key];
    const current = properties[key];
    if (current === value ? current === undefined && !has(properties, key) : !sameValue(current, value)) {
      properties[key] = value;
      changed.push(key);
    }
  }
  for (const key of update.unset) {
    if (has(properties, key)) {
      delete properties[key];
      changed.push(key);
    }
  }
  return changed;
}

/**
 * The other distinct id a merge event joins to its own: $anon_distinct_id of an $identify, the
 * alias of $create_alias and $merge_dangerously; null for every other event.
 */
export function mergedDistinctIdOf(event: Pick<IncomingEvent, 'event' | 'properties'>): string | null {
  const { $anon_distinct_id: anon, alias } = event.properties;
  if (event.event === '$identify') return typeof anon === 'string' ? anon : null;
  if (event.event === '$create_alias' || event.event === '$merge_dangerously') return typeof alias === 'string' ? alias : null;
  return null;
}

/**
 * Applies one event to the persons: a merge for $identify with $anon_distinct_id,
 * $create_alias and $merge_dangerously, else a property update (creating the person). Events
 * without person processing, and personless ones, only look their person up (or derive the
 * uuid it would have). Gives the event's person uuid and a merge refused, if any.
 */
export function applyPersons(
  persons: PersonWorkingSet,
  projectId: number,
  event: IncomingEvent,
  processPerson: boolean,
): { personId: string; warning: MergeWarning | null } {
  if (!processPerson || PERSONLESS_EVENTS.has(event.event)) {
    return { personId: persons.personOf(projectId, event.distinctId)?.uuid ?? personUuidFor(projectId, event.distinctId), warning: null };
  }
  const update = personUpdateOf(event.properties);
  const other = mergedDistinctIdOf(event);
  let warning: MergeWarning | null = null;
  if (other !== null) {
    warning = persons.merge(projectId, other, event.distinctId, event.timestamp, update, event.uuid, event.event === '$merge_dangerously');
  } else {
    persons.update(projectId, event.distinctId, event.timestamp, update, event.uuid, event.event);
  }
  return { personId: persons.personOf(projectId, event.distinctId)!.uuid, warning };
}
