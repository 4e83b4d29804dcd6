import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';

/** Liveness, readiness and Prometheus metrics. */
export async function registerHealthRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  // Liveness: 200 while the process serves HTTP; the body tells whether ingestion is degraded.
  app.get('/_health', async () => {
    const error = ctx.buffer.lastError;
    const eventStoreError = ctx.buffer.eventStoreError;
    return {
      status: error || eventStoreError ? 'degraded' : 'ok',
      ingestion: error ? { error: error.message, since: error.at } : 'ok',
      // Capture keeps acknowledging (events wait in the flush log) while only the event store fails.
      event_store_writes: eventStoreError ? { error: eventStoreError.message, since: eventStoreError.at } : 'ok',
      event_store_lag_events: ctx.buffer.eventStoreLag,
    };
  });

  // Readiness: both stores answer and the ingestion buffer has room.
  app.get('/_ready', async (_request, reply) => {
    const [meta, events] = await Promise.all([ctx.stores.meta.ping(), ctx.stores.events.ping()]);
    const buffer = ctx.buffer.saturated ? 'saturated' : 'ok';
    const ready = meta && events && buffer === 'ok' && !ctx.buffer.lastError;
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'not_ready',
      meta_store: meta ? 'ok' : 'unreachable',
      event_store: events ? 'ok' : 'unreachable',
      ingestion_buffer: buffer,
      ingestion: ctx.buffer.lastError ? 'failing' : 'ok',
      event_store_writes: ctx.buffer.eventStoreError ? 'failing' : 'ok',
      event_store_lag_events: ctx.buffer.eventStoreLag,
    });
  });

  app.get('/metrics', async (_request, reply) => {
    const [meta, events] = await Promise.all([ctx.stores.meta.sizeBytes(), ctx.stores.events.sizeBytes()]);
    ctx.metrics.storeBytes.set({ store: 'meta' }, meta);
    ctx.metrics.storeBytes.set({ store: 'events' }, events);
    ctx.metrics.storeBytes.set({ store: 'flush_log' }, ctx.buffer.flushLogBytes);
    ctx.metrics.bufferDepth.set(ctx.buffer.depth);
    ctx.metrics.eventStoreLag.set(ctx.buffer.eventStoreLag);
    return reply.type(ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics());
  });
}
