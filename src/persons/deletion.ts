/**
 * Person deletion in two steps. The metadata part (person, distinct ids, flag overrides) is
 * committed between two flushes of the group commit, so no flush planned from the old state can
 * bring the person back, and the deletion records the last flush before it. The event-store part
 * (the person mirror, and with `delete_events` their events of those flushes) runs once the
 * event store holds them; it is queued in the metadata store, so a crash in between resumes it
 * at the next start, after the flush log has replayed what the event store lacked.
 *
 * With several nodes on one event store, a deletion erases every node's flushes from before it,
 * waiting a bounded time for them. A node that died between its metadata commit and its
 * event-store write writes those flushes at its restart, perhaps after a deletion gave up waiting
 * for them: it then erases that deletion's events once more (`resume`).
 */
import type { Logger } from '../kernel/logger.js';
import type { EventStore, IngestStore, PersonDeletion, PersonStore } from '../store/types.js';

export interface DeletionDeps {
  store: PersonStore;
  /** The current person of a distinct id (a later event may have made a new one). */
  persons: Pick<IngestStore, 'personsOf'>;
  events: Pick<EventStore, 'erasePerson' | 'compact'>;
  ordering: {
    betweenFlushes<T>(work: (lastFlushSeq: number) => Promise<T>): Promise<T>;
    eventStoreHolds(seq: number, timeoutMs: number): Promise<boolean>;
    /** With an event store every node writes: whether it holds each node's flush given, waited for up to `timeoutMs`. */
    everyNodeStored?(flushes: Record<string, number>, timeoutMs: number): Promise<boolean>;
  };
  /** Events were deleted: the events list's cached counts are stale. */
  eventsDeleted(): void;
  /** How long after a deletion finished the event file is compacted (deletions meanwhile share it). */
  compactionDelayMs: number;
  /**
   * How long a deletion waits for other nodes' flushes before it to reach a shared event store.
   * Bounded: a node that died between its metadata commit and its event-store write writes them
   * only at its restart (and erases again then), and the deletions queued after this one wait with it.
   */
  otherNodesWaitMs: number;
  log: Logger;
}

