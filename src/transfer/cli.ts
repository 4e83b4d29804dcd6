/** The `export` and `import` commands: open the stores, run, say what happened in a line or two. */
import type { Stores } from '../store/index.js';
import { DataDirError } from '../store/errors.js';
import { exportArchive } from './export.js';
import { importArchive } from './import.js';
import type { Manifest } from './archive.js';

export type TransferCommand =
  | { kind: 'export'; dir: string; gzip: boolean; source: Manifest['source'] }
  | { kind: 'import'; dir: string; dataDir: string };

const progress = (message: string) => process.stderr.write(`  ${message}\n`);

/** DuckDB admits one process: a running server holds the data folder's lock. */
function inUse(error: unknown): Error | null {
  if (!(error instanceof DataDirError) || !/lock/i.test(error.reason)) return null;
  return new Error(`the data folder ${error.dataDir} is in use by a running server: stop it first (${error.reason.split('\n')[0]})`);
}

/** Runs the command; returns the process exit code (errors are one line on stderr). */
export async function runTransfer(command: TransferCommand, open: () => Promise<Stores>): Promise<number> {
  const started = Date.now();
  let stores: Stores | null = null;
  try {
    stores = await open().catch((error: unknown) => {
      throw inUse(error) ?? error;
    });
    const manifest =
      command.kind === 'export'
        ? await exportArchive(stores, { dir: command.dir, gzip: command.gzip, source: command.source, progress })
        : await importArchive(stores, { dir: command.dir, dataDir: command.dataDir, progress });
    const seconds = (Date.now() - started) / 1000;
    const rows = Object.values(manifest.metadata).reduce((sum, entry) => sum + entry.rows, 0);
    const verb = command.kind === 'export' ? 'exported to' : 'imported from';
    process.stdout.write(
      `${verb} ${command.dir}: ${rows} metadata rows in ${Object.keys(manifest.metadata).length} tables, ${manifest.events.rows} events in ${seconds.toFixed(1)} s` +
        ` (${Math.round(manifest.events.rows / Math.max(seconds, 0.001))} events/s)\n`,
    );
    return 0;
  } catch (error) {
    // The stores' own start errors carry a line of advice (where, why, what to do).
    const advice = (error as { advice?: unknown })?.advice;
    process.stderr.write(`${command.kind} failed: ${typeof advice === 'string' ? advice : error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await stores?.meta.close();
    await stores?.events.close();
  }
}
