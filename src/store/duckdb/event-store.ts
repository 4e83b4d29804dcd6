import fs from 'node:fs';
import path from 'node:path';
import {
  DuckDBInstance,
  DuckDBTimestampValue,
  uuidValue,
  type DuckDBAppender,
  type DuckDBConnection,
  type DuckDBValue,
} from '@duckdb/node-api';
import { queryFailure } from '../errors.js';
import { positionAfter, sliceEvents } from '../event-slice.js';
import { readFlushRecord, type FlushRecordReader } from '../flush-record.js';
import { combinePersonChanges, type PersonChanges } from '../person-changes.js';
import type { EncodedFlush, EventQuery, EventSlice, EventStore, EventStorePosition, PersonErasure, PersonRecord, StoredEvent, UuidsByProject } from '../types.js';
import { createLogger, type Logger, type LogLevel } from '../../kernel/logger.js';
import { afterIo } from '../../util/after-io.js';
import { compactGarbage } from '../../util/idle-collect.js';
import { getOrCreate } from '../../util/get-or-create.js';
import { uuidToBigInt } from '../../util/uuid.js';
import { Readers, REINTERRUPT_MS } from './readers.js';
import { classifyQueryError, isCommitOutOfMemory, isInvalidated } from './query-errors.js';
import { DEFAULT_MEMORY_LIMIT, readPageBytes } from './memory.js';
import { duckMigrations, ROW_GROUP_ROWS } from './schema.js';
import { EXPORT_EVENTS, storedEvents } from './export-rows.js';
import { inTransaction } from './transaction.js';
import { CREATE_PENDING_EVENTS, INSERT_PENDING_EVENTS, materializedColumns, PENDING_EVENTS, READ_READY } from './materialized.js';
import { Backfill } from './backfill.js';
import { DuckDbDialect } from '../../hogql/duckdb/dialect.js';

/** Rows that went through the WAL after which the store checkpoints: one row group's worth. */
const CHECKPOINT_WAL_ROWS = ROW_GROUP_ROWS;
const CHECKPOINT_WAL_BYTES = 256 * 2 ** 20;
/** The events database, attached under this name to an in-memory instance (ROW_GROUP_SIZE is an ATTACH option). */
const DATABASE = 'events_db';

