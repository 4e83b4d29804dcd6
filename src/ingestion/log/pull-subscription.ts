/**
 * One partition consumer's pulls over a subscription that lives as long as the partition is
 * consumed here (NATS JetStream log). nats.js's `fetch` subscribes an inbox per pull and ends it
 * on its own timer; when the event loop stalls, that timer runs before the socket is read and the
 * messages the server sent at the end of the pull are dropped unread, to come back only after
 * ack_wait. Here the inbox outlives every pull: a late message is queued for the next batch, in
 * the order the server sent it, and the timer only decides when to ask again.
 */
import { createInbox, JSONCodec, nanos, type JsMsg, type Msg, type NatsConnection, type Subscription } from 'nats';
// Not re-exported by the package: it wraps a delivered message for ack, nak and its delivery info.
import { toJsMsg } from 'nats/lib/jetstream/jsmsg.js';

/** How long after a pull's expiry the server's end of it (a status message) may still be on its way. */
const PULL_END_GRACE_MS = 3_000;
/** Status messages that end a pull: 404 nothing to give (no_wait), 408 expired, 409 ended otherwise (leader change, limits). */
const PULL_ENDED = new Set([404, 408, 409]);
const request = JSONCodec<{ batch: number; expires: number; max_bytes: number }>();

export class PullSubscription {
  private readonly subscription: Subscription;
  private readonly inbox = createInbox();
  private readonly arrived: JsMsg[] = [];
  /** Messages the open pull may still deliver, or 0 when no pull is open. */
  private awaited = 0;
  private wake: (() => void) | null = null;

  constructor(
    private readonly nc: NatsConnection,
    private readonly stream: string,
    private readonly durable: string,
  ) {
    this.subscription = nc.subscribe(this.inbox, { callback: (_err, msg) => this.receive(msg) });
  }

  /**
   * Asks for up to `max` messages of at most `maxBytes` in all (unless a pull is still open) and
   * resolves with every message that arrived, once the pull has ended: all delivered, or the
   * server said it expired or ended it. Waits at most `expiresMs` and a grace; a pull whose end
   * never came counts as ended, and whatever it still delivers comes with a later batch.
   */
  async next(max: number, maxBytes: number, expiresMs: number): Promise<JsMsg[]> {
    if (this.awaited === 0) {
      this.awaited = max;
      const pull = { batch: max, max_bytes: maxBytes, expires: nanos(expiresMs) };
      this.nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${this.stream}.${this.durable}`, request.encode(pull), { reply: this.inbox });
    }
    await this.pullEnded(expiresMs + PULL_END_GRACE_MS);
    return this.arrived.splice(0);
  }

  /** Waits (bounded) for the open pull to end, and returns what it still delivered. */
  async settle(expiresMs: number): Promise<JsMsg[]> {
    if (this.awaited > 0) await this.pullEnded(expiresMs + PULL_END_GRACE_MS);
    return this.arrived.splice(0);
  }

  close(): void {
    this.subscription.unsubscribe();
  }

  private async pullEnded(withinMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const ended = new Promise<void>((resolve) => (this.wake = resolve));
    const timedOut = new Promise<void>((resolve) => (timer = setTimeout(resolve, withinMs)));
    if (this.awaited > 0) await Promise.race([ended, timedOut]);
    clearTimeout(timer);
    this.wake = null;
    this.awaited = 0;
  }

  private receive(msg: Msg): void {
    const status = msg.headers?.code ?? 0;
    if (status === 0 || status < 100) {
      this.arrived.push(toJsMsg(msg));
      this.awaited = Math.max(0, this.awaited - 1);
    } else if (PULL_ENDED.has(status)) {
      this.awaited = 0;
    } // 100: a heartbeat or flow control, not asked for
    if (this.awaited === 0) this.wake?.();
  }
}
