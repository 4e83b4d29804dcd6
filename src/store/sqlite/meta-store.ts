import fs from 'node:fs';
import path from 'node:path';
import type { MetaStore } from '../types.js';
import { ChangeStamps } from '../change-stamps.js';
import { openSqlite, type Sqlite } from './database.js';
import { SqliteAccountStore } from './accounts.js';
import { SqliteActionStore } from './actions.js';
import { SqliteCohortStore } from './cohorts.js';
import { SqliteDashboardStore } from './dashboards.js';
import { SqliteDefinitionStore } from './definitions.js';
import { SqliteFlagStore } from './flags.js';
import { SqliteGroupStore } from './groups.js';
import { SqliteIngestStore } from './ingest.js';
import { SqlitePersonStore } from './persons.js';
import { SqliteTenancyStore } from './tenancy.js';
import { SqliteTransfer } from './transfer.js';

/** The embedded metadata store: one SQLite file (WAL) under the data directory. */
export class SqliteMetaStore implements MetaStore {
  readonly tenancy: SqliteTenancyStore;
  readonly ingest: SqliteIngestStore;
  readonly definitions: SqliteDefinitionStore;
  readonly flags: SqliteFlagStore;
  readonly accounts: SqliteAccountStore;
  readonly persons: SqlitePersonStore;
  readonly groups: SqliteGroupStore;
  readonly dashboards: SqliteDashboardStore;
  readonly actions: SqliteActionStore;
  readonly cohorts: SqliteCohortStore;
  readonly transfer: SqliteTransfer;

  private constructor(
    readonly db: Sqlite,
    private readonly file: string,
    /** Change stamps of persons and groups: pass the same memory to every thread's store (flag threads). */
    readonly stamps: ChangeStamps,
  ) {
    this.tenancy = new SqliteTenancyStore(db);
    this.ingest = new SqliteIngestStore(db, stamps);
    this.definitions = new SqliteDefinitionStore(db);
    this.flags = new SqliteFlagStore(db, stamps);
    this.accounts = new SqliteAccountStore(db, this.tenancy);
    this.persons = new SqlitePersonStore(db, stamps);
    this.groups = new SqliteGroupStore(db);
    this.dashboards = new SqliteDashboardStore(db);
    this.actions = new SqliteActionStore(db);
    this.cohorts = new SqliteCohortStore(db, stamps);
    this.transfer = new SqliteTransfer(db);
  }

  static open(dataDir: string, stamps = new ChangeStamps()): SqliteMetaStore {
    const file = path.join(dataDir, 'meta.sqlite');
    return new SqliteMetaStore(openSqlite(file), file, stamps);
  }

  async ping(): Promise<boolean> {
    try {
      this.db.prepare('SELECT 1').get();
      return true;
    } catch {
      return false;
    }
  }

  async sizeBytes(): Promise<number> {
    let total = 0;
    for (const suffix of ['', '-wal', '-shm']) {
      try {
        total += fs.statSync(this.file + suffix).size;
      } catch {
        // a missing WAL/SHM file simply adds nothing
      }
    }
    return total;
  }

  /**
   * SQLite's page cache (16 MB a connection, openSqlite) fills under ingestion
   * and stays: after the ingest benchmark it held most of the metadata file, ~16 MB of glibc's
   * heap. `shrink_memory` frees the pages no statement is using.
   */
  releaseIdleMemory(): void {
    try {
      if (this.db.isOpen) this.db.pragma('shrink_memory');
    } catch {
      // Busy (an export iterating across awaits): the next idle collection tries again.
    }
  }

  async close(): Promise<void> {
    if (!this.db.isOpen) return;
    try {
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      // Only tidies the WAL (a full disk refuses it): its commits are replayed at the next open.
    }
    this.db.close();
  }
}
