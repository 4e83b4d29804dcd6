/**
 * Change stamps of persons and groups, shared by every thread that opens the metadata store, so
 * a thread can keep what it read and still never answer from data that changed since: the writer
 * bumps a key's stamp after committing a change to it, and a reader trusts its copy while the
 * stamp it saw before reading is unchanged. Keys share a fixed table of slots by hash; two keys in
 * one slot only cost each other an extra read.
 */
const SLOTS = 1 << 16;

export class ChangeStamps {
  private readonly slots: Int32Array;

  /** `memory` from another thread's `ChangeStamps`, or none to make a new table. */
  constructor(readonly memory: SharedArrayBuffer = new SharedArrayBuffer(SLOTS * Int32Array.BYTES_PER_ELEMENT)) {
    this.slots = new Int32Array(memory);
  }

  bump(key: string): void {
    Atomics.add(this.slots, slotOf(key), 1);
  }

  read(key: string): number {
    return Atomics.load(this.slots, slotOf(key));
  }
}

/** The stamp key of a distinct id (which person it points at). */
export const distinctIdKey = (projectId: number, distinctId: string) => `d${projectId}\u0000${distinctId}`;

/** The stamp key of a person (its properties, or its removal). */
export const personKey = (projectId: number, personUuid: string) => `p${projectId}\u0000${personUuid}`;

/** The stamp key of a group (its properties). */
export const groupKey = (projectId: number, groupTypeIndex: number, key: string) => `g${projectId}\u0000${groupTypeIndex}\u0000${key}`;

/** The stamp key of a project's cohort memberships (any cohort's, any person's). */
export const cohortsKey = (projectId: number) => `c${projectId}`;

/** The stamp key of a project's group types. */
export const groupTypesKey = (projectId: number) => `t${projectId}`;

/** FNV-1a over UTF-16 code units: fast, and spreads similar ids well enough for a slot table. */
function slotOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) & (SLOTS - 1);
}
