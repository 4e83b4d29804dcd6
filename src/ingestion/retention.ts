/**
 * Data retention (`SIGHTLINE_RETENTION_DAYS`): events whose timestamp is older than the period
 * are deleted from the event store, and their uuids from the de-duplication set, so that neither
 * store grows for ever. A pass runs right after start-up and then every
 * `SIGHTLINE_RETENTION_INTERVAL_SECONDS` (an hour by default), in small batches
 * that take turns with ingestion (each batch is one event-store write and one short metadata
 * transaction on the main thread). Persons, groups and definitions are kept.
 *
 * An event that arrives already older than the period (an import of old data, a client clock far
 * behind) is stored and acknowledged like any other, and deleted by the next pass.
 */
import type { Logger } from '../kernel/logger.js';
import type { Metrics } from '../kernel/metrics.js';
import type { Stores } from '../store/index.js';
import { afterIo } from '../util/after-io.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Events per batch: forgetting this many uuids holds the main thread for ~10–20 ms. */
const BATCH_EVENTS = 5_000;

export interface RetentionSettings {
  days: number;
  intervalSeconds: number;
  /** Called after each batch that deleted events (or may have: a failed one). */
  eventsDeleted: () => void;
}

export class Retention {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private stopped = false;

  constructor(
    private readonly stores: Stores,
    private readonly settings: RetentionSettings,
    private readonly metrics: Metrics,
    private readonly log: Logger,
  ) {}

  /** Schedules the passes: the first one now. */
  start(): void {
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.pass().finally(() => {
        this.running = null;
        if (!this.stopped) this.schedule(this.settings.intervalSeconds * 1000);
      });
    }, delayMs);
    // A pending pass must not keep a stopping process alive.
    this.timer.unref();
  }

  /** Deletes every event older than the period, batch by batch; the number deleted. Never throws. */
  async pass(): Promise<number> {
    const cutoff = new Date(Date.now() - this.settings.days * DAY_MS);
    let deleted = 0;
    try {
      while (!this.stopped) {
        const expired = await this.stores.events.expireEvents(cutoff, BATCH_EVENTS);
        let count = 0;
        for (const uuids of expired.values()) count += uuids.length;
        if (count === 0) break;
        this.settings.eventsDeleted();
        // After the events: a crash in between leaves uuids of deleted events, which only
        // keeps a very late retry of one of them out.
        await this.stores.meta.ingest.forgetUuids(expired);
        deleted += count;
        this.metrics.eventsExpired.inc(count);
        if (count < BATCH_EVENTS) break;
        await afterIo();
      }
      if (deleted > 0) {
        // Deletions sit in the WAL until a checkpoint writes them into the file.
        await this.stores.events.checkpoint();
        this.log.info({ deleted, before: cutoff.toISOString() }, 'retention: deleted events older than the retention period');
      }
    } catch (error) {
      this.settings.eventsDeleted();
      this.metrics.retentionFailures.inc();
      this.log.error({ err: error, deleted }, 'retention pass failed; the next one tries again');
    }
    return deleted;
  }

  /** Stops scheduling and waits for a running pass to end (it stops after its current batch). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}
