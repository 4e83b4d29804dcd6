/**
 * The thread of FileThread: each call is one synchronous file operation, answered when it is
 * done (on disk, for the ones that sync).
 */
import fs from 'node:fs';
import path from 'node:path';
import { answerCalls } from './worker-calls.js';
import { collectGarbage } from './idle-collect.js';

/**
 * A record sent here that is not in the flush records' arena is shared memory of its own, freed
 * only once every thread that saw it has dropped it. This thread allocates almost nothing, so
 * its garbage collector would hardly ever run, and every such record would stay resident (after
 * an ingestion burst, hundreds of MB did). So it collects after every so many bytes of them:
 * its heap is tiny, a collection takes about a millisecond.
 */
const COLLECT_EVERY_BYTES = 16 * 2 ** 20;
let ownBytesSinceCollect = 0;

function dropped(bytes: Uint8Array): void {
  if (bytes.byteLength !== bytes.buffer.byteLength) return; // a view into the arena
  ownBytesSinceCollect += bytes.byteLength;
  if (ownBytesSinceCollect < COLLECT_EVERY_BYTES) return;
  ownBytesSinceCollect = 0;
  // After this call's answer has gone: the message holding the record is garbage by then.
  setImmediate(collectGarbage);
}

/** Makes the name of a file just created durable: syncs its directory. */
function syncDirectoryOf(file: string): void {
  const dir = fs.openSync(path.dirname(file), 'r');
  try {
    fs.fsyncSync(dir);
  } finally {
    fs.closeSync(dir);
  }
}

answerCalls({
  syncDirectoryOf,
  append: (fd: number, bytes: Uint8Array, position: number) => {
    let written = 0;
    while (written < bytes.length) written += fs.writeSync(fd, bytes, written, bytes.length - written, position + written);
    fs.fdatasyncSync(fd);
    dropped(bytes);
  },
  truncate: (fd: number, length: number) => {
    fs.ftruncateSync(fd, length);
    fs.fdatasyncSync(fd);
  },
  close: (fd: number) => fs.closeSync(fd),
});
