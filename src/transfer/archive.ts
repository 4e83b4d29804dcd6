/**
 * The export archive: a directory of NDJSON files and a manifest (docs/export-import.md).
 *
 *   manifest.json                   format, version, where it came from, every file with its rows
 *   metadata/<table>.ndjson[.gz]    one row of a metadata table a line (store/transfer-tables.ts)
 *   events/events-000001.ndjson[.gz] one event a line, EVENTS_PER_FILE a file
 *
 * The manifest is written last: a directory without one is an export that did not finish.
 */
import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip, createGzip } from 'node:zlib';
import type { Writable } from 'node:stream';
import type { StoredEvent } from '../store/types.js';

export const ARCHIVE_FORMAT = 'sightline-archive';
export const ARCHIVE_VERSION = 1;
export const MANIFEST = 'manifest.json';
export const EVENTS_PER_FILE = 1_000_000;

export interface ArchiveFile {
  /** Relative to the archive's directory. */
  file: string;
  rows: number;
}

export interface Manifest {
  format: typeof ARCHIVE_FORMAT;
  version: number;
  created_at: string;
  /** The engines it was exported from. */
  source: { metadata: string; events: string };
  /** Table name → its file, in import order. */
  metadata: Record<string, ArchiveFile>;
  events: { rows: number; files: ArchiveFile[] };
}

export class ArchiveError extends Error {}

/** Reads and checks the manifest of the archive in `dir`. */
export function readManifest(dir: string): Manifest {
  const file = path.join(dir, MANIFEST);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as Manifest;
  } catch (error) {
    const cause = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'it is missing (an export that did not finish?)' : (error as Error).message;
    throw new ArchiveError(`${file} cannot be read: ${cause}`);
  }
  if (manifest?.format !== ARCHIVE_FORMAT) throw new ArchiveError(`${file} is not a Sightline archive manifest`);
  if (manifest.version !== ARCHIVE_VERSION) throw new ArchiveError(`${file} has format version ${manifest.version}; this Sightline reads version ${ARCHIVE_VERSION}`);
  return manifest;
}

export function writeManifest(dir: string, manifest: Manifest): void {
  fs.writeFileSync(path.join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** An NDJSON file written line by line, waiting when the disk is slower than the reader. */
export class LineWriter {
  private readonly sink: Writable;
  private readonly done: Promise<unknown>;
  rows = 0;

  constructor(file: string, gzip: boolean) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const out = fs.createWriteStream(file);
    this.done = once(out, 'close');
    if (gzip) {
      const zip = createGzip({ level: 3 });
      zip.pipe(out);
      this.sink = zip;
    } else {
      this.sink = out;
    }
  }

  async write(lines: string): Promise<void> {
    if (!this.sink.write(lines)) await once(this.sink, 'drain');
  }

  async close(): Promise<void> {
    this.sink.end();
    await this.done;
  }
}

/**
 * The lines of an NDJSON file (gunzipped when its name ends in .gz), a batch at a time. The file
 * is read only as fast as the batches are taken (a stream's iterator waits for its consumer;
 * readline's buffered ahead), so a file of any size takes about a batch of memory.
 */
export async function* readLines(file: string, batch: number): AsyncIterable<string[]> {
  const input = fs.createReadStream(file, { highWaterMark: 1 << 20 });
  let source: AsyncIterable<Buffer> = input;
  if (file.endsWith('.gz')) {
    const gunzip = createGunzip();
    input.on('error', (error) => gunzip.destroy(error));
    source = input.pipe(gunzip);
  }
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let pending: string[] = [];
  for await (const chunk of source) {
    const lines = (rest + decoder.write(chunk)).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') continue;
      pending.push(line);
      if (pending.length >= batch) {
        yield pending;
        pending = [];
      }
    }
  }
  rest += decoder.end();
  if (rest !== '') pending.push(rest);
  if (pending.length > 0) yield pending;
}

/**
 * An event as an archive line. Its properties are the stored JSON text, spliced in as they are
 * (not parsed and printed again): they are the bulk of every line.
 */
export function eventLine(e: StoredEvent): string {
  const head = JSON.stringify({
    project_id: e.project_id,
    uuid: e.uuid,
    event: e.event,
    distinct_id: e.distinct_id,
    person_id: e.person_id,
    timestamp: e.timestamp.toISOString(),
    created_at: e.created_at.toISOString(),
    elements_chain: e.elements_chain,
    groups: e.groups,
  });
  return `${head.slice(0, -1)},"properties":${e.properties_json}}\n`;
}

interface EventLine {
  project_id: number;
  uuid: string;
  event: string;
  distinct_id: string;
  person_id: string | null;
  timestamp: string;
  created_at: string;
  elements_chain: string;
  groups: StoredEvent['groups'];
  properties: unknown;
}

/** An archive line back as an event; `where` names the line in the error. */
export function eventOfLine(line: string, where: string): StoredEvent {
  let row: EventLine;
  try {
    row = JSON.parse(line) as EventLine;
  } catch (error) {
    throw new ArchiveError(`${where}: not JSON (${(error as Error).message})`);
  }
  const timestamp = new Date(row.timestamp);
  const createdAt = new Date(row.created_at);
  const valid =
    Number.isSafeInteger(row.project_id) && typeof row.uuid === 'string' && typeof row.event === 'string' && typeof row.distinct_id === 'string' &&
    !Number.isNaN(timestamp.getTime()) && !Number.isNaN(createdAt.getTime()) && Array.isArray(row.groups) && row.groups.length === 5 &&
    row.properties !== null && typeof row.properties === 'object';
  if (!valid) throw new ArchiveError(`${where}: not an event of this archive format`);
  return {
    project_id: row.project_id,
    uuid: row.uuid,
    event: row.event,
    distinct_id: row.distinct_id,
    person_id: row.person_id ?? null,
    timestamp,
    created_at: createdAt,
    properties_json: JSON.stringify(row.properties),
    elements_chain: typeof row.elements_chain === 'string' ? row.elements_chain : '',
    groups: row.groups.map(String) as StoredEvent['groups'],
  };
}
