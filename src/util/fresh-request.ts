/**
 * One request shared by concurrent callers, each answered by a request sent after it called: a
 * caller that comes while a request is in flight waits for the next one, which every caller that
 * came meanwhile shares. However many wait, at most one request is in flight and one queued.
 */
export class FreshRequest<T> {
  private inFlight: Promise<T> | null = null;
  private queued: Promise<T> | null = null;

  constructor(private readonly send: () => Promise<T>) {}

  get(): Promise<T> {
    if (!this.inFlight) return this.start();
    this.queued ??= this.inFlight.then(ignore, ignore).then(() => {
      this.queued = null;
      return this.start();
    });
    return this.queued;
  }

  private start(): Promise<T> {
    const request: Promise<T> = this.send().finally(() => {
      if (this.inFlight === request) this.inFlight = null;
    });
    this.inFlight = request;
    return request;
  }
}

function ignore(): void {}
