/**
 * Failed sign-ins are counted per e-mail and per client address in fixed windows; past either
 * limit every attempt (even a right password) is refused until the window ends. Counting the
 * e-mail stops guessing one account from many addresses, counting the address stops trying
 * many accounts from one. The windows are the store's where nodes share one, so the limits
 * hold across them.
 */
import { secondsLeft } from '../http/rate-limit.js';
import { MemoryRateWindows, type RateWindows } from '../util/rate-windows.js';

const WINDOW_MS = 15 * 60_000;
export const MAX_FAILURES_PER_EMAIL = 10;
export const MAX_FAILURES_PER_ADDRESS = 50;

export class LoginLimiter {
  constructor(
    private readonly now: () => number = Date.now,
    private readonly windows: RateWindows = new MemoryRateWindows(),
  ) {}

  /** Seconds until the next attempt may be made, or 0 when it may be made now. */
  async retryAfter(email: string, address: string): Promise<number> {
    const now = this.now();
    let wait = 0;
    for (const [key, limit] of this.keys(email, address)) {
      const window = await this.windows.add(key, 0, WINDOW_MS, now);
      if (window.count >= limit) wait = Math.max(wait, secondsLeft(window.start, WINDOW_MS, now));
    }
    return wait;
  }

  async recordFailure(email: string, address: string): Promise<void> {
    const now = this.now();
    for (const [key] of this.keys(email, address)) await this.windows.add(key, 1, WINDOW_MS, now);
  }

  /** A right password clears the e-mail's count (the address keeps its own). */
  async recordSuccess(email: string): Promise<void> {
    await this.windows.clear(this.emailKey(email));
  }

  private emailKey(email: string): string {
    return `sign-in:email:${email.toLowerCase()}`;
  }

  private keys(email: string, address: string): [string, number][] {
    return [
      [this.emailKey(email), MAX_FAILURES_PER_EMAIL],
      [`sign-in:address:${address}`, MAX_FAILURES_PER_ADDRESS],
    ];
  }
}
