/**
 * Stored persons as flag evaluation reads them, kept between requests: SDKs ask for the flags of
 * the same users again and again, and most of those users did not change in between. An entry
 * is used only while the change stamps (change-stamps.ts) of its distinct id and of its person
 * are what they were before the entry was read, so a committed change is seen by the next
 * request, as without the cache.
 */
import type { JsonObject } from '../kernel/json.js';
import { distinctIdKey, personKey, type ChangeStamps } from './change-stamps.js';
import { setNewest } from '../util/bounded-map.js';

export interface StoredPerson {
  uuid: string;
  /** Parsed once; shared by every request that uses the entry, so never changed in place. */
  properties: JsonObject;
}

interface Entry {
  person: StoredPerson | null;
  distinctIdStamp: number;
  personStamp: number;
}

export class CachedPersonReads {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly stamps: ChangeStamps,
    /** Reads the person a distinct id points at from the store. */
    private readonly read: (projectId: number, distinctId: string) => StoredPerson | null,
    private readonly maxEntries: number,
  ) {}

  get(projectId: number, distinctId: string): StoredPerson | null {
    const idKey = distinctIdKey(projectId, distinctId);
    const key = `${projectId}\u0000${distinctId}`;
    const cached = this.entries.get(key);
    if (cached && this.stillValid(projectId, idKey, cached)) return cached.person;

    // Stamps are taken before the read they vouch for: a change committed after them bumps them.
    const distinctIdStamp = this.stamps.read(idKey);
    const first = this.read(projectId, distinctId);
    let entry: Entry;
    if (!first) {
      entry = { person: null, distinctIdStamp, personStamp: 0 };
    } else {
      // The person's stamp can be known only once its uuid is: read it, then read the person again.
      const personStamp = this.stamps.read(personKey(projectId, first.uuid));
      const person = this.read(projectId, distinctId);
      if (person?.uuid !== first.uuid) return person; // moved to another person meanwhile: not kept
      entry = { person, distinctIdStamp, personStamp };
    }
    setNewest(this.entries, key, entry, this.maxEntries);
    return entry.person;
  }

  private stillValid(projectId: number, idKey: string, entry: Entry): boolean {
    if (this.stamps.read(idKey) !== entry.distinctIdStamp) return false;
    return entry.person === null || this.stamps.read(personKey(projectId, entry.person.uuid)) === entry.personStamp;
  }
}
