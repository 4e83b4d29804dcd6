import type { IngestBuffer } from '../buffer.js';
import type { IngestLog } from './types.js';

/** Embedded mode: the ingest buffer's own flush log is the log; a 200 means the flush is on disk. */
export class LocalLog implements IngestLog {
  readonly shared = false;
  constructor(private readonly buffer: Pick<IngestBuffer, 'submit'>) {}

  append(events: Parameters<IngestBuffer['submit']>[0]): Promise<void> {
    return this.buffer.submit(events);
  }

  async pendingMessages(): Promise<number | null> {
    return 0; // acknowledged means processed: the flush applied before the answer
  }

  async processedAll(): Promise<boolean> {
    return true;
  }

  async ping(): Promise<boolean> {
    return true; // the flush log is a local file; the stores' own checks cover the rest
  }

  readonly lastError = null;
  readonly ownedPartitions: number[] = [];

  async close(): Promise<void> {}
}
