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
import { decodeFlushRecord, eventStoreWriteOf } from '../flush-record.js';
import type { EncodedFlush, EventQuery, EventStore, EventStoreWrite, PersonRecord } from '../types.js';
import { uuidToBigInt } from '../../util/uuid.js';
import { duckMigrations } from './schema.js';

/**
 * Every checkpoint seals the rows appended since the previous one into row groups of their own,
 * and DuckDB later merges small row groups by rewriting them (measured: multi-second stalls
 * every few hundred thousand events when checkpointing at DuckDB's 16 MB default). Checkpointing
 * once per row group's worth of events (DuckDB's 122,880 rows) keeps row groups full; the WAL
 * bound caps memory and replay time for unusually large events.
 */
const CHECKPOINT_EVERY_ROWS = 122_880;
const CHECKPOINT_WAL_BYTES = 256 * 2 ** 20;

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
}

/**
 * Opens the file, migrates it, and makes the writer (with its scratch tables) and the reader.
 *
 * DuckDB's automatic checkpoint is skipped while any other transaction is active, so steady
 * reads (the events list) let the WAL, and the memory holding what it has not folded yet, grow
 * without bound. It is off; the store runs CHECKPOINT itself between writes, which DuckDB
 * performs even while reads are running.
 */
async function connect(file: string, options: DuckOptions) {
  // Never fetch extensions at run time: json/icu/parquet are built in.
  const instance = await DuckDBInstance.create(file, {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    memory_limit: options.memoryLimit ?? '512MB',
    threads: String(options.threads ?? 2),
    checkpoint_threshold: '1TB',
  });
  try {
    const writer = await instance.connect();
    await migrate(writer);
    // Per-connection scratch tables for set-based mirror updates.
    await writer.run('CREATE TEMP TABLE touched_persons (project_id INTEGER, id UUID)');
    await writer.run('CREATE TEMP TABLE touched_distinct_ids (project_id INTEGER, distinct_id VARCHAR)');
    const reader = await instance.connect();
    return { instance, writer, reader };
  } catch (error) {
    instance.closeSync();
    throw error;
  }
}

/**
 * DuckDB answers every call with "database has been invalidated" after a fatal error (a WAL
 * write or checkpoint that hit a full or read-only disk): only a new instance on
 * the file works again, replaying its WAL.
 */
const isFatal = (error: unknown) => /database has been invalidated|FATAL Error/i.test(error instanceof Error ? error.message : String(error));

/**
 * The embedded event store: one DuckDB file under the data directory. Writes go through a
 * single connection (one flush at a time); reads use their own connection so that queries
 * never wait behind an append. After a fatal error the next call reopens the database.
 */
export class DuckDbEventStore implements EventStore {
  private readonly writes = new Serial();
  private checkpointing: Promise<void> | null = null;
  private rowsSinceCheckpoint = 0;
  private invalidated = false;
  private reopening: Promise<void> | null = null;

  private constructor(
    private instance: DuckDBInstance,
    private writer: DuckDBConnection,
    private reader: DuckDBConnection,
    private readonly file: string,
    private readonly options: DuckOptions,
  ) {}

  static async open(dataDir: string, options: DuckOptions = {}): Promise<DuckDbEventStore> {
    const file = path.join(dataDir, 'events.duckdb');
    const { instance, writer, reader } = await connect(file, options);
    return new DuckDbEventStore(instance, writer, reader, file, options);
  }

  /** Runs `work` on a usable instance, reopening it first if a fatal error invalidated it. */
  private async guarded<T>(work: () => Promise<T>): Promise<T> {
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
    this.reader = opened.reader;
    this.invalidated = false;
  }

  async write(flushes: EncodedFlush[]): Promise<void> {
    const batches = flushes.map((flush) => eventStoreWriteOf(decodeFlushRecord(flush.bytes)));
    await this.writeBatches(batches);
    for (const batch of batches) this.rowsSinceCheckpoint += batch.events.length;
    const due = this.rowsSinceCheckpoint >= CHECKPOINT_EVERY_ROWS || this.walBytes() >= CHECKPOINT_WAL_BYTES;
    if (due && !this.checkpointing) {
      this.rowsSinceCheckpoint = 0;
      this.checkpointing = this.checkpoint()
        .catch(() => undefined) // a failed checkpoint (disk full) invalidates the instance; the next write reopens it
        .finally(() => (this.checkpointing = null));
    }
  }

  private walBytes(): number {
    return fileBytes(`${this.file}.wal`);
  }

  private writeBatches(batches: EventStoreWrite[]): Promise<void> {
    const lastSeq = batches[batches.length - 1]?.flushSeq;
    // The sequence is our own counter, written into the statement text.
    if (!Number.isSafeInteger(lastSeq)) throw new Error(`invalid flush sequence ${lastSeq}`);
    return this.writes.run(() => this.guarded(async () => {
      const c = this.writer;
      await c.run('BEGIN TRANSACTION');
      try {
        if (batches.some((batch) => batch.events.length > 0)) {
          const appender = await c.createAppender('events');
          for (const batch of batches) await appendEvents(appender, batch);
          appender.closeSync();
        }
        // Person changes depend on each other (a merge, then an update of the merged person).
        for (const batch of batches) await this.mirrorPersons(batch);
        // One round trip for both (each costs a thread-pool hop).
        await c.run(`UPDATE sync_state SET value = ${lastSeq} WHERE key = 'flush_seq'; COMMIT`);
      } catch (error) {
        await c.run('ROLLBACK').catch(() => undefined);
        throw error;
      }
    }));
  }

