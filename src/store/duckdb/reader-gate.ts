/**
 * Lets a checkpoint find a moment with no reads in flight.
 *
 * DuckDB skips its automatic checkpoint while any other transaction is active, so a steady
 * trickle of queries (the events list, exports) can keep the WAL growing without bound: the
 * un-checkpointed rows stay in memory, reads get slower, so they overlap more, and the service
 * spirals down. The gate lets the writer close the door to new reads, wait (bounded) for the
 * running ones to end, checkpoint, and open it again.
 */
export class ReaderGate {
  private active = 0;
  private closed: Promise<void> | null = null;
  private open: (() => void) | null = null;
  private drained: (() => void) | null = null;

  /** Waits out any checkpoint in progress; pair with `leave`. */
  async enter(): Promise<void> {
    while (this.closed) await this.closed;
    this.active += 1;
  }

  leave(): void {
    this.active -= 1;
    if (this.active === 0) this.drained?.();
  }

  async read<T>(work: () => Promise<T>): Promise<T> {
    await this.enter();
    try {
      return await work();
    } finally {
      this.leave();
    }
  }

  /**
   * Closes the gate, waits up to `waitMs` for running reads, then runs `work` if none is left
   * (returns false without running it otherwise: a long export must not stall ingestion).
   */
  async exclusive(waitMs: number, work: () => Promise<void>): Promise<boolean> {
    if (this.closed) return false;
    this.closed = new Promise((resolve) => (this.open = resolve));
    try {
      if (this.active > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, waitMs);
          this.drained = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.drained = null;
      }
      if (this.active > 0) return false;
      await work();
      return true;
    } finally {
      const open = this.open;
      this.closed = null;
      this.open = null;
      open?.();
    }
  }
}
