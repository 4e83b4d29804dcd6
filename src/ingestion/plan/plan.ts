/**
 * One flush of the ingestion pipeline: de-duplicate, enrich, update groups and persons,
 * collect definitions, and produce both the metadata changes and the rows for the event
 * store. Each step gives an outcome (stored, or dropped with a counted reason); nothing throws
 * for a bad event.
 */
import type { IncomingEvent, DropReason } from '../types.js';
import type { JsonObject } from '../../kernel/json.js';
import type { IngestChanges, IngestSnapshot, IngestSnapshotRequest, StoredEvent } from '../../store/types.js';
import { DefinitionCache, DefinitionCollector } from './definitions.js';
import { GroupWorkingSet } from './groups.js';
import { PersonWorkingSet, personUpdateOf, personUuidFor, type MergeWarning } from './persons.js';
import { getOrCreate } from '../../util/get-or-create.js';

export interface PendingEvent {
  projectId: number;
  anonymizeIps: boolean;
  event: IncomingEvent;
}

export interface PipelineDeps {
  /** Adds GeoIP (and its $set/$set_once) to the properties; absent when GeoIP is off. */
  enrich?: (properties: JsonObject) => void;
  definitions: DefinitionCache;
  now: Date;
}

export interface FlushPlan {
  /** For the metadata store (and, with the events, for the flush log). */
  changes: IngestChanges;
  events: StoredEvent[];
  dropped: Map<DropReason, number>;
  warnings: Map<MergeWarning, number>;
  /** Call after the metadata store committed. */
  committed: () => void;
}

const PERSONLESS_EVENTS = new Set(['$exception', '$$heatmap']);
const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

function add<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  getOrCreate(map, key, () => new Set<V>()).add(value);
}

const asKey = (value: unknown): string | null =>
  typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : null;

/** What the metadata store must load before `plan` can run. */
export function snapshotRequest(batch: PendingEvent[]): IngestSnapshotRequest {
  const request: IngestSnapshotRequest = { distinctIds: new Map(), eventUuids: new Map(), groups: new Map() };
  for (const { projectId, event } of batch) {
    const p = event.properties;
    add(request.distinctIds, projectId, event.distinctId);
    if (typeof p.$anon_distinct_id === 'string') add(request.distinctIds, projectId, p.$anon_distinct_id);
    if (typeof p.alias === 'string') add(request.distinctIds, projectId, p.alias);
    let uuids = request.eventUuids.get(projectId);
    if (!uuids) request.eventUuids.set(projectId, (uuids = []));
    uuids.push(event.uuid);
    const type = asKey(p.$group_type);
    const key = asKey(p.$group_key);
    if (event.event === '$groupidentify' && type !== null && key !== null) add(request.groups, projectId, `${type}\u0000${key}`);
  }
  return request;
}

export function plan(batch: PendingEvent[], snapshot: IngestSnapshot, flushSeq: number, deps: PipelineDeps): FlushPlan {
  const persons = new PersonWorkingSet(snapshot);
  const groups = new GroupWorkingSet(snapshot);
  const definitions = new DefinitionCollector(deps.definitions, deps.now);
  const dropped = new Map<DropReason, number>();
  const warnings = new Map<MergeWarning, number>();
  const seen = new Map<number, Set<string>>();
  const stored: StoredEvent[] = [];
  const uuids: IngestChanges['eventUuids'] = [];

  for (const { projectId, anonymizeIps, event } of batch) {
    const existing = snapshot.existingUuids.get(projectId);
    let seenHere = seen.get(projectId);
    if (!seenHere) seen.set(projectId, (seenHere = new Set()));
    if (existing?.has(event.uuid) || seenHere.has(event.uuid)) {
      dropped.set('duplicate_uuid', (dropped.get('duplicate_uuid') ?? 0) + 1);
      continue;
    }
    seenHere.add(event.uuid);

    const properties = event.properties;
    const processPerson = properties.$process_person_profile !== false;
    // Every event is located (anonymous posthog-js traffic is personless); enrich itself skips
    // the person $set for personless events.
    if (deps.enrich) deps.enrich(properties);
    if (anonymizeIps) delete properties.$ip;

    // Groups: $groupidentify upserts the group; $groups fills $group_N.
    const groupColumns: StoredEvent['groups'] = ['', '', '', '', ''];
    let identifiedGroupIndex: number | null = null;
    if (event.event === '$groupidentify') {
      const type = asKey(properties.$group_type);
      const key = asKey(properties.$group_key);
      if (type !== null && key !== null) {
        identifiedGroupIndex = groups.indexOf(projectId, type);
        const set = isObject(properties.$group_set) ? properties.$group_set : {};
        if (identifiedGroupIndex !== null) groups.identify(projectId, identifiedGroupIndex, key, set, event.timestamp);
      }
    }
    if (processPerson && isObject(properties.$groups)) {
      for (const [type, rawKey] of Object.entries(properties.$groups)) {
        const key = asKey(rawKey);
        if (key === null) continue;
        const index = groups.indexOf(projectId, type);
        if (index === null) continue;
        properties[`$group_${index}`] = key;
        groupColumns[index] = key;
      }
    }

    // Persons.
    let personId: string;
    if (!processPerson) {
      personId = persons.personOf(projectId, event.distinctId)?.uuid ?? personUuidFor(projectId, event.distinctId);
    } else if (PERSONLESS_EVENTS.has(event.event)) {
      personId = persons.personOf(projectId, event.distinctId)?.uuid ?? personUuidFor(projectId, event.distinctId);
    } else {
      const update = personUpdateOf(properties);
      let warning: MergeWarning | null = null;
      if (event.event === '$identify' && typeof properties.$anon_distinct_id === 'string') {
        warning = persons.merge(projectId, properties.$anon_distinct_id, event.distinctId, event.timestamp, update, event.uuid, false);
      } else if ((event.event === '$create_alias' || event.event === '$merge_dangerously') && typeof properties.alias === 'string') {
        const dangerous = event.event === '$merge_dangerously';
        warning = persons.merge(projectId, properties.alias, event.distinctId, event.timestamp, update, event.uuid, dangerous);
      } else {
        persons.update(projectId, event.distinctId, event.timestamp, update, event.uuid, event.event);
      }
      if (warning) warnings.set(warning, (warnings.get(warning) ?? 0) + 1);
      personId = persons.personOf(projectId, event.distinctId)!.uuid;
    }

    definitions.observe(projectId, event.event, properties, identifiedGroupIndex);
    uuids.push({ project_id: projectId, uuid: event.uuid });
    stored.push({
      project_id: projectId,
      uuid: event.uuid,
      event: event.event,
      distinct_id: event.distinctId,
      person_id: personId,
      timestamp: event.timestamp,
      created_at: deps.now,
      properties_json: JSON.stringify(properties),
      elements_chain: event.elementsChain,
      groups: groupColumns,
    });
  }

  const changes: IngestChanges = {
    flushSeq,
    ...persons.changes(),
    ...groups.changes(),
    ...definitions.changes(),
    eventUuids: uuids,
  };
  return { changes, events: stored, dropped, warnings, committed: () => definitions.commit() };
}