  /**
   * Person mirror: set-based deletes through temp tables (one scan per flush, not one per
   * person), then appends of the new state.
   */
  private async mirrorPersons(batch: EventStoreWrite): Promise<void> {
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
      const appender = await c.createAppender('touched_persons');
      for (const p of removedPersons) {
        appender.appendInteger(p.project_id);
        appender.appendVarchar(p.uuid);
        appender.endRow();
      }
      appender.closeSync();
      await c.run('DELETE FROM persons USING touched_persons t WHERE persons.project_id = t.project_id AND persons.id = t.id');
    }
    if (batch.setDistinctIds.length > 0) {
      await c.run('DELETE FROM touched_distinct_ids');
      const appender = await c.createAppender('touched_distinct_ids');
      for (const d of batch.setDistinctIds) {
        appender.appendInteger(d.project_id);
        appender.appendVarchar(d.distinct_id);
        appender.endRow();
      }
      appender.closeSync();
      await c.run(
        'DELETE FROM person_distinct_ids USING touched_distinct_ids t WHERE person_distinct_ids.project_id = t.project_id AND person_distinct_ids.distinct_id = t.distinct_id',
      );
    }
    if (batch.upsertPersons.length > 0) {
      const appender = await c.createAppender('persons');
      for (const p of batch.upsertPersons) appendPerson(appender, p);
      appender.closeSync();
    }
    if (batch.setDistinctIds.length > 0) {
      const appender = await c.createAppender('person_distinct_ids');
      for (const d of batch.setDistinctIds) {
        appender.appendInteger(d.project_id);
        appender.appendVarchar(d.distinct_id);
        appender.appendVarchar(d.person_uuid);
        appender.endRow();
      }
      appender.closeSync();
    }
  }

  committedFlushSeq(): Promise<number> {
    return this.guarded(async () => {
      const reader = await this.writer.runAndReadAll("SELECT value FROM sync_state WHERE key = 'flush_seq'");
      return Number(reader.getRows()[0]?.[0] ?? 0);
    });
  }

  rebuildPersonMirror(rows: AsyncIterable<{ person: PersonRecord; distinct_ids: string[] }>): Promise<void> {
    return this.writes.run(() => this.guarded(async () => {
      const c = this.writer;
      await c.run('BEGIN TRANSACTION');
      try {
        await c.run('DELETE FROM persons');
        await c.run('DELETE FROM person_distinct_ids');
        const persons = await c.createAppender('persons');
        const ids = await c.createAppender('person_distinct_ids');
        for await (const { person, distinct_ids } of rows) {
          appendPerson(persons, person);
          for (const distinctId of distinct_ids) {
            ids.appendInteger(person.project_id);
            ids.appendVarchar(distinctId);
            ids.appendVarchar(person.uuid);
            ids.endRow();
          }
        }
        persons.closeSync();
        ids.closeSync();
        await c.run('COMMIT');
      } catch (error) {
        await c.run('ROLLBACK').catch(() => undefined);
        throw error;
      }
    }));
  }

  query(query: EventQuery): Promise<Record<string, unknown>[]> {
    return this.guarded(async () => {
      const reader = await this.reader.runAndReadAll(query.sql, query.params as DuckDBValue[]);
      return reader.getRowObjectsJson() as Record<string, unknown>[];
    });
  }

  async *stream(query: EventQuery, chunkRows = 2048): AsyncIterable<Record<string, unknown>[]> {
    // A dedicated connection: a long export must not hold the shared reader.
    const connection = await this.guarded(() => this.instance.connect());
    try {
      const result = await connection.stream(query.sql, query.params as DuckDBValue[]);
      let pending: Record<string, unknown>[] = [];
      for await (const rows of result.yieldRowObjectJson()) {
        pending.push(...(rows as Record<string, unknown>[]));
        if (pending.length >= chunkRows) {
          yield pending;
          pending = [];
        }
      }
      if (pending.length > 0) yield pending;
    } finally {
      connection.closeSync();
    }
  }

  async ping(): Promise<boolean> {
    try {
      await this.guarded(() => this.reader.run('SELECT 1'));
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
      await this.writer.run('CHECKPOINT');
    }));
  }

  private closers(): (() => void)[] {
    return [() => this.reader.closeSync(), () => this.writer.closeSync(), () => this.instance.closeSync()];
  }

  async close(): Promise<void> {
    await this.checkpointing;
    await this.checkpoint().catch(() => undefined);
    await this.reopening?.catch(() => undefined);
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

/** Appender calls run on the main thread: long appends let other work in this often. */
const YIELD_EVERY_ROWS = 2_048;
const afterIo = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * UUIDs are appended as text (DuckDB casts them natively, cheaper than building UUID values in
 * JS); values shared by the whole flush are built once.
 */
async function appendEvents(appender: DuckDBAppender, batch: EventStoreWrite): Promise<void> {
  const flushSeq = BigInt(batch.flushSeq);
  let createdAt: Date | null = null;
  let createdAtValue = timestampValue(new Date(0));
  let rows = 0;
  for (const e of batch.events) {
    if (e.created_at !== createdAt) {
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

async function migrate(connection: DuckDBConnection): Promise<void> {
  await connection.run('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMP NOT NULL)');
  const reader = await connection.runAndReadAll('SELECT version FROM schema_migrations');
  const applied = new Set(reader.getRows().map((row) => Number(row[0])));
  for (const migration of duckMigrations) {
    if (applied.has(migration.version)) continue;
    await connection.run('BEGIN TRANSACTION');
    try {
      await connection.run(migration.sql);
      await connection.run('INSERT INTO schema_migrations VALUES ($1, now())', [migration.version]);
      await connection.run('COMMIT');
    } catch (error) {
      await connection.run('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
}
