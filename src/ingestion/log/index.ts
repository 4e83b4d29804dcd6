/** Chooses the log between capture and ingestion: JetStream when SIGHTLINE_NATS_URL is set, else the local flush log. */
import type { Logger } from '../../kernel/logger.js';
import type { IngestBuffer } from '../buffer.js';
import { JetStreamLog, type JetStreamSettings } from './jetstream.js';
import { LocalLog } from './local.js';
import type { IngestLog } from './types.js';

/** How long one wait for the event store lasts inside the consumer loop (it waits again after). */
const STORED_WAIT_MS = 5_000;

export async function openIngestLog(
  nats: JetStreamSettings | undefined,
  deps: {
    buffer: Pick<IngestBuffer, 'submit' | 'submitWhenRoom' | 'eventsQueryable' | 'eventStoreError'>;
    metaStore: { ping(): Promise<boolean> };
    postgresUrl: string | undefined;
    log: Logger;
  },
): Promise<IngestLog> {
  const { buffer, postgresUrl, log } = deps;
  if (!nats || !postgresUrl) return new LocalLog(buffer);
  const opened = await JetStreamLog.open(nats, {
    submit: (events) => buffer.submitWhenRoom(events),
    eventsStored: (timeoutMs) => buffer.eventsQueryable(Math.min(timeoutMs, STORED_WAIT_MS)),
    eventStoreError: () => buffer.eventStoreError,
    metaStoreReachable: () => deps.metaStore.ping(),
    postgresUrl,
    log,
  });
  log.info({ stream: nats.stream, partitions: nats.partitions, servers: nats.urls.length }, 'capture appends to the NATS JetStream log');
  return opened;
}

export { migrateStream } from './jetstream.js';
export { LogUnavailableError, type IngestLog } from './types.js';
