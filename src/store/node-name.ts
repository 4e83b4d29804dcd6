import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';

const FILE = 'node-name';

/**
 * This node's name in a shared metadata database: made once and kept in its data folder, which
 * holds the flush log whose positions are recorded under it (a node copied with its folder is
 * the same node; a new folder is a new one).
 */
export function nodeName(dataDir: string): string {
  const file = path.join(dataDir, FILE);
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const name = randomUUID();
  fs.mkdirSync(dataDir, { recursive: true });
  // `wx`: two processes starting at once on one folder agree on the first name written.
  try {
    fs.writeFileSync(file, `${name}\n`, { flag: 'wx' });
    return name;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return fs.readFileSync(file, 'utf8').trim();
  }
}
