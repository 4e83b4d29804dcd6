/** Prometheus metrics (prom-client), one registry per process. */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new Counter({
      name: 'sightline_http_requests_total',
      help: 'HTTP requests by route and status',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    }),
    eventsIngested: new Counter({ name: 'sightline_events_ingested_total', help: 'Events durably stored', registers: [registry] }),
    eventsDropped: new Counter({
      name: 'sightline_events_dropped_total',
      help: 'Events not stored, by reason',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    ingestionWarnings: new Counter({
      name: 'sightline_ingestion_warnings_total',
      help: 'Events stored with an ingestion warning (e.g. refused merge)',
      labelNames: ['warning'] as const,
      registers: [registry],
    }),
    flushSeconds: new Histogram({
      name: 'sightline_flush_duration_seconds',
      help: 'Duration of one group-commit flush (flush log and metadata store, until the answer)',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    flushFailures: new Counter({ name: 'sightline_flush_failures_total', help: 'Flushes that failed', registers: [registry] }),
    flushReplans: new Counter({
      name: 'sightline_flush_replans_total',
      help: 'Flushes planned again because another node changed their persons between load and apply',
      registers: [registry],
    }),
    bufferDepth: new Gauge({ name: 'sightline_ingest_buffer_events', help: 'Events waiting for a flush', registers: [registry] }),
    eventStoreLag: new Gauge({
      name: 'sightline_event_store_lag_events',
      help: 'Acknowledged events the event store has not taken yet (kept in the flush log)',
      registers: [registry],
    }),
    logPending: new Gauge({
      name: 'sightline_ingest_log_pending_messages',
      help: 'Batches acknowledged to capture but not yet processed (NATS log; 0 with the local flush log)',
      registers: [registry],
    }),
    eventsExpired: new Counter({
      name: 'sightline_events_expired_total',
      help: 'Events deleted because they were older than SIGHTLINE_RETENTION_DAYS',
      registers: [registry],
    }),
    retentionFailures: new Counter({ name: 'sightline_retention_failures_total', help: 'Retention passes that failed (the next one tries again)', registers: [registry] }),
    storeBytes: new Gauge({
      name: 'sightline_store_size_bytes',
      help: 'On-disk size of each store (and of the flush log)',
      labelNames: ['store'] as const,
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
