/** `sightline export`: the configured stores into an archive (archive.ts). */
import fs from 'node:fs';
import path from 'node:path';
import type { Stores } from '../store/index.js';
import { TRANSFER_TABLES } from '../store/transfer-tables.js';
import { ARCHIVE_FORMAT, ARCHIVE_VERSION, ArchiveError, EVENTS_PER_FILE, eventLine, LineWriter, MANIFEST, writeManifest, type ArchiveFile, type Manifest } from './archive.js';

export interface ExportOptions {
  dir: string;
  gzip: boolean;
  /** The engines, as the manifest names them. */
  source: Manifest['source'];
  progress?: (message: string) => void;
}

/** Events per chunk read from the event store (a line each, written as one string). */
const EVENT_CHUNK = 4_096;

export async function exportArchive(stores: Stores, options: ExportOptions): Promise<Manifest> {
  const { dir, gzip, progress = () => {} } = options;
  prepareDirectory(dir);
  await checkCaughtUp(stores);
  const suffix = gzip ? '.ndjson.gz' : '.ndjson';
  const metadata: Record<string, ArchiveFile> = {};
  for (const table of TRANSFER_TABLES) {
    const file = `metadata/${table.name}${suffix}`;
    const writer = new LineWriter(path.join(dir, file), gzip);
    let rows = 0;
    for await (const page of stores.meta.transfer.readTable(table.name)) {
      await writer.write(page.map((row) => `${JSON.stringify(row)}\n`).join(''));
      rows += page.length;
    }
    await writer.close();
    metadata[table.name] = { file, rows };
    if (rows > 0) progress(`${table.name}: ${rows} rows`);
  }
  const events = await exportEvents(stores, dir, suffix, gzip, progress);
  const manifest: Manifest = { format: ARCHIVE_FORMAT, version: ARCHIVE_VERSION, created_at: new Date().toISOString(), source: options.source, metadata, events };
  writeManifest(dir, manifest);
  return manifest;
}

async function exportEvents(stores: Stores, dir: string, suffix: string, gzip: boolean, progress: (message: string) => void): Promise<Manifest['events']> {
  const files: ArchiveFile[] = [];
  let writer: LineWriter | null = null;
  let current: ArchiveFile | null = null;
  let total = 0;
  for await (const chunk of stores.events.exportEvents(EVENT_CHUNK)) {
    let at = 0;
    while (at < chunk.length) {
      if (!writer || !current || current.rows >= EVENTS_PER_FILE) {
        await writer?.close();
        current = { file: `events/events-${String(files.length + 1).padStart(6, '0')}${suffix}`, rows: 0 };
        files.push(current);
        writer = new LineWriter(path.join(dir, current.file), gzip);
      }
      const take = chunk.slice(at, at + EVENTS_PER_FILE - current.rows);
      await writer.write(take.map(eventLine).join(''));
      current.rows += take.length;
      at += take.length;
    }
    const before = total;
    total += chunk.length;
    if (Math.floor(total / EVENTS_PER_FILE) > Math.floor(before / EVENTS_PER_FILE)) progress(`events: ${total}`);
  }
  await writer?.close();
  progress(`events: ${total}`);
  return { rows: total, files };
}

/** A new or empty directory: an archive is never written over another. */
function prepareDirectory(dir: string): void {
  if (fs.existsSync(dir)) {
    if (!fs.statSync(dir).isDirectory()) throw new ArchiveError(`${dir} is a file; export writes a directory (give a new or empty one)`);
    if (fs.readdirSync(dir).length > 0) throw new ArchiveError(`${dir} is not empty${fs.existsSync(path.join(dir, MANIFEST)) ? ' (it holds an archive)' : ''}; give a new or empty directory`);
  }
  fs.mkdirSync(dir, { recursive: true });
}

/**
 * Flushes that reached the metadata store but not yet the event store are only in the flush
 * log, which the archive does not carry: the server replays them at its next start.
 */
async function checkCaughtUp(stores: Stores): Promise<void> {
  const committed = await stores.meta.ingest.committedFlushSeq();
  const position = await stores.events.position();
  if (committed > position.seq) {
    throw new ArchiveError(
      `the event store is behind the metadata store (flushes ${position.seq + 1}–${committed} are only in the flush log): start the server once and stop it cleanly, then export again`,
    );
  }
}
