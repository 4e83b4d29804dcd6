/**
 * The drain window of a graceful shutdown. Closing the listening socket resets every
 * connection the kernel has completed but the server has not accepted yet, and closing an idle
 * keep-alive connection races a client that is just sending on it. So on SIGTERM the server
 * first keeps accepting and serving as usual, but answers with `Connection: close` (clients
 * open a fresh connection for their next request) and reports not ready on `/_ready` (load
 * balancers stop sending). The window ends once no request has arrived for `quietMs`, or after
 * `maxMs`; only then does the listener close.
 */
export class Drain {
  private active = false;
  private lastRequestAt = 0;

  get draining(): boolean {
    return this.active;
  }

  /** Called for every request. */
  seen(): void {
    this.lastRequestAt = performance.now();
  }

  /** Starts draining; resolves when the window is over. */
  async start(quietMs: number, maxMs: number): Promise<void> {
    this.active = true;
    const started = performance.now();
    this.lastRequestAt = Math.max(this.lastRequestAt, started);
    const step = Math.max(5, Math.min(50, quietMs / 4));
    while (performance.now() - started < maxMs && performance.now() - this.lastRequestAt < quietMs) {
      await new Promise((resolve) => setTimeout(resolve, step));
    }
  }
}
