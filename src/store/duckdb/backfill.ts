/**
 * Fills the materialized columns (materialized.ts) of events stored before they existed, in the
 * background: small chunks, each its own transaction in the store's write queue, so a write
 * waits for one chunk at most (~30 ms at 4,096 rows). The rows' `mat_filled` marks are the
 * progress: a restart goes on where the last committed chunk ended. When no row is left, the
 * readiness flag is set in the same transaction and the printer starts reading the columns.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Logger } from '../../kernel/logger.js';
import { fillRows, firstUnfilled, MARK_READY } from './materialized.js';
import { inTransaction } from './transaction.js';

export interface BackfillHost {
  /** Runs `work` on the writer connection, in the write queue. */
  write<T>(work: (c: DuckDBConnection) => Promise<T>): Promise<T>;
  checkpoint(): Promise<void>;
  /** Called once, after the readiness flag is committed. */
  onReady(): void;
  log: Logger;
}

export interface BackfillOptions {
  /** Row ids a chunk covers. */
  rows: number;
  /** The least pause between chunks; a chunk that took longer is followed by as long a pause. */
  pauseMs: number;
  /** Chunks between checkpoints (updates are held in memory and the WAL until one). */
  checkpointEvery: number;
}

const DEFAULTS: BackfillOptions = { rows: 4_096, pauseMs: 10, checkpointEvery: 8 };
/** After a failed chunk (say, a full disk), the next try waits this long. */
const RETRY_MS = 5_000;

const firstFrom = async (c: DuckDBConnection, from: number): Promise<number | null> => {
  const first = (await c.runAndReadAll(firstUnfilled(from))).getRows()[0]?.[0];
  return first === null || first === undefined ? null : Number(first);
};

/**
 * One chunk from the first unfilled row at or after `from` (the previous chunk's end, so as not
 * to scan the filled part again), or from the table's start once none is left there. Answers
 * where the next chunk may start, or null once no row is left (the flag is then set).
 */
async function fillChunk(c: DuckDBConnection, from: number, rows: number): Promise<number | null> {
  return inTransaction(c, async () => {
    const first = (await firstFrom(c, from)) ?? (from > 0 ? await firstFrom(c, 0) : null);
    if (first === null) {
      await c.run(`${MARK_READY}; COMMIT`);
      return null;
    }
    await c.run(`${fillRows(first, rows)}; COMMIT`);
    return first + rows;
  });
}

export class Backfill {
  private stopped = false;
  private running: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private readonly options: BackfillOptions;

  constructor(
    private readonly host: BackfillHost,
    options: Partial<BackfillOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  start(): void {
    this.running ??= this.loop();
  }

  /** Ends the loop after the chunk under way (a later start resumes from the marks). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.running;
  }

  private async loop(): Promise<void> {
    const { rows, pauseMs, checkpointEvery } = this.options;
    let chunks = 0;
    let next = 0;
    const started = Date.now();
    this.host.log.info('filling the materialized columns of stored events');
    while (!this.stopped) {
      let pause = pauseMs;
      try {
        const t0 = Date.now();
        const after = await this.host.write((c) => fillChunk(c, next, rows));
        if (after === null) {
          await this.host.checkpoint().catch(() => undefined);
          this.host.log.info({ chunks, seconds: (Date.now() - started) / 1000 }, 'materialized columns filled');
          this.host.onReady();
          return;
        }
        next = after;
        chunks++;
        if (chunks % checkpointEvery === 0) await this.host.checkpoint();
        pause = Math.max(pauseMs, Date.now() - t0);
      } catch (error) {
        if (this.stopped) return;
        this.host.log.warn({ err: error }, 'a materialized columns chunk failed; retrying');
        pause = RETRY_MS;
      }
      await this.sleep(pause);
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms).unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
