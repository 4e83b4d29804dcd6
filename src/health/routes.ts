import type { FastifyInstance } from 'fastify';
import type { IngestBuffer } from '../ingestion/buffer.js';
import type { Metrics } from '../kernel/metrics.js';
import type { Stores } from '../store/index.js';

export interface HealthDeps {
  ingestion: Pick<IngestBuffer, 'lastError' | 'eventStoreError' | 'eventStoreLag' | 'saturated' | 'flushLogBytes' | 'depth'>;
  stores: Stores;
  metrics: Metrics;
}

/** Liveness, readiness and Prometheus metrics. */
export async function registerHealthRoutes(app: FastifyInstance, { ingestion, stores, metrics }: HealthDeps): Promise<void> {
  // Liveness: 200 while the process serves HTTP; the body tells whether ingestion is degraded.
  app.get('/_health', async () => {
    const error = ingestion.lastError;
    const eventStoreError = ingestion.eventStoreError;
    return {
      status: error || eventStoreError ? 'degraded' : 'ok',
      ingestion: error ? { error: error.message, since: error.at } : 'ok',
      // Capture keeps acknowledging (events wait in the flush log) while only the event store fails.
      event_store_writes: eventStoreError ? { error: eventStoreError.message, since: eventStoreError.at } : 'ok',
      event_store_lag_events: ingestion.eventStoreLag,
    };
  });

  // Readiness: both stores answer and the ingestion buffer has room.
  app.get('/_ready', async (_request, reply) => {
    const [meta, events] = await Promise.all([stores.meta.ping(), stores.events.ping()]);
    const buffer = ingestion.saturated ? 'saturated' : 'ok';
    const ready = meta && events && buffer === 'ok' && !ingestion.lastError;
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'not_ready',
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
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}
