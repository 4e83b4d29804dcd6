/**
 * The log seam between capture and ingestion: capture appends a batch and answers once the log
 * holds it; ingestion reads the log and stores what it holds. Embedded mode uses the local flush
 * log (through the ingest buffer); the distributed mode can use a NATS JetStream stream, which
 * every node shares, so that a node that dies leaves its unprocessed batches to the others.
 */
import type { PendingEvent } from '../plan/plan.js';

export interface IngestLog {
  /** A log every node shares (NATS): its backlog is shown in /_health. The local flush log has none to show. */
  readonly shared: boolean;
  /** Resolves once the batch is durable in the log; `batchId` is stable across a client's retries. */
  append(events: PendingEvent[], batchId: string): Promise<void>;
  /** Acknowledged batches (messages) not processed yet, or null when not known right now. */
  pendingMessages(): Promise<number | null>;
  /**
   * Waits until every batch acknowledged before the call has been processed (handed to the
   * stores), at most `timeoutMs`; false when not. Person deletions wait for it so that events
   * captured before a deletion are deleted with it.
   */
  processedAll(timeoutMs: number): Promise<boolean>;
  /** Whether the log takes appends right now (for /_ready); answers within about a second. */
  ping(): Promise<boolean>;
  /** The shared log's partitions this node consumes now (none for the local flush log). */
  readonly ownedPartitions: number[];
  /** Last failure to process the log, while it lasts. */
  readonly lastError: { message: string; at: string } | null;
  /** `drainMs`: how long a shared log's consumers may go on storing what their partitions hold. */
  close(options?: { drainMs?: number }): Promise<void>;
}

/** The log could not take the batch (unreachable, timed out): capture answers 503, the SDK retries. */
export class LogUnavailableError extends Error {}

/** An event is larger than one message of the log may be: capture answers 413, as a retry cannot help. */
export class EventTooLargeError extends Error {}
