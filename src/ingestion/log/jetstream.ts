/**
 * The JetStream log (distributed mode, SIGHTLINE_NATS_URL): capture publishes each batch, split
 * by partition (a hash of project and distinct_id), to the stream and answers after the PubAck;
 * `Nats-Msg-Id` (the batch id and partition) lets the stream drop a client's retry. Each
 * partition has one durable pull consumer, consumed by the node that holds the partition's
 * advisory lock (partition-owner.ts). A message is acknowledged only once the stores hold its
 * events, so a node that dies leaves its unacknowledged messages to the next owner; event uuids
 * make a redelivery harmless: the metadata store drops uuids it has, and the rows of a
 * redelivered batch are written again to an event store that keeps one row per uuid.
 */
import { AckPolicy, connect, DeliverPolicy, DiscardPolicy, nanos, RetentionPolicy, StorageType, type Consumer, type JetStreamClient, type JetStreamManager, type JsMsg, type MsgRequest, type NatsConnection, type NatsError, type StreamConfig, type StreamState } from 'nats';
import type { Logger } from '../../kernel/logger.js';
import { FreshRequest } from '../../util/fresh-request.js';
import { answersWithinMs, withinMs } from '../../util/within-ms.js';
import type { PendingEvent } from '../plan/plan.js';
import { decodeBatch, encodeInParts } from './batch-codec.js';
import { LOST_DELIVERIES_MESSAGE, lostDeliveries } from './delivery-gaps.js';
import { FairShare } from './fair-share.js';
import { PartitionLocks } from './partition-owner.js';
import { PullSubscription } from './pull-subscription.js';
import { partitionsMergedWith, splitByPartition } from './partitions.js';
import { LogUnavailableError, type IngestLog } from './types.js';

export interface JetStreamSettings {
  urls: string[];
  stream: string;
  partitions: number;
  publishTimeoutMs: number;
  /** The stream's bound: unprocessed batches beyond it are refused (capture answers 503). */
  maxBytes: number;
}

export interface JetStreamDeps {
  /** Stores the events; resolves once the metadata store has them. */
  submit(events: PendingEvent[]): Promise<void>;
  /** Waits until the event store holds everything submitted so far; false after the timeout. */
  eventsStored(timeoutMs: number): Promise<boolean>;
  /** Why the event store does not take writes right now, or null. */
  eventStoreError(): { message: string } | null;
  /** Whether the metadata store answers a ping. */
  metaStoreReachable(): Promise<boolean>;
  postgresUrl: string;
  log: Logger;
}

/** How long the stream remembers a Nats-Msg-Id (an SDK's retries come within it). */
const DUPLICATE_WINDOW_MS = 10 * 60_000;
/** How long a metadata-store ping result is reused by read-your-writes waits, and how long one may take. */
const META_CHECK_MS = 1_000;
const META_PING_TIMEOUT_MS = 500;
/** An unacknowledged message goes to the next owner after this long (the owner extends it while it waits for the stores). */
const ACK_WAIT_MS = 15_000;
const PULL_MAX_MESSAGES = 256;
/**
 * What one node's pulls may have on their way at once, over all its partitions. The server cuts
 * off a client that leaves more than its max_pending (64 MiB by default) unread, as a stalled
 * event loop does, and the deliveries on the way are lost until ack_wait. 256 messages of a
 * partition can be 15 MB, and eight partitions twice that limit.
 */
