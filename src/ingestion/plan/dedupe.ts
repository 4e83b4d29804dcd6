/**
 * Step 1, de-duplicate: an event whose uuid the project already stored, or that came earlier in
 * this flush, is dropped (SDK retries resend the same uuid).
 */
import type { IngestSnapshot } from '../../store/types.js';
import { getOrCreate } from '../../util/get-or-create.js';

export class Deduplicator {
  /** Uuids taken in this flush, by project. */
  private readonly seen = new Map<number, Set<string>>();

  constructor(private readonly snapshot: Pick<IngestSnapshot, 'existingUuids'>) {}

  /** True the first time a uuid is offered for its project, false for a duplicate. */
  take(projectId: number, uuid: string): boolean {
    const seenHere = getOrCreate(this.seen, projectId, () => new Set<string>());
    if (this.snapshot.existingUuids.get(projectId)?.has(uuid) || seenHere.has(uuid)) return false;
    seenHere.add(uuid);
    return true;
  }

  /**
   * True the first time in this flush that a uuid the store already holds is offered (an event
   * of a redelivered batch that is written to the event store again); false otherwise.
   */
  takeStored(projectId: number, uuid: string): boolean {
    const seenHere = getOrCreate(this.seen, projectId, () => new Set<string>());
    if (!this.snapshot.existingUuids.get(projectId)?.has(uuid) || seenHere.has(uuid)) return false;
    seenHere.add(uuid);
    return true;
  }
}