/** 0 for a missing file (there is no WAL right after a checkpoint). */
function fileBytes(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

const timestampValue = (date: Date) => new DuckDBTimestampValue(BigInt(date.getTime()) * 1000n);
const uuidOf = (uuid: string) => uuidValue(uuidToBigInt(uuid));

/**
 * Fills an appender and closes it (which writes its rows). If anything fails, its buffered rows
 * are dropped first: otherwise DuckDB would append them when the appender is garbage collected,
 * into whatever transaction the connection has open then — a retried write stored twice.
 */
async function appendTo(c: DuckDBConnection, table: string, fill: (appender: DuckDBAppender) => void | Promise<void>): Promise<void> {
  const appender = await c.createAppender(table);
  try {
    await fill(appender);
    appender.closeSync();
  } catch (error) {
    try {
      appender.clear();
      appender.closeSync();
    } catch {
      // nothing is buffered any more; closing an appender that failed may fail again
    }
    throw error;
  }
}

/**
 * Appends events through the pending table, then moves them into `events` with their
 * materialized columns (materialized.ts), in the connection's open transaction.
 */
async function insertEvents(c: DuckDBConnection, fill: (appender: DuckDBAppender) => void | Promise<void>): Promise<void> {
  await appendTo(c, PENDING_EVENTS, fill);
  await c.run(INSERT_PENDING_EVENTS);
}

/** Serialises work on one connection: DuckDB transactions are per connection. */
class Serial {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(work: () => Promise<T>): Promise<T> {
    const next = this.tail.then(work, work);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

export interface DuckOptions {
  memoryLimit?: string;
  threads?: number;
  /** Connections queries run on at once (readers.ts). */
  readers?: number;
  /** Time limit of a query in ms; 0 = none. Exports (stream) have none: they are long by nature. */
  queryTimeoutMs?: number;
  /** The store logs through a logger of its own: it runs in a process of its own. */
  logLevel?: LogLevel;
}

/** How long the store must be idle before DuckDB's cached blocks are let go, and the limit that makes it. */
const IDLE_RELEASE_MS = 30_000;
const RELEASE_TO = '1MB';
/** How long after opening, without calls, the thread's heap is compacted once. */
const AFTER_OPEN_COMPACT_MS = 2_000;

// Each running query holds one of libuv's four pool threads, which the writer needs too.
const DEFAULT_READERS = 2;
const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

/**
 * Opens the file, migrates it, and makes the writer (with its scratch tables) and the readers.
 *
 * DuckDB's automatic checkpoint is skipped while any other transaction is active, so steady
 * reads (the events list) let the WAL, and the memory holding what it has not folded yet, grow
 * without bound. It is off; the store runs CHECKPOINT itself between writes, which DuckDB
 * performs even while reads are running.
 */
async function connect(file: string, options: DuckOptions) {
  // Never fetch extensions at run time: json/icu/parquet are built in.
  const instance = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    memory_limit: options.memoryLimit ?? DEFAULT_MEMORY_LIMIT,
    threads: String(options.threads ?? 1),
    checkpoint_threshold: '1TB',
    // DuckDB's allocator (jemalloc) gives freed pages back to the system only from a background
    // thread; without it an idle server kept what a burst had used for good.
    allocator_background_threads: 'true',
  });
  try {
    const setup = await instance.connect();
    // The path is our own configuration, quoted as an SQL string literal.
    await setup.run(`ATTACH '${file.replace(/'/g, "''")}' AS ${DATABASE} (ROW_GROUP_SIZE ${ROW_GROUP_ROWS})`);
    setup.closeSync();
    const writer = await useEvents(instance);
    await migrate(writer);
    // Per-connection scratch tables for set-based mirror updates.
    await writer.run('CREATE TEMP TABLE touched_persons (project_id INTEGER, id UUID)');
    await writer.run('CREATE TEMP TABLE touched_distinct_ids (project_id INTEGER, distinct_id VARCHAR)');
    await writer.run(CREATE_PENDING_EVENTS);
    const materializedReady = Number((await writer.runAndReadAll(READ_READY)).getRows()[0]?.[0] ?? 0) === 1;
    const connections: DuckDBConnection[] = [];
    for (let i = 0; i < (options.readers ?? DEFAULT_READERS); i++) connections.push(await useEvents(instance));
    const readers = new Readers(connections, options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS);
    // The readiness probe's own: it must not wait behind slow queries.
    const probe = await useEvents(instance);
    return { instance, writer, readers, probe, materializedReady };
  } catch (error) {
    instance.closeSync();
    throw error;
  }
}

/** A connection whose unqualified table names are the events database's. */
async function useEvents(instance: DuckDBInstance): Promise<DuckDBConnection> {
  const connection = await instance.connect();
  await connection.run(`USE ${DATABASE}`);
  return connection;
}

/**
 * DuckDB answers every call with "database has been invalidated" after a fatal error (a WAL
 * write or checkpoint that hit a full or read-only disk): only a new instance on
 * the file works again, replaying its WAL. A commit that found no memory is treated the same way:
 * the instance that ran out keeps failing commits, a new one does not.
 */
const isFatal = (error: unknown) => isInvalidated(error) || isCommitOutOfMemory(error);

/**
 * The embedded event store: one DuckDB file under the data directory. Writes go through a
 * single connection (one at a time, each a slice of one or more flushes); queries use their own
 * connections (readers.ts) so that they never wait behind an append. After a fatal error the
 * next call reopens the database.
 */
export class DuckDbEventStore implements EventStore {
  readonly writeUnit = ROW_GROUP_ROWS;
  readonly dialect = new DuckDbDialect();
  readonly pageBytes: number;
  private readonly writes = new Serial();
  /** Fills the materialized columns of events stored before them; null once every row has them. */
  private backfill: Backfill | null = null;
  private checkpointing: Promise<void> | null = null;
  /** Rows written through the WAL since the last checkpoint. */
  private walRows = 0;
  private invalidated = false;
  private reopening: Promise<void> | null = null;
  private readonly log: Logger;
  /** Connections of the exports streaming now (each has its own). */
  private readonly exports = new Set<DuckDBConnection>();
  /** At shutdown, interrupts the exports until they have ended. */
  private exportInterrupter: NodeJS.Timeout | null = null;
  /** Set while compact() swaps the file: reads wait for it instead of failing on closed connections. */
  private swapGate: Promise<void> | null = null;
  /** Queries, exports and probes running now (the swap waits for them to end). */
  private readsInFlight = 0;

  private constructor(
    private instance: DuckDBInstance,
    private writer: DuckDBConnection,
    private readers: Readers,
    private probe: DuckDBConnection,
    private readonly file: string,
    private readonly options: DuckOptions,
    materializedReady: boolean,
  ) {
    this.log = createLogger(options.logLevel ?? 'silent');
    if (materializedReady) this.dialect.useMaterialized(materializedColumns());
    else this.startBackfill();
    this.pageBytes = readPageBytes(options.memoryLimit);
    this.idleCheck = setInterval(() => void this.releaseIfIdle(), IDLE_RELEASE_MS / 3);
    this.idleCheck.unref();
    // Loading DuckDB's bindings and migrating left this thread's heap sparse: compact it once
    // the start is over (no call for a moment).
    this.afterOpenCheck = setInterval(() => {
      if (this.active > 0 || Date.now() - this.lastActive < AFTER_OPEN_COMPACT_MS) return;
      clearInterval(this.afterOpenCheck);
      compactGarbage();
    }, AFTER_OPEN_COMPACT_MS / 4);
    this.afterOpenCheck.unref();
  }

  private readonly afterOpenCheck: NodeJS.Timeout;

  private readonly idleCheck: NodeJS.Timeout;
  /** Calls running now, and when the last one ended: how long the store has been idle. */
  private active = 0;
  private lastActive = Date.now();
  private released = true;

  /**
   * DuckDB keeps the blocks it read or wrote cached up to its memory limit, and would hold them
   * for good in an idle server. After a quiet while the limit is lowered for a moment, which
   * makes it drop every block it can (they are all on disk), then set back.
   */
  private async releaseIfIdle(): Promise<void> {
    if (this.released || this.active > 0 || this.invalidated || Date.now() - this.lastActive < IDLE_RELEASE_MS) return;
    this.released = true;
    // In the write queue, so that no write runs under the lowered limit.
    await this.writes.run(() => this.lowerLimitForAMoment()).catch(() => undefined);
    // This thread's garbage too: rows it decoded, and the shared flush records it wrote.
    compactGarbage();
  }

  private async lowerLimitForAMoment(): Promise<void> {
    const limit = this.options.memoryLimit ?? DEFAULT_MEMORY_LIMIT;
    // A connection of its own: the probe's may be answering /_ready meanwhile.
    const connection = await this.instance.connect().catch(() => null);
    if (!connection) return;
    try {
      await connection.run(`SET memory_limit = '${RELEASE_TO}'`);
    } catch {
      // Some memory could not be let go (a query's): the limit stays as it was.
    } finally {
      await connection.run(`SET memory_limit = '${limit}'`).catch((err: unknown) => this.log.error({ err }, 'could not restore the event store memory limit'));
      connection.closeSync();
    }
  }

  static async open(dataDir: string, options: DuckOptions = {}): Promise<DuckDbEventStore> {
    const file = path.join(dataDir, 'events.duckdb');
    const { instance, writer, readers, probe, materializedReady } = await connect(file, options);
    return new DuckDbEventStore(instance, writer, readers, probe, file, options, materializedReady);
  }

  /** Whether queries read the materialized columns (every stored event has them). */
  get materializedReady(): boolean {
    return this.dialect.readsMaterialized;
  }

  private startBackfill(): void {
    // First in the write queue: DuckDB 1.5 fails the commit of an append after ADD COLUMN on a
    // table whose row groups are larger than ROW_GROUP_ROWS (older files) until a checkpoint.
    this.checkpoint().catch((error: unknown) => this.onCheckpointFailed(error));
    this.backfill = new Backfill({
      write: (work) => this.writes.run(() => this.guarded(() => work(this.writer), false)),
      checkpoint: () => this.checkpoint(),
      onReady: () => {
        this.backfill = null;
        this.dialect.useMaterialized(materializedColumns());
      },
      log: this.log,
    });
    this.backfill.start();
  }

  /** Runs `work` on a usable instance, reopening it first if a fatal error invalidated it. */
  private async guarded<T>(work: () => Promise<T>, activity = true): Promise<T> {
    if (activity) {
      this.active++;
      this.released = false;
    }
    try {
      return await this.guardedWork(work);
    } finally {
      if (activity) {
        this.active--;
        this.lastActive = Date.now();
      }
    }
  }

  private async guardedWork<T>(work: () => Promise<T>): Promise<T> {
    if (this.invalidated) {
      this.reopening ??= this.reopen().finally(() => (this.reopening = null));
      await this.reopening;
    }
    try {
      return await work();
    } catch (error) {
      if (isFatal(error)) this.invalidated = true;
      throw error;
    }
  }

  private async reopen(): Promise<void> {
    // Queries still running on the invalidated instance end first (they fail at once): closing
    // a connection under a running query blocks this thread until it ends (readers.ts).
    await this.readers.stopAll(queryFailure('QueryStoreRecoveringError', 'the event store is being reopened after an error'));
    for (const connection of this.exports) connection.interrupt();
    for (const close of this.closers()) {
      try {
        close();
      } catch {
        // an invalidated (or already closed) instance may refuse; it is dropped either way
      }
    }
    // Still failing (disk still full): stays invalidated, and the next call tries again.
    const opened = await connect(this.file, this.options);
    this.instance = opened.instance;
    this.writer = opened.writer;
    this.readers = opened.readers;
    this.probe = opened.probe;
    this.invalidated = false;
  }

  async write(slice: EventSlice, bytesOf: FlushBytes = (flush) => flush.bytes): Promise<void> {
    const rows = sliceEvents(slice);
    await this.writeParts(partsOf(slice, bytesOf), rows > 0, { seq: slice.after, events: slice.from }, positionAfter(slice));
    // Whole row groups went straight to the file; smaller writes went through the WAL.
    if (rows < ROW_GROUP_ROWS) this.walRows += rows;
    const due = this.walRows >= CHECKPOINT_WAL_ROWS || this.walBytes() >= CHECKPOINT_WAL_BYTES;
    if (due && !this.checkpointing) {
      this.walRows = 0;
      this.checkpointing = this.checkpoint()
        // A fatal failure (disk full) invalidates the instance and the next write reopens it;
        // any other leaves the WAL to the next checkpoint.
        .catch((error: unknown) => this.onCheckpointFailed(error))
        .finally(() => (this.checkpointing = null));
    }
  }

  /** Imports (types.ts): outside the flush log; a batch of whole row groups goes straight to the file. */
  importEvents(events: StoredEvent[]): Promise<void> {
    return this.writes.run(() => this.guarded(async () => {
      const c = this.writer;
      await inTransaction(c, async () => {
        await insertEvents(c, (appender) => appendEvents(appender, events, 0));
        await c.run('COMMIT');
      });
    }));
  }

  countEvents(): Promise<number> {
    return this.read(() => this.guarded(async () => Number((await this.writer.runAndReadAll('SELECT count(*) FROM events')).getRows()[0][0])));
  }

  exportEvents(chunkRows = 2_048): AsyncIterable<StoredEvent[]> {
    return storedEvents(this.stream(EXPORT_EVENTS, chunkRows));
  }

  private onCheckpointFailed(error: unknown): void {
    this.log.warn({ err: error, walBytes: this.walBytes() }, 'event store checkpoint failed; the WAL is folded in by a later one');
  }

  private walBytes(): number {
    return fileBytes(`${this.file}.wal`);
  }

  private writeParts(parts: AsyncIterable<SlicePart>, hasEvents: boolean, expected: EventStorePosition, position: EventStorePosition): Promise<void> {
    // The position is our own counters, written into the statement text.
    if (!Number.isSafeInteger(position.seq) || !Number.isSafeInteger(position.events)) throw new Error(`invalid position ${JSON.stringify(position)}`);
    return this.writes.run(() => this.guarded(async () => {
      const c = this.writer;
      await inTransaction(c, async () => {
        // Compare and set: a write whose earlier attempt was committed after all (its answer was
        // lost) must not append its events again.
        const stored = await readPosition(c);
        if (stored.seq !== expected.seq || stored.events !== expected.events) {
          throw new Error(`the event store holds ${JSON.stringify(stored)}, not ${JSON.stringify(expected)}; the write is skipped`);
        }
        // A flush cut at its start had its person changes applied by the write that took its
        // first events; the others' are combined into as few statements as order allows. Only
        // they are kept: each record's bytes may go once its events are appended.
        const changes: SlicePart['record']['changes'][] = [];
        const appendParts = async (appender?: DuckDBAppender) => {
          for await (const part of parts) {
            if (part.start === 0) changes.push(part.record.changes);
            if (appender && part.end > part.start) await appendEvents(appender, part.record.events(part.start, part.end), part.record.changes.flushSeq);
          }
        };
        if (hasEvents) await insertEvents(c, appendParts);
        else await appendParts();
        for (const run of combinePersonChanges(changes)) await this.mirrorPersons(run);
        // One round trip for the position and the commit (each costs a thread-pool hop).
        await c.run(
          `UPDATE sync_state SET value = ${position.seq} WHERE key = 'flush_seq'; ` +
            `UPDATE sync_state SET value = ${position.events} WHERE key = 'flush_events'; COMMIT`,
        );
      });
    }));
  }

  /**
   * Person mirror: set-based deletes through temp tables (one scan per flush, not one per
   * person), then appends of the new state.
   */
  private async mirrorPersons(batch: PersonChanges): Promise<void> {
    const c = this.writer;
    for (const r of batch.reassignDistinctIds) {
      await c.run('UPDATE person_distinct_ids SET person_id = $1 WHERE project_id = $2 AND person_id = $3', [
        uuidOf(r.to_person_uuid),
        r.project_id,
        uuidOf(r.from_person_uuid),
      ]);
    }
    const removedPersons = [...batch.deletePersons, ...batch.upsertPersons];
    if (removedPersons.length > 0) {
      await c.run('DELETE FROM touched_persons');
      await appendTo(c, 'touched_persons', (appender) => {
        for (const p of removedPersons) {
          appender.appendInteger(p.project_id);
          appender.appendVarchar(p.uuid);
          appender.endRow();
        }
      });
      await c.run('DELETE FROM persons USING touched_persons t WHERE persons.project_id = t.project_id AND persons.id = t.id');
    }
    if (batch.setDistinctIds.length > 0) {
      await c.run('DELETE FROM touched_distinct_ids');
      await appendTo(c, 'touched_distinct_ids', (appender) => {
        for (const d of batch.setDistinctIds) {
          appender.appendInteger(d.project_id);
          appender.appendVarchar(d.distinct_id);
          appender.endRow();
        }
      });
      await c.run(
        'DELETE FROM person_distinct_ids USING touched_distinct_ids t WHERE person_distinct_ids.project_id = t.project_id AND person_distinct_ids.distinct_id = t.distinct_id',
      );
    }
    if (batch.upsertPersons.length > 0) {
      await appendTo(c, 'persons', (appender) => {
        for (const p of batch.upsertPersons) appendPerson(appender, p);
      });
    }
    if (batch.setDistinctIds.length > 0) {
      await appendTo(c, 'person_distinct_ids', (appender) => {
        for (const d of batch.setDistinctIds) {
          appender.appendInteger(d.project_id);
          appender.appendVarchar(d.distinct_id);
          appender.appendVarchar(d.person_uuid);
          appender.endRow();
        }
      });
    }
  }

  position(): Promise<EventStorePosition> {
    return this.read(() => this.guarded(() => readPosition(this.writer)));
  }

  /** A read that must not run while compact() swaps the file. */
  private async read<T>(work: () => Promise<T>): Promise<T> {
    while (this.swapGate) await this.swapGate;
    this.readsInFlight++;
    try {
      return await work();
    } finally {
      this.readsInFlight--;
    }
  }

  rebuildPersonMirror(rows: AsyncIterable<{ person: PersonRecord; distinct_ids: string[] }>): Promise<void> {
    return this.writes.run(() => this.guarded(async () => {
      const c = this.writer;
      await inTransaction(c, async () => {
        await c.run('DELETE FROM persons');
        await c.run('DELETE FROM person_distinct_ids');
        await appendTo(c, 'persons', (persons) =>
          appendTo(c, 'person_distinct_ids', async (ids) => {
            for await (const { person, distinct_ids } of rows) {
              appendPerson(persons, person);
              for (const distinctId of distinct_ids) {
                ids.appendInteger(person.project_id);
                ids.appendVarchar(distinctId);
                ids.appendVarchar(person.uuid);
                ids.endRow();
              }
            }
          }),
        );
        await c.run('COMMIT');
      });
    }));
  }

  query(query: EventQuery, signal?: AbortSignal): Promise<Record<string, unknown>[]> {
    return this.read(() => this.guarded(() =>
      this.readers.run(async (connection) => {
        try {
          const reader = await connection.runAndReadAll(query.sql, query.params as DuckDBValue[]);
          return reader.getRowObjectsJson() as Record<string, unknown>[];
        } catch (error) {
          throw classifyQueryError(error);
        }
      }, signal),
    ));
  }

  async *stream(query: EventQuery, chunkRows = 2048): AsyncIterable<Record<string, unknown>[]> {
    while (this.swapGate) await this.swapGate;
    this.readsInFlight++;
    // A dedicated connection: a long export must not hold the shared reader.
    const connection = await this.guarded(() => useEvents(this.instance)).catch((error: unknown) => {
      this.readsInFlight--;
      throw error;
    });
    this.exports.add(connection);
    try {
      let pending: Record<string, unknown>[] = [];
      try {
        const result = await connection.stream(query.sql, query.params as DuckDBValue[]);
        for await (const rows of result.yieldRowObjectJson()) {
          pending.push(...(rows as Record<string, unknown>[]));
          if (pending.length >= chunkRows) {
            yield pending;
            pending = [];
          }
        }
      } catch (error) {
        throw classifyQueryError(error);
      }
      if (pending.length > 0) yield pending;
    } finally {
      this.exports.delete(connection);
      connection.closeSync();
      this.readsInFlight--;
    }
  }

  /**
   * Shutdown: queries and exports are interrupted now and every 100 ms until they have ended,
   * as the time limit does (an interrupt that reaches DuckDB before a query starts is forgotten).
   */
  async interruptQueries(): Promise<void> {
    this.readers.interruptAll();
    const interruptExports = () => {
      for (const connection of this.exports) connection.interrupt();
    };
    interruptExports();
    this.exportInterrupter ??= setInterval(interruptExports, REINTERRUPT_MS).unref();
  }

  async ping(): Promise<boolean> {
    try {
      await this.read(() => this.guarded(() => this.probe.run('SELECT 1'), false));
      return true;
    } catch {
      return false;
    }
  }

  async sizeBytes(): Promise<number> {
    return fileBytes(this.file) + this.walBytes();
  }

  /**
   * Folds the WAL into the file. Queued with the writes: an append waiting for a checkpoint's
   * table lock would block inside the appender's synchronous calls, freezing the event loop.
   */
  checkpoint(): Promise<void> {
    return this.writes.run(() => this.guarded(async () => {
      await this.writer.run(`CHECKPOINT ${DATABASE}`);
    }));
  }

  async expireEvents(cutoff: Date, limit: number): Promise<UuidsByProject> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`invalid limit ${limit}`);
    return this.writes.run(() => this.guarded(async () => {
      const c = this.writer;
      // The batch is picked into a temp table and deleted by row id: DELETE takes no LIMIT, and
      // DELETE … RETURNING reads every column of the deleted rows (measured ~300 ms a batch
      // against ~20 ms). Zone maps on timestamp skip the newer row groups.
      return inTransaction(c, async () => {
        await c.run(
          `CREATE OR REPLACE TEMP TABLE expiring AS
           SELECT rowid AS row_id, project_id, replace(CAST(uuid AS VARCHAR), '-', '') AS uuid FROM events WHERE timestamp < $1 LIMIT ${limit}`,
          [timestampValue(cutoff)],
        );
        await c.run('DELETE FROM events WHERE rowid IN (SELECT row_id FROM expiring)');
        const reader = await c.runAndReadAll('SELECT project_id, uuid FROM expiring');
        await c.run('DROP TABLE expiring; COMMIT');
        const uuids: UuidsByProject = new Map();
        for (const [projectId, uuid] of reader.getRows() as [number, string][]) getOrCreate(uuids, projectId, () => []).push(uuid);
        return uuids;
      });
    }));
  }

  async erasePerson(input: PersonErasure): Promise<number> {
    if (!Number.isSafeInteger(input.afterFlushSeq)) throw new Error(`invalid flush seq ${input.afterFlushSeq}`);
    return this.writes.run(() => this.guarded(async () => {
      const c = this.writer;
      const ids = JSON.stringify(input.distinctIds);
      return inTransaction(c, async () => {
        let deleted = 0;
        if (input.events) {
          // Only events of flushes the deletion followed: a later event of the same distinct id
          // belongs to the person it made then.
          const reader = await c.runAndReadAll(
            `DELETE FROM events WHERE project_id = $1 AND flush_seq <= $2
               AND (person_id = CAST($3 AS UUID) OR distinct_id IN (SELECT unnest(CAST($4 AS JSON)::VARCHAR[])))`,
            [input.projectId, BigInt(input.afterFlushSeq), input.personUuid, ids],
          );
          deleted = Number(reader.getRows()[0]?.[0] ?? 0);
        }
        await c.run('DELETE FROM persons WHERE project_id = $1 AND id = CAST($2 AS UUID)', [input.projectId, input.personUuid]);
        await c.run('DELETE FROM cohort_people WHERE project_id = $1 AND person_id = CAST($2 AS UUID)', [input.projectId, input.personUuid]);
        await c.run(
          'DELETE FROM person_distinct_ids WHERE project_id = $1 AND (person_id = CAST($2 AS UUID) OR distinct_id IN (SELECT unnest(CAST($3 AS JSON)::VARCHAR[])))',
          [input.projectId, input.personUuid, ids],
        );
        for (const { person, distinct_ids } of input.keep) {
          await c.run('DELETE FROM persons WHERE project_id = $1 AND id = CAST($2 AS UUID)', [person.project_id, person.uuid]);
          await c.run('DELETE FROM person_distinct_ids WHERE project_id = $1 AND person_id = CAST($2 AS UUID)', [person.project_id, person.uuid]);
          await appendTo(c, 'persons', (appender) => appendPerson(appender, person));
          await appendTo(c, 'person_distinct_ids', (appender) => {
            for (const distinctId of distinct_ids) {
              appender.appendInteger(person.project_id);
              appender.appendVarchar(distinctId);
              appender.appendVarchar(person.uuid);
              appender.endRow();
            }
          });
        }
        await c.run('COMMIT');
        return deleted;
      });
    }));
  }

  replaceCohortMembers(projectId: number, cohortId: number, personUuids: string[]): Promise<void> {
    return this.writes.run(() => this.guarded(async () => {
      const c = this.writer;
      await inTransaction(c, async () => {
        await c.run('DELETE FROM cohort_people WHERE project_id = $1 AND cohort_id = $2', [projectId, cohortId]);
        await appendTo(c, 'cohort_people', (appender) => {
          for (const uuid of personUuids) {
            appender.appendInteger(projectId);
            appender.appendBigInt(BigInt(cohortId));
            appender.appendVarchar(uuid);
            appender.endRow();
          }
        });
        await c.run('COMMIT');
      });
    }));
  }

  /**
   * Rewrites the whole file into a fresh one and swaps it in. A DELETE only marks rows, and a
   * checkpoint frees their blocks without overwriting them, so deleted events stay readable in
   * the file's bytes until something reuses that space; a copy holds only live rows. Writes wait
   * for the whole of it; reads only for the swap, which waits for the reads running then.
   */
  compact(): Promise<void> {
    return this.writes.run(() => this.guarded(async () => {
      const fresh = `${this.file}.compact`;
      removeFiles(fresh);
      // An empty WAL first: after the swap, nothing of the old file may be replayed into the new one.
      await this.writer.run(`CHECKPOINT ${DATABASE}`);
      await this.writer.run(`ATTACH '${fresh.replace(/'/g, "''")}' AS compacting (ROW_GROUP_SIZE ${ROW_GROUP_ROWS})`);
      try {
        await this.writer.run(`COPY FROM DATABASE ${DATABASE} TO compacting`);
      } finally {
        await this.writer.run('DETACH compacting');
      }
      let open = () => {};
      this.swapGate = new Promise<void>((resolve) => (open = resolve));
      try {
        // Reads running now end first (queries within their time limit; exports run to their end).
        while (this.readsInFlight > 0) await new Promise((resolve) => setTimeout(resolve, 10));
        for (const close of this.closers()) close();
        // The rename is atomic: a crash leaves either file whole (a stray copy is removed at the next compaction).
        fs.rmSync(`${this.file}.wal`, { force: true });
        fs.renameSync(fresh, this.file);
        const opened = await connect(this.file, this.options);
        this.instance = opened.instance;
        this.writer = opened.writer;
        this.readers = opened.readers;
        this.probe = opened.probe;
        this.walRows = 0;
      } catch (error) {
        // The connections are closed: the next call reopens whichever file is in place.
        this.invalidated = true;
        throw error;
      } finally {
        this.swapGate = null;
        open();
      }
    }));
  }

  private closers(): (() => void)[] {
    return [() => this.readers.closeAll(), () => this.probe.closeSync(), () => this.writer.closeSync(), () => this.instance.closeSync()];
  }

  async close(): Promise<void> {
    clearInterval(this.idleCheck);
    clearInterval(this.afterOpenCheck);
    if (this.exportInterrupter) clearInterval(this.exportInterrupter);
    await this.backfill?.stop();
    await this.reopening?.catch(() => undefined);
    await this.readers.stopAll(queryFailure('QueryInterruptedError', 'the event store is closing'));
    await this.checkpointing;
    // An invalidated instance is not reopened only to be closed: its WAL is replayed at the next start.
    if (!this.invalidated) await this.checkpoint().catch(() => undefined);
    for (const close of this.closers()) {
      try {
        close();
      } catch (error) {
        // an invalidated instance's WAL is replayed at the next start
        if (!this.invalidated) throw error;
      }
    }
  }
}

