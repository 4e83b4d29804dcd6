/**
 * Write-through cache of the persons ingestion touched recently, so a steady stream of events
 * from known people needs no SQLite read and no JSON.parse of their properties per flush.
 *
 * It mirrors what the metadata store has committed: `remember` runs only after a flush's
 * metadata commit succeeded, and a failed flush clears it (its planning may already have
 * changed cached objects in place). A distinct id whose person is no longer cached (merged
 * away, or evicted) is simply loaded again.
 */
import type { IngestSnapshot, IngestSnapshotRequest, PersonRecord } from '../store/types.js';

export interface CachedPerson {
  projectId: number;
  distinctId: string;
  person: PersonRecord;
}

/** Adds what `take` found to a snapshot the store loaded. */
export function addCachedPersons(snapshot: IngestSnapshot, hits: CachedPerson[]): void {
  for (const { projectId, distinctId, person } of hits) {
    let mapping = snapshot.distinctIdToPerson.get(projectId);
    if (!mapping) snapshot.distinctIdToPerson.set(projectId, (mapping = new Map()));
    mapping.set(distinctId, person.uuid);
    snapshot.persons.set(person.uuid, person);
  }
}

const idKey = (projectId: number, distinctId: string) => `${projectId}\u0000${distinctId}`;

export class PersonCache {
  /** "<project>\0<distinct id>" → person uuid, in least-recently-used order. */
  private readonly ids = new Map<string, string>();
  private readonly persons = new Map<string, PersonRecord>();

  constructor(private readonly maxDistinctIds: number) {}

  /** Takes the request's cached distinct ids out of it (the store loads only the rest). */
  take(request: IngestSnapshotRequest): CachedPerson[] {
    const hits: CachedPerson[] = [];
    if (this.maxDistinctIds === 0) return hits;
    for (const [projectId, distinctIds] of request.distinctIds) {
      for (const distinctId of distinctIds) {
        const key = idKey(projectId, distinctId);
        const uuid = this.ids.get(key);
        if (uuid === undefined) continue;
        const person = this.persons.get(uuid);
        this.ids.delete(key);
        if (!person) continue; // merged away or evicted: load it again
        this.ids.set(key, uuid); // re-inserted: Map order is the eviction order
        hits.push({ projectId, distinctId, person });
        distinctIds.delete(distinctId);
      }
    }
    return hits;
  }

  /** After a committed flush: its working set is now what the store holds. */
  remember(snapshot: IngestSnapshot, deletedPersons: { uuid: string }[]): void {
    if (this.maxDistinctIds === 0) return;
    for (const { uuid } of deletedPersons) this.persons.delete(uuid);
    for (const [projectId, mapping] of snapshot.distinctIdToPerson) {
      for (const [distinctId, uuid] of mapping) {
        const person = snapshot.persons.get(uuid);
        if (!person) continue;
        const key = idKey(projectId, distinctId);
        this.ids.delete(key);
        this.ids.set(key, uuid);
        this.persons.set(uuid, person);
      }
    }
    this.evict();
  }

  clear(): void {
    this.ids.clear();
    this.persons.clear();
  }

  /** Evicts down to 90% of the limit, so the pass over the persons runs once in many flushes. */
  private evict(): void {
    if (this.ids.size <= this.maxDistinctIds) return;
    let excess = this.ids.size - Math.floor(this.maxDistinctIds * 0.9);
    for (const key of this.ids.keys()) {
      if (excess-- <= 0) break;
      this.ids.delete(key);
    }
    // Persons no distinct id points to any more go too.
    const live = new Set(this.ids.values());
    for (const uuid of this.persons.keys()) if (!live.has(uuid)) this.persons.delete(uuid);
  }
}
