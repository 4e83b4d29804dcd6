/**
 * The thread of FileThread: each message is one synchronous file operation, answered when it is
 * done (on disk, for the ones that sync).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parentPort } from 'node:worker_threads';

export type FileOp =
  | { op: 'create'; file: string }
  | { op: 'append'; fd: number; bytes: Uint8Array; position: number }
  | { op: 'truncate'; fd: number; length: number }
  | { op: 'close'; fd: number };

export interface FileRequest {
  id: number;
  request: FileOp;
}

export type FileReply = { id: number; result: number | null } | { id: number; error: { message: string; code?: string } };

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

function run(request: FileOp): number | null {
  switch (request.op) {
    case 'create':
      return create(request.file);
    case 'append': {
      let written = 0;
      while (written < request.bytes.length) {
        written += fs.writeSync(request.fd, request.bytes, written, request.bytes.length - written, request.position + written);
      }
      fs.fdatasyncSync(request.fd);
      return null;
    }
    case 'truncate':
      fs.ftruncateSync(request.fd, request.length);
      fs.fdatasyncSync(request.fd);
      return null;
    case 'close':
      fs.closeSync(request.fd);
      return null;
  }
}

parentPort!.on('message', ({ id, request }: FileRequest) => {
  let reply: FileReply;
  try {
    reply = { id, result: run(request) };
  } catch (err) {
    const error = err as NodeJS.ErrnoException;
    reply = { id, error: { message: error.message, code: error.code } };
  }
  parentPort!.postMessage(reply);
});
