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
 * Holds every thread's heap to `percent` growth past what survived its last full collection
 * (kernel/memory-budget.ts says why). Process-wide, and V8 reads it at each collection, so it
 * also covers threads started later; 0 leaves V8's own pacing.
 */
export function limitHeapGrowth(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/** Collects once after work (`touch()`) has been followed by `quietMs` without any. */
export class IdleCollector {
  private worked = false;
  private lastWork = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly quietMs: number) {
    this.timer = setInterval(() => this.collectIfQuiet(), quietMs / 3);
    this.timer.unref();
  }

  touch(): void {
    this.worked = true;
    this.lastWork = Date.now();
  }

  private collectIfQuiet(): void {
    if (!this.worked || Date.now() - this.lastWork < this.quietMs) return;
    this.worked = false;
    collectGarbage();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