function removeFiles(file: string): void {
  for (const suffix of ['', '.wal']) fs.rmSync(file + suffix, { force: true });
}

/** One flush of a slice, opened, with the events of it the slice takes. */
interface SlicePart {
  record: FlushRecordReader;
  start: number;
  end: number;
}

/**
 * A flush's record bytes: the flush's own, or, in the event store's process, the bytes its caller
 * sends after the write one flush at a time (threaded.ts), so that the process never holds a
 * whole slice.
 */
export type FlushBytes = (flush: EncodedFlush, index: number) => Uint8Array | Promise<Uint8Array>;

async function* partsOf({ flushes, from, to }: EventSlice, bytesOf: FlushBytes): AsyncIterable<SlicePart> {
  for (const [i, flush] of flushes.entries()) {
    const record = readFlushRecord(await bytesOf(flush, i));
    yield { record, start: i === 0 ? from : 0, end: i === flushes.length - 1 ? to : record.count };
  }
}

/** Appender calls are synchronous: long appends let the thread's other calls (queries) in this often. */
const YIELD_EVERY_ROWS = 2_048;

/**
 * UUIDs are appended as text (DuckDB casts them natively, cheaper than building UUID values in
 * JS); values shared by the whole flush are built once.
 */
async function appendEvents(appender: DuckDBAppender, events: Iterable<StoredEvent>, seq: number): Promise<void> {
  const flushSeq = BigInt(seq);
  let createdAt: Date | null = null;
  let createdAtValue = timestampValue(new Date(0));
  let rows = 0;
  for (const e of events) {
    if (e.created_at.getTime() !== createdAt?.getTime()) {
      createdAt = e.created_at;
      createdAtValue = timestampValue(createdAt);
    }
    appender.appendInteger(e.project_id);
    appender.appendVarchar(e.uuid);
    appender.appendVarchar(e.event);
    appender.appendVarchar(e.distinct_id);
    if (e.person_id) appender.appendVarchar(e.person_id);
    else appender.appendNull();
    appender.appendTimestamp(timestampValue(e.timestamp));
    appender.appendTimestamp(createdAtValue);
    appender.appendVarchar(e.properties_json);
    appender.appendVarchar(e.elements_chain);
    for (const group of e.groups) appender.appendVarchar(group);
    appender.appendBigInt(flushSeq);
    appender.endRow();
    if (++rows % YIELD_EVERY_ROWS === 0) await afterIo();
  }
}

