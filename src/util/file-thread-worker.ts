/**
 * The thread of FileThread: each call is one synchronous file operation, answered when it is
 * done (on disk, for the ones that sync).
 */
import fs from 'node:fs';
import path from 'node:path';
import { answerCalls } from './worker-calls.js';

/** A new file, and its name made durable (the directory synced too). */
function create(file: string): number {
  const fd = fs.openSync(file, 'w');
  try {
    const dir = fs.openSync(path.dirname(file), 'r');
    try {
      fs.fsyncSync(dir);
    } finally {
      fs.closeSync(dir);
    }
    return fd;
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
    throw error;
  }
}

answerCalls({
  create,
  append: (fd: number, bytes: Uint8Array, position: number) => {
    let written = 0;
    while (written < bytes.length) written += fs.writeSync(fd, bytes, written, bytes.length - written, position + written);
    fs.fdatasyncSync(fd);
  },
  truncate: (fd: number, length: number) => {
    fs.ftruncateSync(fd, length);
    fs.fdatasyncSync(fd);
  },
  close: (fd: number) => fs.closeSync(fd),
});
