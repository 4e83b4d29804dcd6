/**
 * Partition ownership among nodes through PostgreSQL session advisory locks: a node consumes a
 * partition while its connection holds that partition's lock, and that same connection holds a
 * shared "member" lock while the node lives. A node that dies loses its connection, so its locks;
 * `pg_locks` therefore shows, at any moment, which nodes live and what each holds, with no
 * membership table or heartbeat of our own. The locks are keyed by the stream's name
 * (`hashtext(stream)`, then the partition; -1 for members) so that streams do not collide.
 */
import pg from 'pg';
import type { Logger } from '../../kernel/logger.js';
import { withinMs } from '../../util/within-ms.js';
import type { Survey } from './fair-share.js';

/** The member lock's second key: partitions are 0..255. */
const MEMBER_KEY = -1;
/** A lock query unanswered for this long: the connection is treated as lost (its locks may be gone). */
const QUERY_TIMEOUT_MS = 5_000;
/** Connecting holds no lock yet, so it may take longer (a node starting under load). */
const CONNECT_TIMEOUT_MS = 15_000;
/**
 * TCP keepalive of this session on the server's side: a node whose host or network vanished
 * (no FIN ever comes) loses its session, so its locks, ~11 s after its last query (5 s idle,
 * then 3 probes 2 s apart). A node cut off but alive has given its partitions up by then: its
 * next query (1 s after the last) goes unanswered for QUERY_TIMEOUT_MS and drops the connection.
 */
const SESSION_SETTINGS = 'SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 2; SET tcp_keepalives_count = 3';

export class PartitionLocks {
  private client: pg.Client | null = null;
  private pid = 0;
  private readonly held = new Set<number>();
  /** One query at a time on the connection (node-postgres queues them, but warns). */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly postgresUrl: string,
    private readonly stream: string,
    private readonly log: Logger,
  ) {}

  private async connection(): Promise<pg.Client> {
    if (this.client) return this.client;
    const client = new pg.Client({ connectionString: this.postgresUrl, application_name: 'sightline-partition-locks', keepAlive: true, keepAliveInitialDelayMillis: 5_000 });
    client.on('error', (err) => {
      this.log.warn({ err }, 'partition lock connection lost; its partitions are released');
      this.dropConnection(client);
    });
    try {
      await withinMs(CONNECT_TIMEOUT_MS, client.connect());
      await withinMs(CONNECT_TIMEOUT_MS, client.query(SESSION_SETTINGS));
      const { rows } = await withinMs(CONNECT_TIMEOUT_MS, client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_advisory_lock_shared(hashtext($1), $2)', [this.stream, MEMBER_KEY]));
      this.pid = rows[0].pid;
    } catch (error) {
      void client.end().catch(() => undefined);
      throw error;
    }
    this.client = client;
    return client;
  }

  private dropConnection(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    this.held.clear();
    void client.end().catch(() => undefined);
  }

  /** A query on the lock connection; one that fails or hangs ends the connection (and so every lock). */
  private query<T extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<T[]> {
    const result = this.turn.then(() => this.queryNow<T>(sql, params));
    this.turn = result.catch(() => undefined);
    return result;
  }

  private async queryNow<T extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<T[]> {
    const client = await this.connection();
    try {
      return (await withinMs(QUERY_TIMEOUT_MS, client.query<T>(sql, params))).rows;
    } catch (error) {
      this.log.warn({ err: error }, 'partition lock query failed; letting go of the connection and its partitions');
      this.dropConnection(client);
      throw error;
    }
  }

  owns(partition: number): boolean {
    return this.held.has(partition);
  }

  /** Partitions this node holds now. */
  get partitions(): number[] {
    return [...this.held].sort((a, b) => a - b);
  }

  /** Which nodes live (hold the member lock or a partition) and how many partitions each holds; and which are free. */
  async survey(partitions: number): Promise<Survey & { free: number[] }> {
    const rows = await this.query<{ pid: number; key: string }>(
      `SELECT pid, objid::bigint AS key FROM pg_locks
        WHERE locktype = 'advisory' AND objsubid = 2 AND granted
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND classid::bigint = (hashtext($1)::bigint & 4294967295)`,
      [this.stream],
    );
    const held = new Map<number, number>([[this.pid, 0]]);
    const taken = new Set<number>();
    for (const row of rows) {
      const key = Number(row.key);
      const count = held.get(row.pid) ?? 0;
      // objid is the key's 32 bits unsigned: the member key (-1) reads as 2^32 - 1.
      if (key < partitions) taken.add(key);
      held.set(row.pid, key < partitions ? count + 1 : count);
    }
    const free = Array.from({ length: partitions }, (_, p) => p).filter((p) => !taken.has(p));
    return { self: this.pid, held, free };
  }

  /** Takes the partition when no node holds it; true when this node holds it now. */
  async tryTake(partition: number): Promise<boolean> {
    if (this.held.has(partition)) return true;
    const rows = await this.query<{ taken: boolean }>('SELECT pg_try_advisory_lock(hashtext($1), $2) AS taken', [this.stream, partition]);
    if (rows[0]?.taken) this.held.add(partition);
    return this.held.has(partition);
  }

  /** Lets go of one partition (its consumer has stopped): the next node to try takes it. */
  async release(partition: number): Promise<void> {
    if (!this.held.has(partition)) return;
    this.held.delete(partition);
    await this.query('SELECT pg_advisory_unlock(hashtext($1), $2)', [this.stream, partition]);
  }

  /** Gives every lock back (closing the connection does). */
  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    this.held.clear();
    await client?.end().catch(() => undefined);
  }
}