/** How long one wait for the event store lasts before it is tried again (the log says so). */
const HOLD_WAIT_MS = 10_000;
/** Pause after a failed event-store step before the next try. */
const RETRY_MS = 1_000;
export class PersonDeletions {
  /** Event-store steps run one at a time, in the order the deletions were made. */
  private queue: Promise<void> = Promise.resolve();
  private stopped = false;
  private compactionTimer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: DeletionDeps) {}

  /** Deletes the persons now (metadata) and queues the rest; the deletions say how to follow it. */
  async delete(projectId: number, uuids: string[], deleteEvents: boolean, userId: number | null): Promise<PersonDeletion[]> {
    const { store, ordering } = this.deps;
    const deletions = await ordering.betweenFlushes((lastFlushSeq) => store.delete({ projectId, uuids, deleteEvents, afterFlushSeq: lastFlushSeq, userId }));
    for (const deletion of deletions) this.enqueue(deletion);
    return deletions;
  }

  /**
   * At start-up, after the flush log's replay: the deletions a stop interrupted, and with several
   * nodes the erasures this node's replayed flushes missed. `storedFlushSeq`: the flush the event
   * store held for this node before the replay.
   */
  async resume(storedFlushSeq: number): Promise<void> {
    const { store } = this.deps;
    for (const deletion of await store.openDeletions()) this.enqueue(deletion);
    for (const late of (await store.deletionsAheadOf?.(storedFlushSeq)) ?? []) this.enqueueAgain(late.deletion, late.ownFlushSeq);
    if ((await store.unpurgedDeletions()).length > 0) this.scheduleCompaction();
  }

  /** Resolves once every queued deletion has finished (or the service stopped). */
  settled(): Promise<void> {
    return this.queue;
  }

  stop(): void {
    this.stopped = true;
    if (this.compactionTimer) clearTimeout(this.compactionTimer);
  }

  /** One compaction for every deletion finished until it starts. */
  private scheduleCompaction(): void {
    if (this.compactionTimer || this.stopped) return;
    this.compactionTimer = setTimeout(() => {
      this.compactionTimer = null;
      this.queue = this.queue.then(() => this.compact());
    }, this.deps.compactionDelayMs);
    this.compactionTimer.unref();
  }

  private async compact(): Promise<void> {
    const { store, events, log } = this.deps;
    if (this.stopped) return;
    try {
      const purged = await store.unpurgedDeletions();
      if (purged.length === 0) return;
      const started = Date.now();
      await events.compact();
      await store.markPurged(purged.map((d) => d.id), new Date().toISOString());
      log.info({ deletions: purged.length, ms: Date.now() - started }, 'event file compacted after person deletions');
    } catch (error) {
      log.error({ err: error }, 'event file compaction failed; retried later');
      this.scheduleCompaction();
    }
  }

  private async awaitOtherNodes(deletion: PersonDeletion): Promise<void> {
    const { ordering, log } = this.deps;
    if (!deletion.flushes_before || !ordering.everyNodeStored) return;
    if (await ordering.everyNodeStored(deletion.flushes_before, this.deps.otherNodesWaitMs)) return;
    log.warn(
      { deletion: deletion.id, flushes: deletion.flushes_before },
      "person deletion: another node's flushes from before it are not in the event store yet; erasing what is there (that node erases again after its restart writes them)",
    );
  }

  private enqueue(deletion: PersonDeletion): void {
    this.queue = this.queue.then(() => this.finish(deletion));
  }

  /** A finished deletion's events erased again once the event store holds this node's flush `ownFlushSeq`. */
  private enqueueAgain(deletion: PersonDeletion, ownFlushSeq: number): void {
    this.queue = this.queue.then(() => this.eraseAgain(deletion, ownFlushSeq));
  }

  private finish(deletion: PersonDeletion): Promise<void> {
    const { store, events } = this.deps;
    return this.onceStored(deletion, deletion.after_flush_seq, 'person deletion finished', async () => {
      await this.awaitOtherNodes(deletion);
      const current = await this.deps.persons.personsOf(deletion.project_id, deletion.distinct_ids);
      const keep = [...new Map([...current.values()].map((found) => [found.person.uuid, found])).values()];
      const deleted = await events.erasePerson({
        projectId: deletion.project_id,
        personUuid: deletion.person_uuid,
        distinctIds: deletion.distinct_ids,
        events: deletion.delete_events,
        afterFlushSeq: deletion.after_flush_seq,
        flushesBefore: deletion.flushes_before,
        keep,
      });
      await store.finishDeletion(deletion.id, new Date().toISOString());
      return deleted;
    });
  }

  /**
   * A finished deletion keeps no distinct ids, so this pass finds the events by the person they
   * were stored with: the flushes before the deletion made them that person's.
   */
  private eraseAgain(deletion: PersonDeletion, ownFlushSeq: number): Promise<void> {
    return this.onceStored(deletion, ownFlushSeq, "person deletion: events this node's restart wrote erased again", () =>
      this.deps.events.erasePerson({
        projectId: deletion.project_id,
        personUuid: deletion.person_uuid,
        distinctIds: [],
        events: true,
        afterFlushSeq: ownFlushSeq,
        flushesBefore: deletion.flushes_before,
        keep: [],
      }),
    );
  }

  /** Runs `erase` once the event store holds this node's flush `seq`, retrying until it succeeds or the service stops; logs `done`. */
  private async onceStored(deletion: PersonDeletion, seq: number, done: string, erase: () => Promise<number>): Promise<void> {
    const { ordering, log } = this.deps;
    while (!this.stopped) {
      try {
        if (!(await ordering.eventStoreHolds(seq, HOLD_WAIT_MS))) {
          log.warn({ deletion: deletion.id, flushSeq: seq }, 'person deletion waits for the event store to catch up');
          continue;
        }
        const deleted = await erase();
        if (deleted > 0) this.deps.eventsDeleted();
        log.info({ deletion: deletion.id, events: deleted }, done);
        this.scheduleCompaction();
        return;
      } catch (error) {
        log.error({ err: error, deletion: deletion.id }, 'person deletion failed in the event store; retrying');
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }
}
