/**
 * Cache invalidation across nodes through PostgreSQL's LISTEN/NOTIFY: a node that changes flags,
 * projects or definitions publishes it, and every node, itself included, drops what it kept. One
 * connection per process listens; when it is lost, notifications may have been missed, so the
 * listeners are told to forget everything once it is back.
 */
import pg from 'pg';
import type { Logger } from '../../kernel/logger.js';
import type { ChangeFeed, MetaChange } from '../types.js';
import type { PgPool } from './database.js';

const CHANNEL = 'sightline_changes';
const RECONNECT_MS = 1_000;

export class PostgresChangeFeed implements ChangeFeed {
  private readonly listeners: ((change: MetaChange) => void)[] = [];
  private client: pg.Client | null = null;
  private closed = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly url: string,
    private readonly pool: PgPool,
    private readonly log?: Logger,
  ) {}

  async publish(change: MetaChange): Promise<void> {
    await this.pool.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify(change)]);
  }

  subscribe(listener: (change: MetaChange) => void): void {
    this.listeners.push(listener);
    if (!this.client && !this.timer) void this.listen(false);
  }

  private emit(change: MetaChange): void {
    for (const listener of this.listeners) listener(change);
  }

  private async listen(reconnecting: boolean): Promise<void> {
    this.timer = null;
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.url });
    const lost = () => {
      if (this.client !== client) return;
      this.client = null;
      client.end().catch(() => {});
      this.retry();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      try {
        this.emit(JSON.parse(message.payload ?? '') as MetaChange);
      } catch {
        this.emit({ kind: 'all' });
      }
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      if (this.closed) {
        await client.end();
        return;
      }
      this.client = client;
      // What changed while nobody listened is unknown.
      if (reconnecting) this.emit({ kind: 'all' });
    } catch (error) {
      this.log?.warn({ err: error }, 'cannot listen for metadata changes; retrying');
      client.end().catch(() => {});
      this.retry();
    }
  }

  private retry(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => void this.listen(true), RECONNECT_MS);
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }
}
