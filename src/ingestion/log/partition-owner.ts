/**
 * Partition ownership among nodes through PostgreSQL session advisory locks: a node consumes a
 * partition while its connection holds that partition's lock. A node that dies loses its
 * connection, so its locks, and the next node to try takes the partitions over; no membership
 * protocol of our own. The locks are keyed by the stream's name so that streams do not collide.
 */
import pg from 'pg';
import type { Logger } from '../../kernel/logger.js';

export class PartitionLocks {
  private client: pg.Client | null = null;
  private readonly held = new Set<number>();
  /** Called when the connection is lost: every lock it held is gone. */
  onLost: () => void = () => {};

  constructor(
    private readonly postgresUrl: string,
    private readonly stream: string,
    private readonly log: Logger,
  ) {}

  private async connection(): Promise<pg.Client> {
    if (this.client) return this.client;
    const client = new pg.Client({ connectionString: this.postgresUrl, application_name: 'sightline-partition-locks' });
    client.on('error', (err) => {
      this.log.warn({ err }, 'partition lock connection lost; its partitions are released');
      this.dropConnection(client);
    });
    await client.connect();
    this.client = client;
    return client;
  }

  private dropConnection(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    this.held.clear();
    void client.end().catch(() => undefined);
    this.onLost();
  }

  owns(partition: number): boolean {
    return this.held.has(partition);
  }

  /** Takes the partition when no node holds it; true when this node holds it now. */
  async tryTake(partition: number): Promise<boolean> {
    if (this.held.has(partition)) return true;
    const client = await this.connection();
    const { rows } = await client.query<{ taken: boolean }>('SELECT pg_try_advisory_lock(hashtext($1), $2) AS taken', [this.stream, partition]);
    if (rows[0]?.taken) this.held.add(partition);
    return this.held.has(partition);
  }

  /** Gives every lock back (closing the connection does). */
  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    this.held.clear();
    await client?.end().catch(() => undefined);
  }
}
