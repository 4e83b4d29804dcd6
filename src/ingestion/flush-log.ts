/**
 * The flush log: where a flush becomes durable. Each flush is appended as one line
 * (store/flush-record.ts) and fdatasync'ed before its metadata is applied and its requests are
 * answered; both stores then follow it, and after an unclean stop start-up replays into each
 * store what that store had not taken. Writes and syncs run on a thread of their own
 * (util/file-thread.ts), so the main thread keeps serving requests while the disk works.
 *
 * Segments are files named after their first flush; a full one is sealed and a new one begun,
 * and a sealed segment is deleted once both stores hold all of its flushes. A failed append (or
 * one whose metadata commit failed afterwards) is cut off again before anything else is
 * appended, so a segment only ever holds flushes that were committed, plus at most a torn tail
 * that reading ignores.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../kernel/logger.js';
import { decodeFlushRecord, sharedBytes, type EncodedFlush } from '../store/flush-record.js';
import type { IngestChanges } from '../store/types.js';
import { FileThread } from '../util/file-thread.js';

/** A flush read back from the log: its metadata changes, and its bytes for the event store. */
export interface LoggedFlush {
  changes: IngestChanges;
  encoded: EncodedFlush;
}

/**
 * Segment size after which the next append starts a new one. Only whole sealed segments are
 * deleted, so this is also how much disk the log holds beyond what the event store lacks.
 */
const SEGMENT_BYTES = 16 * 2 ** 20;
const SUFFIX = '.log';

interface Segment {
  file: string;
  /** Highest flush in the segment (0 while it holds none). */
  lastSeq: number;
  bytes: number;
}

interface OpenSegment extends Segment {
  fd: number;
}

export interface FlushLogOptions {
  /** Called before a full segment is sealed (the metadata store makes its writes durable). */
  beforeSeal: () => Promise<void>;
  segmentBytes?: number;
}

const segmentName = (firstSeq: number) => `${String(firstSeq).padStart(16, '0')}${SUFFIX}`;

export class FlushLog {
  private current: OpenSegment | null = null;
  /** Where the current segment must be cut back to before the next append, after a failure. */
  private pendingUndo: { bytes: number; lastSeq: number } | null = null;
  private lastAppend: { bytes: number; lastSeq: number } | null = null;
  private readonly files = new FileThread();

  private constructor(
    private readonly dir: string,
    private readonly sealed: Segment[],
    private readonly options: FlushLogOptions,
    private readonly log: Logger,
  ) {}

  /**
   * Opens the log folder and reads every whole record of its segments, oldest first. The
   * existing segments are sealed: appends go to a new one.
   */
  static async open(dir: string, options: FlushLogOptions, log: Logger): Promise<{ flushLog: FlushLog; records: LoggedFlush[] }> {
    fs.mkdirSync(dir, { recursive: true });
    const names = fs.readdirSync(dir).filter((name) => name.endsWith(SUFFIX)).sort();
    const sealed: Segment[] = [];
    const records: LoggedFlush[] = [];
    for (const name of names) {
      const file = path.join(dir, name);
      const read = readSegment(file, log);
      if (read.length === 0) {
        // Nothing whole in it (its first append was torn): its name may be reused by a new segment.
        fs.rmSync(file, { force: true });
        continue;
      }
      for (const record of read) records.push(record);
      sealed.push({ file, lastSeq: read[read.length - 1].encoded.seq, bytes: fs.statSync(file).size });
    }
    return { flushLog: new FlushLog(dir, sealed, options, log), records };
  }

  /** Appends one flush and waits until it is on disk; it then records where (`logged`). On failure nothing of it counts. */
  async append(flush: EncodedFlush): Promise<void> {
    await this.undoFailed();
    const segment = await this.writable(flush.seq);
    const before = { bytes: segment.bytes, lastSeq: segment.lastSeq };
    try {
      await this.files.append(segment.fd, flush.bytes, before.bytes);
    } catch (error) {
      this.pendingUndo = before;
      await this.undoFailed().catch(() => undefined); // retried before the next append
      throw error;
    }
    segment.bytes = before.bytes + flush.bytes.length;
    segment.lastSeq = flush.seq;
    this.lastAppend = before;
    flush.logged = { file: segment.file, offset: before.bytes, length: flush.bytes.length };
  }

