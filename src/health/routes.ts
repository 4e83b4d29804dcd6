import type { FastifyInstance } from 'fastify';
import type { IngestBuffer } from '../ingestion/buffer.js';
import type { IngestLog } from '../ingestion/log/types.js';
import type { Metrics } from '../kernel/metrics.js';
import type { Stores } from '../store/index.js';
import type { Drain } from '../http/drain.js';

export interface HealthDeps {
  drain: Pick<Drain, 'draining'>;
  ingestion: Pick<IngestBuffer, 'lastError' | 'eventStoreError' | 'eventStoreLag' | 'saturated' | 'flushLogBytes' | 'depth'>;
  /** The log between capture and ingestion: its processing lag and failures. */
  ingestLog: Pick<IngestLog, 'pendingMessages' | 'lastError' | 'shared' | 'ping' | 'ownedPartitions'>;
  stores: Stores;
  metrics: Metrics;
}

/** Liveness, readiness and Prometheus metrics. */
export async function registerHealthRoutes(app: FastifyInstance, { drain, ingestion, ingestLog, stores, metrics }: HealthDeps): Promise<void> {
  // Liveness: 200 while the process serves HTTP; the body tells whether ingestion is degraded.
  app.get('/_health', async () => {
    const error = ingestion.lastError ?? ingestLog.lastError;
    const eventStoreError = ingestion.eventStoreError;
    return {
      status: error || eventStoreError ? 'degraded' : 'ok',
      ingestion: error ? { error: error.message, since: error.at } : 'ok',
      // Capture keeps acknowledging (events wait in the flush log) while only the event store fails.
      event_store_writes: eventStoreError ? { error: eventStoreError.message, since: eventStoreError.at } : 'ok',
      event_store_lag_events: ingestion.eventStoreLag,
      // With the NATS log: acknowledged batches not processed yet; null while the stream does not answer.
      // …and the log's partitions this node consumes (the nodes share them out, docs/scale-out-cluster.md).
      ...(ingestLog.shared && { log_pending_messages: await ingestLog.pendingMessages(), log_partitions_owned: ingestLog.ownedPartitions }),
    };
  });

  // Readiness: both stores (and the shared log) answer and the ingestion buffer has room.
  app.get('/_ready', async (_request, reply) => {
    // Shutting down: still serving, but load balancers should send elsewhere.
    if (drain.draining) return reply.code(503).send({ status: 'draining' });
    const [meta, shards, log] = await Promise.all([stores.meta.ping(), pingEventStore(stores), ingestLog.ping()]);
    const events = Object.values(shards).every(Boolean);
    const buffer = ingestion.saturated ? 'saturated' : 'ok';
    const ready = meta && events && log && buffer === 'ok' && !ingestion.lastError;
    // Each part by the engine that runs it (and each shard of a sharded event store), so an
    // operator sees at once which server is down.
    const checks: Record<string, 'ok' | 'down'> = { [stores.engines.meta]: meta ? 'ok' : 'down', [stores.engines.events]: events ? 'ok' : 'down' };
    if (stores.events.pingShards) for (const [shard, up] of Object.entries(shards)) checks[`${stores.engines.events}_shard_${shard}`] = up ? 'ok' : 'down';
    if (ingestLog.shared) checks.nats = log ? 'ok' : 'down';
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'not_ready',
      checks,
      meta_store: meta ? 'ok' : 'unreachable',
      event_store: events ? 'ok' : 'unreachable',
      ingestion_buffer: buffer,
      ingestion: ingestion.lastError ? 'failing' : 'ok',
      event_store_writes: ingestion.eventStoreError ? 'failing' : 'ok',
      event_store_lag_events: ingestion.eventStoreLag,
    });
  });

  app.get('/metrics', async (_request, reply) => {
    const [meta, events] = await Promise.all([stores.meta.sizeBytes(), stores.events.sizeBytes()]);
    metrics.storeBytes.set({ store: 'meta' }, meta);
    metrics.storeBytes.set({ store: 'events' }, events);
    metrics.storeBytes.set({ store: 'flush_log' }, ingestion.flushLogBytes);
    metrics.bufferDepth.set(ingestion.depth);
    metrics.eventStoreLag.set(ingestion.eventStoreLag);
    const pending = await ingestLog.pendingMessages();
    if (pending !== null) metrics.logPending.set(pending);
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}

/** The event store's shards (one entry for a store on one server), each answering or not. */
async function pingEventStore({ events }: Stores): Promise<Record<string, boolean>> {
  return events.pingShards ? events.pingShards() : { 1: await events.ping() };
}
