/** `sightline import`: an archive (archive.ts) into the configured stores, which must be empty. */
import fs from 'node:fs';
import path from 'node:path';
import type { Stores } from '../store/index.js';
import type { StoredEvent } from '../store/types.js';
import { TRANSFER_TABLES } from '../store/transfer-tables.js';
import { markImportFinished, markImportStarted } from './marker.js';
import { ArchiveError, eventOfLine, readLines, readManifest, type Manifest } from './archive.js';

export interface ImportOptions {
  dir: string;
  /** The data folder of the stores: it holds the unfinished-import marker (marker.ts) while the import runs. */
  dataDir: string;
  progress?: (message: string) => void;
}

/** Metadata rows per write (one transaction each). */
const META_BATCH = 2_000;

/** The stores hold data: nothing was written. */
export class NotEmptyError extends Error {}

/** Something failed after the first write: the stores hold part of the archive. */
export class PartialImportError extends Error {}

export async function importArchive(stores: Stores, options: ImportOptions): Promise<Manifest> {
  const { dir, dataDir, progress = () => {} } = options;
  const manifest = readManifest(dir);
  checkFiles(dir, manifest);
  await checkEmpty(stores);
  markImportStarted(dataDir, dir);
  let step = 'the metadata';
  try {
    for (const table of TRANSFER_TABLES) {
      const entry = manifest.metadata[table.name];
      step = `table ${table.name}`;
      const written = await importTable(stores, dir, table.name, entry.file);
      if (written !== entry.rows) throw new ArchiveError(`${entry.file} holds ${written} rows, the manifest says ${entry.rows}`);
      if (written > 0) progress(`${table.name}: ${written} rows`);
    }
    await stores.meta.transfer.finishImport();
    step = 'the events';
    const events = await importEvents(stores, dir, manifest, progress);
    if (events !== manifest.events.rows) throw new ArchiveError(`the event files hold ${events} events, the manifest says ${manifest.events.rows}`);
    step = "the event store's person and cohort mirrors";
    await stores.events.rebuildPersonMirror(stores.meta.ingest.allPersons());
    await mirrorCohorts(stores);
    await stores.events.checkpoint();
    markImportFinished(dataDir);
  } catch (error) {
    const cause = error instanceof Error ? error.message : String(error);
    throw new PartialImportError(
      `could not write ${step}: ${cause}. The stores now hold part of the archive: empty them (a new data folder; or drop and recreate the PostgreSQL and ClickHouse databases) and run the import again`,
    );
  }
  return manifest;
}

async function importTable(stores: Stores, dir: string, table: string, file: string): Promise<number> {
  let written = 0;
  for await (const lines of readLines(path.join(dir, file), META_BATCH)) {
    const rows = lines.map((line, i) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new ArchiveError(`${file} line ${written + i + 1} is not JSON`);
      }
    });
    await stores.meta.transfer.writeRows(table, rows);
    written += rows.length;
  }
  return written;
}

/** Through the event store's bulk write, a write unit at a time (its cheapest size). */
async function importEvents(stores: Stores, dir: string, manifest: Manifest, progress: (message: string) => void): Promise<number> {
  const batch = stores.events.writeUnit;
  let total = 0;
  for (const entry of manifest.events.files) {
    let line = 0;
    for await (const lines of readLines(path.join(dir, entry.file), batch)) {
      const events: StoredEvent[] = lines.map((text) => eventOfLine(text, `${entry.file} line ${++line}`));
      await stores.events.importEvents(events);
      total += events.length;
    }
    progress(`events: ${total}`);
  }
  return total;
}

/** The event store's copy of each cohort's members, which cohort filters and breakdowns read. */
async function mirrorCohorts(stores: Stores): Promise<void> {
  for (const project of await stores.meta.tenancy.listProjects()) {
    for (const cohort of await stores.meta.cohorts.list(project.id)) {
      const members = await stores.meta.cohorts.memberSet(project.id, cohort.id);
      if (members.size > 0) await stores.events.replaceCohortMembers(project.id, cohort.id, [...members]);
    }
  }
}

/** Every file the manifest lists is there, before anything is written. */
function checkFiles(dir: string, manifest: Manifest): void {
  const files = [...TRANSFER_TABLES.map((table) => manifest.metadata[table.name]), ...(manifest.events?.files ?? [])];
  for (const entry of files) {
    if (!entry || typeof entry.file !== 'string') throw new ArchiveError('the manifest does not list a file for every table; is it from this version of Sightline?');
    if (!fs.existsSync(path.join(dir, entry.file))) throw new ArchiveError(`${entry.file} is missing from the archive`);
  }
}

async function checkEmpty(stores: Stores): Promise<void> {
  const counts = await stores.meta.transfer.rowCounts();
  const held = Object.entries(counts).filter(([, rows]) => rows > 0).map(([table, rows]) => `${table}: ${rows}`);
  const events = await stores.events.countEvents();
  if (events > 0) held.push(`events: ${events}`);
  if (held.length > 0) {
    throw new NotEmptyError(`the configured stores are not empty (${held.slice(0, 4).join(', ')}${held.length > 4 ? ', …' : ''}); import writes only into empty ones: point SIGHTLINE_DATA_DIR (or the PostgreSQL and ClickHouse settings) at new ones`);
  }
}
