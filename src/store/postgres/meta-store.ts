import type { MetaStore } from '../types.js';
import { ChangeStamps } from '../change-stamps.js';
import { FIRST_START_LOCK, migrate, openPool, withSessionLock, type PgPool } from './database.js';
import { PostgresAccountStore } from './accounts.js';
import { PostgresDefinitionStore } from './definitions.js';
import { PostgresFlagStore } from './flags.js';
import { PostgresIngestStore } from './ingest.js';
import { PostgresTenancyStore } from './tenancy.js';
import { PostgresChangeFeed } from './change-feed.js';
import { PostgresDashboardStore } from './dashboards.js';
import { PostgresActionStore } from './actions.js';
import { PostgresCohortStore } from './cohorts.js';
import { PostgresGroupStore } from './groups.js';
import { PostgresPersonStore } from './persons.js';
import { PostgresTransfer } from './transfer.js';
import { PostgresRateWindows } from './rate-windows.js';

export interface PostgresSettings {
  url: string;
  /** This node's name in the shared database (its flush log's position is kept under it). */
  node: string;
  /** Connections this process may hold (each flag thread opens a store of its own). */
  maxConnections: number;
}

/** The distributed metadata store: one PostgreSQL database shared by every node. */
export class PostgresMetaStore implements MetaStore {
  readonly tenancy: PostgresTenancyStore;
  readonly ingest: PostgresIngestStore;
  readonly definitions: PostgresDefinitionStore;
  readonly flags: PostgresFlagStore;
  readonly accounts: PostgresAccountStore;
  readonly persons: PostgresPersonStore;
  readonly groups: PostgresGroupStore;
  readonly dashboards: PostgresDashboardStore;
  readonly actions: PostgresActionStore;
  readonly cohorts: PostgresCohortStore;
  readonly transfer: PostgresTransfer;
  private lastSize = 0;
  /** Listens only once something subscribes (the main thread; flag threads never do). */
  readonly changes: PostgresChangeFeed;
  readonly rateWindows: PostgresRateWindows;

  private constructor(
    private readonly pool: PgPool,
    settings: PostgresSettings,
    stamps: ChangeStamps,
  ) {
    const node = settings.node;
    this.changes = new PostgresChangeFeed(settings.url, pool);
    this.tenancy = new PostgresTenancyStore(pool);
    this.ingest = new PostgresIngestStore(pool, node, stamps);
    this.definitions = new PostgresDefinitionStore(pool);
    this.flags = new PostgresFlagStore(pool);
    this.accounts = new PostgresAccountStore(pool, this.tenancy);
    this.persons = new PostgresPersonStore(pool, node, stamps);
    this.groups = new PostgresGroupStore(pool);
    this.dashboards = new PostgresDashboardStore(pool);
    this.actions = new PostgresActionStore(pool);
    this.cohorts = new PostgresCohortStore(pool);
    this.transfer = new PostgresTransfer(pool, node);
    this.rateWindows = new PostgresRateWindows(pool);
  }

  /** Connects and applies pending migrations (`migrate: false` for a thread whose process has). */
  static async open(settings: PostgresSettings, stamps = new ChangeStamps(), { migrate: runMigrations = true } = {}): Promise<PostgresMetaStore> {
    const pool = openPool(settings.url, settings.maxConnections);
    try {
      if (runMigrations) await migrate(pool);
      else await pool.query('SELECT 1');
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
    return new PostgresMetaStore(pool, settings, stamps);
  }

  /** Applies pending migrations and says which (the `sightline migrate` command). */
  static async migrate(url: string): Promise<number[]> {
    const pool = openPool(url, 1);
    try {
      return await migrate(pool);
    } finally {
      await pool.end();
    }
  }

  firstStartInTurn<T>(work: () => Promise<T>): Promise<T> {
    return withSessionLock(this.pool, FIRST_START_LOCK, () => work());
  }

  async ping(): Promise<boolean> {
    try {
      await this.pool.query('SELECT 1');
      return true;
    } catch {
      return false;
    }
  }

  /** The last size known while the server is unreachable (/metrics must still answer). */
  async sizeBytes(): Promise<number> {
    try {
      const row = (await this.pool.query<{ n: string }>('SELECT pg_database_size(current_database()) AS n')).rows[0];
      this.lastSize = Number(row.n);
    } catch {
      // unreachable: /_ready says so
    }
    return this.lastSize;
  }

  async close(): Promise<void> {
    await this.changes.close();
    await this.pool.end();
  }
}
