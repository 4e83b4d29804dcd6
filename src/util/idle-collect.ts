/**
 * Collecting a thread's garbage once it has gone quiet. V8 collects when a thread allocates, so
 * a thread that stops allocating keeps whatever its last burst left behind: a minute after the
 * ingest benchmark the main thread still held ~90 MB of garbage (V8 heap used 89 of 150 MB),
 * and with it the shared flush records that garbage referenced. A collection of a heap that
 * size takes tens of milliseconds, once, when nothing waits for the thread.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

let gc: (() => void) | null = null;

/** A full collection of this thread's heap, now. */
export function collectGarbage(): void {
  if (!gc) {
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('gc') as () => void;
  }
  gc();
}

/**
 * A full collection that also compacts: V8 moves live objects out of sparse pages only when it
 * judges the fragmentation worth it, and a page with one live object stays resident. After the
 * start (modules loaded, route schemas compiled) the main thread's heap held 36 MB of pages for
 * 25 MB of live objects; compacted, 26 MB. The flag is process-wide, so it is set only for this
 * collection (another thread collecting meanwhile compacts too, which does no harm).
 */
export function compactGarbage(): void {
  v8.setFlagsFromString('--compact-on-every-full-gc');
  try {
    collectGarbage();
  } finally {
    v8.setFlagsFromString('--no-compact-on-every-full-gc');
  }
}

/**
 * Holds every thread's heap to `percent` growth past what survived its last full collection
 * (kernel/memory-budget.ts says why). Process-wide, and V8 reads it at each collection, so it
 * also covers threads started later; 0 leaves V8's own pacing.
 */
export function limitHeapGrowth(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/**
 * Compacts once after work (`touch()`) has been followed by `quietMs` without any. The start
 * counts as work (loading the modules and compiling the routes left garbage and sparse pages)
 * with a shorter wait, `startQuietMs`: an idle server would otherwise keep it until its first
 * request and a quiet half-minute after that.
 */
export class IdleCollector {
  private worked = true;
  private lastWork = Date.now();
  private waitMs: number;
  private readonly timer: NodeJS.Timeout;
  /** Run before each idle collection: let go of what is kept only for speed, so it is collected too. */
  private readonly releasers: (() => void)[] = [];

  constructor(
    private readonly quietMs: number,
    startQuietMs = quietMs,
  ) {
    this.waitMs = startQuietMs;
    this.timer = setInterval(() => this.collectIfQuiet(), Math.min(quietMs, startQuietMs) / 3);
    this.timer.unref();
  }

  /** `release` runs at each idle collection, before it. */
  onIdle(release: () => void): void {
    this.releasers.push(release);
  }

  touch(): void {
    this.worked = true;
    this.lastWork = Date.now();
  }

  private collectIfQuiet(): void {
    if (!this.worked || Date.now() - this.lastWork < this.waitMs) return;
    this.worked = false;
    this.waitMs = this.quietMs;
    for (const release of this.releasers) release();
    compactGarbage();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