  /** The last append must not count after all (its metadata commit failed): cuts it off. */
  async undoLastAppend(): Promise<void> {
    if (!this.lastAppend) return;
    this.pendingUndo = this.lastAppend;
    this.lastAppend = null;
    await this.undoFailed();
  }

  private async undoFailed(): Promise<void> {
    const undo = this.pendingUndo;
    const segment = this.current;
    if (!undo || !segment) return;
    await this.files.truncate(segment.fd, undo.bytes);
    segment.bytes = undo.bytes;
    segment.lastSeq = undo.lastSeq;
    this.pendingUndo = null;
  }

  /** The segment to append to: a new one when there is none yet or the current one is full. */
  private async writable(seq: number): Promise<OpenSegment> {
    if (this.current && this.current.bytes >= (this.options.segmentBytes ?? SEGMENT_BYTES)) await this.seal();
    if (this.current) return this.current;
    const file = path.join(this.dir, segmentName(seq));
    const fd = await this.files.create(file);
    this.current = { file, fd, lastSeq: 0, bytes: 0 };
    this.lastAppend = null;
    return this.current;
  }

  /** Seals the current segment; its flushes are all in the metadata store once beforeSeal returns. */
  private async seal(): Promise<void> {
    const segment = this.current;
    if (!segment) return;
    await this.options.beforeSeal();
    this.current = null;
    this.lastAppend = null;
    void this.files.close(segment.fd).catch(() => undefined);
    this.sealed.push({ file: segment.file, lastSeq: segment.lastSeq, bytes: segment.bytes });
  }

  /**
   * Deletes the sealed segments whose flushes both stores hold durably (every flush up to
   * `throughSeq`).
   */
  release(throughSeq: number): void {
    while (this.sealed.length > 0 && this.sealed[0].lastSeq <= throughSeq) {
      const segment = this.sealed.shift()!;
      try {
        fs.rmSync(segment.file, { force: true });
      } catch (error) {
        // Kept: it is read again (and skipped) at the next start.
        this.log.warn({ err: error, file: segment.file }, 'could not delete a flush log segment');
      }
    }
  }

  /** Bytes on disk, for metrics. */
  get bytes(): number {
    return this.sealed.reduce((sum, s) => sum + s.bytes, 0) + (this.current?.bytes ?? 0);
  }

  /** Seals what is open and deletes what both stores hold (a clean stop leaves no segment behind). */
  async close(throughSeq: number): Promise<void> {
    await this.undoFailed().catch(() => undefined);
    try {
      // A failed append that could not be cut off stays in the open segment, read at the next start.
      if (!this.pendingUndo) await this.seal();
    } catch (error) {
      this.log.warn({ err: error }, 'could not seal the flush log segment; it is read again at the next start');
    }
    this.release(throughSeq);
    if (this.current) await this.files.close(this.current.fd).catch(() => undefined);
    this.current = null;
    await this.files.stop();
  }
}

/**
 * Every whole record of a segment. A line that does not parse ends the segment: it can only be
 * the torn tail of an append that never completed (appends are cut off again when they fail).
 */
function readSegment(file: string, log: Logger): LoggedFlush[] {
  const bytes = fs.readFileSync(file);
  const records: LoggedFlush[] = [];
  let start = 0;
  while (start < bytes.length) {
    const end = bytes.indexOf(0x0a, start);
    if (end === -1) break; // torn tail: the append never completed
    try {
      // Its own shared copy: a view of the segment would carry the whole segment to the event store's thread.
      const line = sharedBytes(end + 1 - start);
      bytes.copy(line, 0, start, end + 1);
      const { changes, events } = decodeFlushRecord(line);
      records.push({ changes, encoded: { seq: changes.flushSeq, events: events.length, bytes: line, logged: { file, offset: start, length: line.length } } });
    } catch (error) {
      log.warn({ err: error, file, offset: start }, 'flush log segment ends in a damaged record; ignoring the rest of it');
      break;
    }
    start = end + 1;
  }
  return records;
}
