/**
 * Splitting a person: every distinct id but one gets a new person of its own (PostHog's
 * `split`, for a merge that should not have happened). The metadata change is committed between
 * two flushes, like a deletion, so no flush planned from the merged state undoes it; the event
 * store's person mirror is then rewritten for those distinct ids from the metadata store.
 */
import { notFound, validationError } from '../kernel/errors.js';
import type { DeletionDeps } from './deletion.js';

/** How long the split waits for the event store to hold the earlier flushes before it answers anyway. */
const MIRROR_WAIT_MS = 10_000;

export class PersonSplits {
  constructor(private readonly deps: Pick<DeletionDeps, 'store' | 'persons' | 'events' | 'ordering' | 'log'>) {}

  async split(projectId: number, uuid: string, mainDistinctId: string | null, userId: number | null): Promise<void> {
    const { store, ordering, events, persons, log } = this.deps;
    const before = await store.get(projectId, uuid);
    if (!before) throw notFound();
    const { moved, seq } = await ordering.betweenFlushes(async (lastFlushSeq) => ({
      moved: await store.split({ projectId, uuid, mainDistinctId, userId }),
      seq: lastFlushSeq,
    }));
    if (moved === 'not_found') throw notFound();
    if (moved === 'unknown_distinct_id') throw validationError('main_distinct_id is not a distinct id of this person.', 'main_distinct_id');
    if (moved.length === 0) return;
    if (!(await ordering.eventStoreHolds(seq, MIRROR_WAIT_MS))) log.warn({ flushSeq: seq }, 'person split: the event store is behind; its mirror follows when it catches up');
    const current = await persons.personsOf(projectId, before.distinct_ids);
    const keep = [...new Map([...current.values()].map((found) => [found.person.uuid, found])).values()];
    await events.erasePerson({ projectId, personUuid: uuid, distinctIds: before.distinct_ids, events: false, afterFlushSeq: seq, flushesBefore: null, keep });
  }
}
