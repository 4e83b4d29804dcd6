/**
 * Failed sign-ins are counted per e-mail and per client address in fixed windows; past either
 * limit every attempt (even a right password) is refused until the window ends. Counting the
 * e-mail stops guessing one account from many addresses, counting the address stops trying
 * many accounts from one.
 */
const WINDOW_MS = 15 * 60_000;
export const MAX_FAILURES_PER_EMAIL = 10;
export const MAX_FAILURES_PER_ADDRESS = 50;
/** Above this many counters, finished windows are dropped (bounded memory under spraying). */
const MAX_TRACKED = 10_000;

interface Window {
  start: number;
  failures: number;
}

export class LoginLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Seconds until the next attempt may be made, or 0 when it may be made now. */
  retryAfter(email: string, address: string): number {
    const now = this.now();
    let wait = 0;
    for (const [key, limit] of this.keys(email, address)) {
      const window = this.windows.get(key);
      if (window && now - window.start < WINDOW_MS && window.failures >= limit) {
        wait = Math.max(wait, Math.ceil((window.start + WINDOW_MS - now) / 1000));
      }
    }
    return wait;
  }

  recordFailure(email: string, address: string): void {
    const now = this.now();
    for (const [key] of this.keys(email, address)) {
      let window = this.windows.get(key);
      if (!window || now - window.start >= WINDOW_MS) {
        if (this.windows.size >= MAX_TRACKED) this.dropFinished(now);
        window = { start: now, failures: 0 };
        this.windows.set(key, window);
      }
      window.failures += 1;
    }
  }

  /** A right password clears the e-mail's count (the address keeps its own). */
  recordSuccess(email: string): void {
    this.windows.delete(`email:${email.toLowerCase()}`);
  }

  private keys(email: string, address: string): [string, number][] {
    return [
      [`email:${email.toLowerCase()}`, MAX_FAILURES_PER_EMAIL],
      [`address:${address}`, MAX_FAILURES_PER_ADDRESS],
    ];
  }

  private dropFinished(now: number): void {
    for (const [key, window] of this.windows) if (now - window.start >= WINDOW_MS) this.windows.delete(key);
  }
}