const PULLS_MAX_BYTES = 32 * 1024 * 1024;
/** Room for a delivered message's subject and headers above its payload. */
const DELIVERY_OVERHEAD_BYTES = 4096;
/** NATS's default max_payload, for a connection that has not said its server's yet. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;
/** Of max_payload, what a published message's headers (its Nats-Msg-Id) may take. */
const HEADER_ROOM_BYTES = 1024;
const PULL_EXPIRES_MS = 1_000;
/** How often a node looks at who holds what, takes free partitions and hands over those above its share. */
const CLAIM_INTERVAL_MS = 1_000;
/** Partitions are handed over only once the live nodes have not changed for this long (no flapping). */
const SETTLE_MS = 3_000;
const RETRY_DELAY_MS = 1_000;
/** After ack_wait, how long until the stream has queued an expired delivery for redelivery. */
const REDELIVERY_MARGIN_MS = 1_000;
/** Shorter than ACK_WAIT_MS: each wait for the stores ends by telling the stream the messages are still in work. */
const STORED_WAIT_MS = 5_000;
/** Stream setup at start: each JetStream API call's bound, and how often the whole is tried. */
const SETUP_TIMEOUT_MS = 20_000;
const SETUP_ATTEMPTS = 4;
const CONSUMER_SETUP_CONCURRENCY = 16;
/** The stream's answer to a publish past its byte bound (discard new). */
const STREAM_FULL = /maximum bytes exceeded/i;
/** How long a merge waits for another partition's earlier batches, and how often it looks. */
const MERGE_WAIT_MS = 10_000;
const MERGE_POLL_MS = 20;
/** JetStream's error code for a message lookup that found none. */
const NO_MESSAGE_FOUND = 10037;
/** /_ready must answer quickly even while the stream elects a leader. */
const PING_TIMEOUT_MS = 1_000;

/**
 * A batch's events; a redelivered batch's may be in the metadata store but not in the event store
 * (its first taker died between the two): plan/redelivered.ts writes them again.
 */