function appendPerson(appender: DuckDBAppender, p: { project_id: number; uuid: string; properties: object; is_identified: boolean; created_at: string }): void {
  appender.appendInteger(p.project_id);
  appender.appendVarchar(p.uuid);
  appender.appendVarchar(JSON.stringify(p.properties));
  appender.appendBoolean(p.is_identified);
  appender.appendTimestamp(timestampValue(new Date(p.created_at)));
  appender.endRow();
}

async function readPosition(c: DuckDBConnection): Promise<EventStorePosition> {
  const reader = await c.runAndReadAll("SELECT key, value FROM sync_state WHERE key IN ('flush_seq', 'flush_events')");
  const values = new Map(reader.getRows().map(([key, value]) => [key as string, Number(value)]));
  return { seq: values.get('flush_seq') ?? 0, events: values.get('flush_events') ?? 0 };
}

async function migrate(connection: DuckDBConnection): Promise<void> {
  await connection.run('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMP NOT NULL)');
  const reader = await connection.runAndReadAll('SELECT version FROM schema_migrations');
  const applied = new Set(reader.getRows().map((row) => Number(row[0])));
  for (const migration of duckMigrations) {
    if (applied.has(migration.version)) continue;
    await inTransaction(connection, async () => {
      await connection.run(migration.sql);
      await connection.run('INSERT INTO schema_migrations VALUES ($1, now())', [migration.version]);
      await connection.run('COMMIT');
    });
  }
}
