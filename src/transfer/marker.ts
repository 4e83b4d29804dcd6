/**
 * A file in the data folder while an import runs: an import that stopped midway (an error, a
 * kill, a power cut) leaves it, and the server then refuses to start on the partial stores
 * instead of serving them as if they were whole.
 */
import fs from 'node:fs';
import path from 'node:path';

const MARKER = 'import-incomplete';

export class UnfinishedImportError extends Error {
  constructor(readonly dataDir: string) {
    super(`an import into ${dataDir} (or the PostgreSQL and ClickHouse databases set with it) did not finish`);
    this.name = 'UnfinishedImportError';
  }

  /** One line: what happened and what to do. */
  get advice(): string {
    return `Cannot start: ${this.message}. Empty the stores (a new data folder; or drop and recreate the databases) and run \`sightline import\` again.`;
  }
}

export function markImportStarted(dataDir: string, archive: string): void {
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(path.join(dataDir, MARKER), `${JSON.stringify({ archive: path.resolve(archive), started_at: new Date().toISOString() })}\n`);
}

export function markImportFinished(dataDir: string): void {
  fs.rmSync(path.join(dataDir, MARKER), { force: true });
}

/** Throws when an import into this data folder did not finish. */
export function checkNoUnfinishedImport(dataDir: string): void {
  if (fs.existsSync(path.join(dataDir, MARKER))) throw new UnfinishedImportError(dataDir);
}
