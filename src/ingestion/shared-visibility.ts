/**
 * Read-your-writes across nodes. A node acknowledges a batch once its metadata commit is in the
 * shared metadata store; its events reach the shared event store a moment later. A read on
 * another node first waits, bounded, until the event store holds every flush that any node had
 * committed when the read began, so a client behind a round-robin balancer sees what it sent.
 *
 * Costs one small metadata query per read; the event store is asked only while some node is
 * behind. A node that stays behind past the wait (it died between its two commits, and its
 * restart will write the rest) is not waited for again until it moves.
 */
import type { EventStore, IngestStore } from '../store/types.js';
import { setTimeout as sleep } from 'node:timers/promises';

const POLL_MS = 25;

export class SharedVisibility {
  /** Per node, the flush the event store was last seen to hold. */
  private readonly stored = new Map<string, number>();
  /** Per node, the flush a wait gave up on. */
  private readonly stuck = new Map<string, number>();

  private constructor(
    private readonly committed: () => Promise<Map<string, number>>,
    private readonly held: () => Promise<Map<string, number>>,
  ) {}

  /** Null unless both stores are shared between nodes (then only this node's own wait applies). */
  static of(ingest: IngestStore, events: EventStore): SharedVisibility | null {
    if (!ingest.committedFlushSeqs || !events.storedFlushSeqs) return null;
    return new SharedVisibility(() => ingest.committedFlushSeqs!(), () => events.storedFlushSeqs!());
  }

  /** True once every node's committed flushes are queryable; false after `timeoutMs` without. */
  async wait(timeoutMs: number): Promise<boolean> {
    const committed = await this.committed();
    const behind = await this.pollUntil(() => [...committed].filter(([node, seq]) => (this.stored.get(node) ?? 0) < seq && this.stuck.get(node) !== seq), timeoutMs);
    for (const [node, seq] of behind) this.stuck.set(node, seq);
    return behind.length === 0;
  }

  /** True once the event store holds each node's flush given here (a person deletion's); false after `timeoutMs` without. */
  async holds(flushes: Record<string, number>, timeoutMs: number): Promise<boolean> {
    const behind = await this.pollUntil(() => Object.entries(flushes).filter(([node, seq]) => (this.stored.get(node) ?? 0) < seq), timeoutMs);
    return behind.length === 0;
  }

  /** Reads the event store's positions until `behind` lists none or the time is up; what is still behind. */
  private async pollUntil(behind: () => [string, number][], timeoutMs: number): Promise<[string, number][]> {
    if (behind().length === 0) return [];
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const [node, seq] of await this.held()) this.stored.set(node, Math.max(seq, this.stored.get(node) ?? 0));
      const still = behind();
      if (still.length === 0 || Date.now() >= deadline) return still;
      await sleep(POLL_MS);
    }
  }
}
