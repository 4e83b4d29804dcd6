/**
 * One flush of the ingestion pipeline, as named steps over working sets loaded from the
 * metadata store: dedupe.ts, enrich.ts, groups.ts, persons.ts, definitions.ts, row.ts. It
 * produces both the metadata changes and the rows for the event store. A step gives an outcome
 * (kept, or dropped with a counted reason); nothing throws for a bad event.
 */
import type { IngestChanges, IngestSnapshot, IngestSnapshotRequest, StoredEvent } from '../../store/types.js';
import { getOrCreate } from '../../util/get-or-create.js';
import type { DropReason, IncomingEvent } from '../types.js';
import { Deduplicator } from './dedupe.js';
import { DefinitionCache, DefinitionCollector } from './definitions.js';
import { enrich, type Enricher } from './enrich.js';
import { applyGroups, GroupWorkingSet, identifiedGroupOf } from './groups.js';
import { applyPersons, PersonWorkingSet, type MergeWarning } from './persons.js';
import { rewrittenEvent } from './redelivered.js';
import { toRow } from './row.js';

export interface PendingEvent {
  projectId: number;
  anonymizeIps: boolean;
  event: IncomingEvent;
  /** Handed out by the log before (to a node that may have died before its event-store write). */
  redelivered?: boolean;
}

export interface PipelineDeps {
  /** Adds GeoIP (and its $set/$set_once) to the properties; absent when GeoIP is off. */
  enrich?: Enricher;
  definitions: DefinitionCache;
  now: Date;
  /** Write again the redelivered events whose uuids the metadata store holds (redelivered.ts). */
  rewriteRedelivered?: boolean;
}

export interface FlushPlan {
  /** For the metadata store (and, with the events, for the flush log). */
  changes: IngestChanges;
  events: StoredEvent[];
  dropped: Map<DropReason, number>;
  warnings: Map<MergeWarning, number>;
  /** Redelivered events written again (among `events`). */
  rewritten: number;
  /** Call after the metadata store committed. */
  committed: () => void;
}

function add<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  getOrCreate(map, key, () => new Set<V>()).add(value);
}

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
    const group = identifiedGroupOf(event);
    if (group !== null) add(request.groups, projectId, group);
  }
  return request;
}

/**
 * Plans one flush: each event goes through the steps in order, in one pass (a flush holds up to
 * ten thousand events, so there is no per-step loop or allocation): de-duplicate, enrich,
 * groups, persons, definitions, row.
 */
export function plan(batch: PendingEvent[], snapshot: IngestSnapshot, flushSeq: number, deps: PipelineDeps): FlushPlan {
  const dedupe = new Deduplicator(snapshot);
  const persons = new PersonWorkingSet(snapshot);
  const groups = new GroupWorkingSet(snapshot);
  const definitions = new DefinitionCollector(deps.definitions, deps.now);
  const dropped = new Map<DropReason, number>();
  const warnings = new Map<MergeWarning, number>();
  const rows: StoredEvent[] = [];
  const uuids: IngestChanges['eventUuids'] = [];
  const refreshPersons: NonNullable<IngestChanges['refreshPersons']> = [];

  for (const { projectId, anonymizeIps, event, redelivered } of batch) {
    if (!dedupe.take(projectId, event.uuid)) {
      if (redelivered && deps.rewriteRedelivered && dedupe.takeStored(projectId, event.uuid)) {
        const rewritten = rewrittenEvent(snapshot, persons, groups, projectId, anonymizeIps, event, deps);
        if (!rewritten) {
          count(dropped, 'person_deleted');
          continue;
        }
        rows.push(rewritten.row);
        refreshPersons.push({ project_id: projectId, uuid: rewritten.personId });
        continue;
      }
      count(dropped, 'duplicate_uuid');
      continue;
    }
    const processPerson = event.properties.$process_person_profile !== false;
    enrich(event.properties, anonymizeIps, deps.enrich);
    const eventGroups = applyGroups(groups, projectId, event, processPerson);
    const { personId, warning } = applyPersons(persons, projectId, event, processPerson);
    if (warning) count(warnings, warning);
    definitions.observe(projectId, event.event, event.properties, eventGroups.identifiedIndex);
    uuids.push({ project_id: projectId, uuid: event.uuid });
    rows.push(toRow(projectId, event, personId, eventGroups.columns, deps.now));
  }

  const changes: IngestChanges = {
    flushSeq,
    ...persons.changes(),
    ...groups.changes(),
    ...definitions.changes(),
    eventUuids: uuids,
    ...(refreshPersons.length > 0 ? { refreshPersons } : {}),
  };
  return { changes, events: rows, dropped, warnings, rewritten: refreshPersons.length, committed: () => definitions.commit() };
}

function count<K>(counts: Map<K, number>, key: K): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}