const decodeMessage = (m: JsMsg): PendingEvent[] => (m.redelivered ? decodeBatch(m.data).map((e) => ({ ...e, redelivered: true })) : decodeBatch(m.data));
const subjectOf = (stream: string, partition: number) => `${stream}.p.${partition}`;
const durableOf = (partition: number) => `p${partition}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const failure = (err: unknown) => ({ message: err instanceof Error ? err.message : String(err), at: new Date().toISOString() });

async function connectTo(urls: string[], name: string): Promise<NatsConnection> {
  return connect({ servers: urls, name, maxReconnectAttempts: -1, reconnectTimeWait: 500, timeout: 5_000 });
}

/**
 * Creates or updates the stream and its consumers (at start and by `sightline migrate`): R3 once
 * three servers are known, so a NATS node may fail without losing an acknowledged batch. Nodes
 * starting at the same moment all run it: their requests wait on one another while the new stream's
 * replicas elect a leader, so each call gets a long timeout and the whole is tried again.
 * Says whether the stream has work-queue retention, and why not when it cannot get it.
 */
export async function ensureStream(nc: NatsConnection, settings: JetStreamSettings): Promise<StreamSetup> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ensureStreamOnce(nc, settings);
    } catch (error) {
      if (attempt === SETUP_ATTEMPTS) throw error;
      await sleep(RETRY_DELAY_MS * attempt);
    }
  }
}

/**
 * Work-queue retention: a batch leaves the stream when its partition's consumer acknowledges it,
 * so the stream holds only what ingestion has not processed, and its byte bound (discarding new
 * publishes) is the documented back-pressure point: a full stream refuses the batch, capture
 * answers 503 and the SDKs retry. With the default (limits) retention every batch ever captured
 * would stay on the NATS nodes' disks.
 */
function streamConfig(settings: JetStreamSettings, replicas: number): Partial<StreamConfig> & { name: string } {
  return {
    name: settings.stream,
    subjects: [`${settings.stream}.p.*`],
    storage: StorageType.File,
    num_replicas: replicas,
    duplicate_window: nanos(DUPLICATE_WINDOW_MS),
    retention: RetentionPolicy.Workqueue,
    max_bytes: settings.maxBytes,
    discard: DiscardPolicy.New,
  };
}

interface StreamSetup {
  workQueue: boolean;
  /** Why the stream keeps another retention (one an earlier version made), or null. */
  warning: string | null;
}

async function ensureStreamOnce(nc: NatsConnection, settings: JetStreamSettings): Promise<StreamSetup> {
  const jsm = await nc.jetstreamManager({ timeout: SETUP_TIMEOUT_MS });
  const known = new Set([...settings.urls, ...(nc.info?.connect_urls ?? [])]);
  const config = streamConfig(settings, known.size >= 3 ? 3 : 1);
  const existing = () => jsm.streams.info(settings.stream).then(
    (info) => info.config,
    () => null,
  );
  // NATS cannot change a stream's retention (an update keeps it): a stream an earlier version made
  // keeps limits retention, and then no byte bound, as processed batches would count towards it.
  const { retention, ...updatable } = config;
  const update = async (current: StreamConfig): Promise<string | null> => {
    if (current.retention === retention) {
      await jsm.streams.update(settings.stream, updatable);
      return null;
    }
    await jsm.streams.update(settings.stream, { ...updatable, discard: current.discard, max_bytes: current.max_bytes });
    return (
      `NATS stream ${settings.stream} has ${current.retention} retention: it keeps processed batches and has no byte bound. ` +
      'For work-queue retention, stop capture, wait for /_health log_pending_messages 0, delete the stream and start again'
    );
  };
  const current = await existing();
  // Another node may create it between the look and the add: then it is updated like an existing one.
  const warning = current
    ? await update(current)
    : await jsm.streams.add(config).then(
        () => null,
        async (error: unknown) => {
          const made = await existing();
          if (!made) throw error;
          return update(made);
        },
      );
  const tunable = { ack_wait: nanos(ACK_WAIT_MS), max_ack_pending: PULL_MAX_MESSAGES * 4 };
  const ensureConsumer = async (p: number) => {
    const config = { durable_name: durableOf(p), filter_subject: subjectOf(settings.stream, p), ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, ...tunable };
    // An existing consumer keeps its position; only what may change between versions is updated.
    await jsm.consumers.add(settings.stream, config).catch(() => jsm.consumers.update(settings.stream, durableOf(p), tunable));
  };
  // A few at a time: each new replicated consumer is a ~0.6 s round of the NATS cluster's consensus.
  for (let first = 0; first < settings.partitions; first += CONSUMER_SETUP_CONCURRENCY) {
    const partitions = Array.from({ length: Math.min(CONSUMER_SETUP_CONCURRENCY, settings.partitions - first) }, (_, i) => first + i);
    await Promise.all(partitions.map(ensureConsumer));
  }
  return { workQueue: warning === null, warning };
}

/** `sightline migrate`: the stream and its consumers. */
export async function migrateStream(settings: JetStreamSettings): Promise<string> {
  const nc = await connectTo(settings.urls, 'sightline-migrate');
  try {
    const { warning } = await ensureStream(nc, settings);
    return `NATS stream ${settings.stream} is up to date (${settings.partitions} partitions)${warning ? `\nwarning: ${warning}` : ''}`;
  } finally {
    await nc.close();
  }
}

export class JetStreamLog implements IngestLog {
  readonly shared = true;
  private closed = false;
  private readonly running = new Map<number, Promise<void>>();
  private claimer: NodeJS.Timeout | null = null;
  private readonly locks: PartitionLocks;
  private readonly share: FairShare;
  /** While closing, until when the consumers may still store what their partitions hold. */
  private drainUntil = 0;
  /** Partitions whose consumer is stopping to hand them to another node. */
  private readonly handingOver = new Set<number>();
  /** The stream's state, asked once for every `processedAll` that began meanwhile. */
  private readonly streamState: FreshRequest<StreamState>;
  /** Limits retention: when this node last had a batch acknowledged, and when a wait that began later succeeded. */
  private lastAppendAt = 0;
  private settledAt = 0;
  /** Last failure to store a fetched batch, until a batch is stored again. */
  private storeError: { message: string; at: string } | null = null;
  /** The claim pass running, if any (close waits for it: it may start a consumer). */
  private claimPass: Promise<unknown> = Promise.resolve();
  /** Last failure to reach PostgreSQL for the partition locks, until a claim pass succeeds. */
  private claimError: { message: string; at: string } | null = null;
  /** The last metadata-store ping (reused for META_CHECK_MS). */
  private metaCheck: { at: number; reachable: Promise<boolean> } | null = null;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly settings: JetStreamSettings,
    private readonly deps: JetStreamDeps,
    /** Work-queue retention: the stream holds exactly the unacknowledged batches. */
    private readonly workQueue: boolean,
  ) {
    this.locks = new PartitionLocks(deps.postgresUrl, settings.stream, deps.log);
    this.share = new FairShare(settings.partitions, SETTLE_MS);
    this.streamState = new FreshRequest(async () => (await jsm.streams.info(settings.stream)).state);
  }

  static async open(settings: JetStreamSettings, deps: JetStreamDeps): Promise<JetStreamLog> {
    const nc = await connectTo(settings.urls, 'sightline');
    try {
      const { workQueue, warning } = await ensureStream(nc, settings);
      if (warning) deps.log.warn(warning);
      const log = new JetStreamLog(nc, nc.jetstream(), await nc.jetstreamManager(), settings, deps, workQueue);
      log.startClaiming();
      return log;
    } catch (error) {
      await nc.close().catch(() => undefined);
      throw error;
    }
  }

  async append(events: PendingEvent[], batchId: string): Promise<void> {
    if (this.closed) throw new LogUnavailableError('shutting down');
    const messageMaxBytes = (this.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD) - HEADER_ROOM_BYTES;
    // All encoded before anything is published: an event too large for a message refuses the whole batch.
    const outgoing = [...splitByPartition(events, this.settings.partitions)].map(([partition, group]) => ({
      partition,
      parts: encodeInParts(group, messageMaxBytes),
      merges: partitionsMergedWith(group, partition, this.settings.partitions).length > 0,
    }));
    // A partition's parts one after the other: a retry that finds the first stored keeps their order.
    const publishParts = async ({ partition, parts }: (typeof outgoing)[number]) => {
      for (const [i, data] of parts.entries()) {
        const msgID = parts.length === 1 ? `${batchId}.${partition}` : `${batchId}.${partition}.${i}`;
        await this.js.publish(subjectOf(this.settings.stream, partition), data, { msgID, timeout: this.settings.publishTimeoutMs });
      }
    };
    const publish = (list: typeof outgoing) => Promise.all(list.map(publishParts));
    // A group that merges with another partition goes after the rest of its batch, so that the
    // other side of the merge (an anonymous id's first events, say) has the earlier sequence.
    const merging = outgoing.filter((o) => o.merges);
    const published = merging.length === 0 ? publish(outgoing) : publish(outgoing.filter((o) => !o.merges)).then(() => publish(merging));
    let timer: NodeJS.Timeout | undefined;
    // The client's own timeout covers the request; this one covers a connection that never answers at all.
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new LogUnavailableError('the NATS stream did not answer in time')), this.settings.publishTimeoutMs + 1_000);
    });
    try {
      await Promise.race([published, deadline]);
      this.lastAppendAt = performance.now();
    } catch (error) {
      if (error instanceof LogUnavailableError) throw error;
      const message = error instanceof Error ? error.message : String(error);
      if (STREAM_FULL.test((error as NatsError).api_error?.description ?? '')) throw new LogUnavailableError('the ingestion log is full (SIGHTLINE_NATS_MAX_MB): ingestion is behind capture');
      throw new LogUnavailableError(`the NATS stream did not take the batch: ${message}`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Messages in the stream that no consumer has acknowledged yet, over every partition. */
  async pendingMessages(): Promise<number | null> {
    return this.unprocessedIn(Array.from({ length: this.settings.partitions }, (_, p) => p)).catch(() => null);
  }

  private async unprocessedIn(partitions: number[]): Promise<number> {
    let pending = 0;
    for (const p of partitions) {
      const info = await this.jsm.consumers.info(this.settings.stream, durableOf(p));
      pending += info.num_pending + info.num_ack_pending;
    }
    return pending;
  }

  /** Last consumer failure, while it lasts (shown by /_health). */
  get lastError(): { message: string; at: string } | null {
    return this.storeError ?? this.claimError;
  }

  /**
   * With work-queue retention an acknowledged batch leaves the stream, so every batch published
   * before the call (on any node) is processed once the stream's first sequence has passed its
   * last one then: one stream request per wait, shared by the waits that began meanwhile. So a
   * client that captured through one node reads its events through any other.
   */
  async processedAll(timeoutMs: number): Promise<boolean> {
    if (!this.workQueue) return this.processedAllByConsumers(timeoutMs);
    try {
      const deadline = await this.waitDeadline(timeoutMs);
      let state = await this.streamState.get();
      const target = state.last_seq;
      while (state.messages > 0 && state.first_seq <= target) {
        if (Date.now() >= deadline) return false;
        await sleep(20);
        state = await this.streamState.get();
      }
      return true;
    } catch {
      return false;
    }
  }

  /**
   * While the consumers fail (a store is down), waiting cannot help: look once and answer, so that
   * /flags and the API answer at once (from cache, or with their own error) instead of after the
   * whole wait. PostgreSQL may have just stopped with a flush still waiting on it, before any
   * consumer failed: its ping says so at once.
   */
  private async waitDeadline(timeoutMs: number): Promise<number> {
    const failing = this.lastError || this.deps.eventStoreError() || !(await this.metaStoreReachable());
    return failing ? Date.now() : Date.now() + timeoutMs;
  }

  /**
   * A stream with limits retention keeps acknowledged batches: each partition's consumer says how
   * far it got. Only this node's acknowledgements are waited for (the round trips grow with the
   * partitions).
   */
  private async processedAllByConsumers(timeoutMs: number): Promise<boolean> {
    // Nothing acknowledged here since the last wait that succeeded: no round trips to the stream.
    if (this.settledAt > this.lastAppendAt) return true;
    const began = performance.now();
    const deadline = await this.waitDeadline(timeoutMs);
    try {
      const lastSeq = (await this.jsm.streams.info(this.settings.stream)).state.last_seq;
      for (let p = 0; p < this.settings.partitions; p++) {
        for (;;) {
          const info = await this.jsm.consumers.info(this.settings.stream, durableOf(p));
          // Everything up to lastSeq acknowledged: either nothing waits, or the ack floor passed it.
          if ((info.num_pending === 0 && info.num_ack_pending === 0) || info.ack_floor.stream_seq >= lastSeq) break;
          if (Date.now() >= deadline) return false;
          await sleep(20);
        }
      }
      this.settledAt = Math.max(this.settledAt, began);
      return true;
    } catch {
      return false;
    }
  }

  /** Whether PostgreSQL answers, asked at most once per META_CHECK_MS and bounded by META_PING_TIMEOUT_MS. */
  private metaStoreReachable(): Promise<boolean> {
    const now = Date.now();
    if (!this.metaCheck || now - this.metaCheck.at >= META_CHECK_MS) {
      const reachable = withinMs(META_PING_TIMEOUT_MS, this.deps.metaStoreReachable()).catch(() => false);
      this.metaCheck = { at: now, reachable };
    }
    return this.metaCheck.reachable;
  }

  /** The stream answers its info request within PING_TIMEOUT_MS (no leader, no quorum: it does not). */
  async ping(): Promise<boolean> {
    return answersWithinMs(PING_TIMEOUT_MS, this.jsm.streams.info(this.settings.stream));
  }


  /** Partitions this node holds now (and consumes, unless it is handing one over). */
  get ownedPartitions(): number[] {
    return this.locks.partitions;
  }

  private startClaiming(): void {
    const tick = () => {
      if (this.closed) return;
      this.claimPass = this.rebalance()
        .then(
          () => (this.claimError = null), // PostgreSQL answered every query of this pass
          (err: unknown) => {
            if (!this.claimError) this.deps.log.warn({ err }, 'could not reach PostgreSQL to share the partitions; trying again');
            this.claimError = failure(err);
          },
        )
        .finally(() => {
          if (!this.closed) this.claimer = setTimeout(tick, CLAIM_INTERVAL_MS);
        });
    };
    tick();
  }

  /** One pass towards this node's fair share: hand over what is above it, take free partitions up to it. */
  private async rebalance(): Promise<void> {
    const survey = await this.locks.survey(this.settings.partitions);
    const step = this.share.step(survey, performance.now());
    if (step.release > 0) {
      // The highest first: any would do, a fixed order keeps each node's set predictable.
      const giving = this.locks.partitions.reverse().slice(0, step.release);
      await Promise.all(giving.map((p) => this.handOver(p)));
      return; // the next pass looks again, with these partitions free
    }
    // Held but not consumed: a loop that failed; start it again.
    for (const p of this.locks.partitions) if (!this.running.has(p)) this.startConsuming(p);
    let taking = step.take;
    for (const p of survey.free) {
      if (taking <= 0 || this.closed) break;
      if (!(await this.locks.tryTake(p))) continue; // another node was quicker
      taking -= 1;
      this.startConsuming(p);
    }
  }

  private startConsuming(partition: number): void {
    if (!this.open) return;
    // A failure that escapes the loop must not end the process: the next pass starts it again.
    const loop = this.consume(partition)
      .catch((err: unknown) => this.deps.log.error({ err, partition }, 'consuming a partition failed; starting again'))
      .finally(() => this.running.delete(partition));
    this.running.set(partition, loop);
  }

  /**
   * Gives a partition to the next node cleanly: the consumer stops fetching, stores and
   * acknowledges the batch in hand, and only then is the lock released, so two nodes never
   * store one partition at once and a person's events keep their order.
   */
  private async handOver(partition: number): Promise<void> {
    this.handingOver.add(partition);
    try {
      await this.running.get(partition);
      // The acks are on their way: make sure the server has them before the next owner fetches.
      await this.nc.flush().catch(() => undefined);
      await this.locks.release(partition);
      this.deps.log.info({ partition, keeps: this.locks.partitions }, 'handed a NATS log partition over to share the work');
    } finally {
      this.handingOver.delete(partition);
    }
  }

  /** Consumes one partition while this node holds it: pull, store, then acknowledge. */
  private async consume(partition: number): Promise<void> {
    const puller = new PullSubscription(this.nc, this.settings.stream, durableOf(partition));
    let consumer: Consumer | null = null;
    let lastDelivery: number | null = null;
    let tookOver = false;
    try {
      while (this.consuming(partition)) {
        let messages: JsMsg[] = [];
        try {
          // Inside the loop's guard: a request that times out (a busy or electing stream) is retried,
          // where a rejection out of this loop would end the process.
          consumer ??= await this.js.consumers.get(this.settings.stream, durableOf(partition));
          if (!tookOver) {
            await this.awaitUnacknowledged(consumer, partition);
            tookOver = true;
          }
          // Closing: done once the partition holds nothing more, in the stream or on its way here.
          if (this.closed && (await this.unprocessedIn([partition])) === 0) break;
          messages = await puller.next(PULL_MAX_MESSAGES, this.pullMaxBytes(), PULL_EXPIRES_MS);
          if (messages.length === 0) continue;
          const lost = lostDeliveries(lastDelivery, messages.map((m) => m.info.deliverySequence));
          lastDelivery = messages[messages.length - 1].info.deliverySequence;
          if (lost > 0) {
            // Nothing later than what was lost is applied before it: these go back for after the
            // lost ones (whose ack_wait ends first), and the partition waits until both are due.
            this.deps.log.warn({ partition, lost }, LOST_DELIVERIES_MESSAGE);
            for (const m of messages) m.nak(ACK_WAIT_MS);
            await this.pause(partition, ACK_WAIT_MS + REDELIVERY_MARGIN_MS);
            continue;
          }
          await this.storeInOrder(partition, messages);
        } catch (err) {
          // Not acknowledged: redelivered (to this node or the next owner) once the stores answer again.
          // Without a delay: the server then queues them for redelivery at once, and serves that queue
          // before later messages, so the next pull starts with them. A delayed nak raced the pause
          // below, and a pull that came first brought later batches, applied before these.
          for (const m of messages) m.nak();
          this.storeError = failure(err);
          this.deps.log.warn({ err, partition }, 'could not store a batch from the NATS stream; retrying');
          await sleep(RETRY_DELAY_MS);
        }
      }
      // A hand-over or a shutdown: what the last pull still delivers is stored here, while the lock
      // is held, instead of waiting out ack_wait for the next owner.
      const late = await puller.settle(PULL_EXPIRES_MS);
      const inOrder = lostDeliveries(lastDelivery, late.map((m) => m.info.deliverySequence)) === 0;
      if (late.length > 0 && inOrder && this.locks.owns(partition)) await this.storeInOrder(partition, late).catch(() => late.forEach((m) => m.nak()));
    } finally {
      puller.close();
    }
  }

  /**
   * Stores and acknowledges the messages in order. A message whose merges reach other partitions
   * waits until those have processed every batch published before it, so that a merge sees the
   * other distinct id's earlier events (another node may consume that partition). What precedes it
   * is acknowledged first: a waiting partition then holds only messages later than the one it
   * waits with, and two partitions never wait on each other.
   */
  private async storeInOrder(partition: number, messages: JsMsg[]): Promise<void> {
    const batches = messages.map(decodeMessage);
    let start = 0;
    for (let i = 0; i < messages.length; i++) {
      const reached = partitionsMergedWith(batches[i], partition, this.settings.partitions);
      if (reached.length === 0) continue;
      if (i > start) await this.storeAndAck(partition, messages.slice(start, i), batches.slice(start, i).flat());
      start = i;
      await this.awaitEarlierBatches(partition, reached, messages.slice(i));
    }
    await this.storeAndAck(partition, messages.slice(start), batches.slice(start).flat());
  }

  /**
   * Waits until none of `others` holds a message published before `held[0]`, at most
   * MERGE_WAIT_MS: a partition whose owner died gets its messages back only after ack_wait, and
   * the merge is then applied without them rather than stalling its partition.
   */
  private async awaitEarlierBatches(partition: number, others: number[], held: JsMsg[]): Promise<void> {
    const seq = held[0].info.streamSequence;
    const until = Date.now() + MERGE_WAIT_MS;
    held.forEach((m) => m.working()); // MERGE_WAIT_MS is within a fresh ack_wait
    for (const other of others) {
      while (await this.holdsEarlier(other, seq)) {
        if (!this.consuming(partition)) return; // handed over: stored now, with what there is
        if (Date.now() >= until) {
          this.deps.log.warn({ partition, other }, "a merge waited too long for the other partition's earlier batches; applying it without them");
          return;
        }
        await sleep(MERGE_POLL_MS);
      }
    }
  }

  /** Whether `partition` has a message before `seq` that its consumer has not acknowledged. */
  private async holdsEarlier(partition: number, seq: number): Promise<boolean> {
    const subject = subjectOf(this.settings.stream, partition);
    // Work-queue retention keeps only unacknowledged messages; with limits retention, look past the ack floor.
    const from = this.workQueue ? 0 : (await this.jsm.consumers.info(this.settings.stream, durableOf(partition))).ack_floor.stream_seq + 1;
    if (from >= seq) return false;
    try {
      // next_by_subj is in the server's API (2.9) but not in nats.js's types.
      const next = await this.jsm.streams.getMessage(this.settings.stream, { next_by_subj: subject, seq: from } as unknown as MsgRequest);
      return next.seq < seq;
    } catch (error) {
      if ((error as NatsError).api_error?.err_code === NO_MESSAGE_FOUND) return false;
      throw error;
    }
  }

  private async storeAndAck(partition: number, messages: JsMsg[], events: PendingEvent[]): Promise<void> {
    await this.store(messages, events);
    for (const m of messages) m.ack();
    if (this.storeError) this.deps.log.info({ partition }, 'consuming the NATS stream again');
    this.storeError = null;
  }

  /**
   * One pull's share of PULLS_MAX_BYTES, but never less than the largest message the server takes
   * (it ends a pull that cannot hold the next message, which would then never be delivered).
   */
  private pullMaxBytes(): number {
    const largestMessage = (this.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD) + DELIVERY_OVERHEAD_BYTES;
    return Math.max(largestMessage, Math.floor(PULLS_MAX_BYTES / Math.max(1, this.running.size)));
  }

  /** Not closed, or closing within the drain window. */
  private get open(): boolean {
    return !this.closed || Date.now() < this.drainUntil;
  }

  /** While closing, a partition being handed over is drained first: the other node may be stopping too. */
  private consuming(partition: number): boolean {
    return this.open && this.locks.owns(partition) && (this.closed || !this.handingOver.has(partition));
  }

  /** Waits `ms` unless the partition stops being consumed here meanwhile. */
  private async pause(partition: number, ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (this.consuming(partition) && Date.now() < until) await sleep(Math.min(250, until - Date.now()));
  }

  /**
   * On taking a partition: deliveries the previous owner never acknowledged (a node that died, a
   * fetch that lost them) come back only once their ack_wait ends, and must be applied before
   * later messages. So while any are pending, wait (at most ack_wait and a margin) before the
   * first fetch. After a clean hand-over none are: the previous owner acked and flushed.
   */
  private async awaitUnacknowledged(consumer: Consumer, partition: number): Promise<void> {
    const until = Date.now() + ACK_WAIT_MS + REDELIVERY_MARGIN_MS;
    let waited = false;
    while (this.consuming(partition) && Date.now() < until) {
      if ((await consumer.info()).num_ack_pending === 0) break;
      if (!waited) this.deps.log.info({ partition }, 'took a partition with unacknowledged deliveries: waiting for them before later batches');
      waited = true;
      await sleep(500);
    }
  }

  /** Resolves once both stores hold the messages' events. */
  private async store(messages: JsMsg[], events: PendingEvent[]): Promise<void> {
    const inWork = setInterval(() => messages.forEach((m) => m.working()), STORED_WAIT_MS);
    try {
      await this.deps.submit(events);
      while (!(await this.deps.eventsStored(STORED_WAIT_MS))) {
        if (this.closed && Date.now() >= this.drainUntil) throw new Error('shutting down before the event store took the batch');
        // Still waiting (the batch is kept, not nak'ed), but reads stop waiting for it.
        const failing = this.deps.eventStoreError();
        if (failing) this.storeError = failure(new Error(`waiting for the event store: ${failing.message}`));
      }
    } finally {
      clearInterval(inWork);
    }
  }

  private async takeFree(): Promise<void> {
    const { free } = await this.locks.survey(this.settings.partitions);
    for (const p of free) if (await this.locks.tryTake(p)) this.startConsuming(p);
  }

  /**
   * Stops taking batches; the partitions' consumers go on for at most `drainMs`, until their
   * partition holds nothing more (what is left goes to the next owner), then lets go of the
   * partitions. So a node stopped cleanly leaves the batches it was consuming stored, as the
   * flush log's shutdown does.
   */
  async close(options: { drainMs?: number } = {}): Promise<void> {
    this.closed = true;
    this.drainUntil = Date.now() + (options.drainMs ?? 0);
    if (this.claimer) clearTimeout(this.claimer);
    // Within the drain window: PostgreSQL may be what is down.
    const windowLeft = () => Math.max(0, this.drainUntil - Date.now());
    await withinMs(windowLeft(), this.claimPass).catch(() => undefined);
    // Partitions free now (handed over by a node that stopped a moment ago, or about to be by one
    // stopping too) are drained here as well: otherwise nobody would before the next start.
    if (windowLeft() > 0) await withinMs(windowLeft(), this.takeFree()).catch(() => undefined);
    const draining = this.locks.partitions;
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
    // Only to say so: bounded, as NATS may be what is down.
    const left = await withinMs(PING_TIMEOUT_MS, this.unprocessedIn(draining)).catch(() => 0);
    if (left > 0) this.deps.log.warn({ partitions: draining, left }, 'stopping with batches of this node\'s partitions unprocessed; the next owner takes them');
    // The last acks reach the stream before the partitions are free (the next owner would wait for them).
    await this.nc.flush().catch(() => undefined);
    await this.locks.close();
    await this.nc.drain().catch(() => undefined);
  }
}
