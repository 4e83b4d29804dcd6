/**
 * The event store's process reads a write's flushes from the flush log's segment files, where
 * each was made durable before it was acknowledged, into one buffer it reuses. Sent over the pipe
 * instead, each flush crossed into fresh memory three times (serialized, read, joined), and fresh
 * memory costs page faults here: `/batch/` took ~15 % less that way (docs/ingestion.md). A segment
 * is deleted only once the event store holds all of its flushes, so it is there while a write reads it.
 *
 * The bytes returned stay valid until the next read: a write appends each flush's events before
 * it asks for the next one (DuckDbEventStore.write).
 */
import fs from 'node:fs';
import type { FlushLocation } from '../types.js';

/** A buffer grown past this for a large flush is let go after its write rather than kept. */
const KEEP_BYTES = 4 * 2 ** 20;

/** Starts the message of a failed read, by which the caller knows to send the bytes instead. */
export const UNREADABLE = 'flush log record unreadable:';

export class LoggedFlushReader {
  private buffer = Buffer.alloc(0);
  private open: { file: string; fd: number } | null = null;

  /** The record at `at`. One that is not all there fails with UNREADABLE (its caller then sends the bytes). */
  read(at: FlushLocation): Uint8Array {
    const { length } = at;
    if (this.buffer.length < length) this.buffer = Buffer.allocUnsafe(Math.max(length, this.buffer.length * 2));
    try {
      const fd = this.fdOf(at.file);
      let done = 0;
      while (done < length) {
        const read = fs.readSync(fd, this.buffer, done, length - done, at.offset + done);
        if (read === 0) throw new Error(`the segment ends before byte ${at.offset + length}`);
        done += read;
      }
    } catch (error) {
      throw new Error(`${UNREADABLE} ${at.file} at ${at.offset}: ${error instanceof Error ? error.message : String(error)}`);
    }
    return this.buffer.subarray(0, length);
  }

  /** After a write: closes the segment last read (it is deleted once the event store holds it). */
  close(): void {
    if (this.open) fs.closeSync(this.open.fd);
    this.open = null;
    if (this.buffer.length > KEEP_BYTES) this.buffer = Buffer.alloc(0);
  }

  private fdOf(file: string): number {
    if (this.open?.file === file) return this.open.fd;
    this.close();
    this.open = { file, fd: fs.openSync(file, 'r') };
    return this.open.fd;
  }
}
