/**
 * A PostgreSQL 15 server of a test's own (initdb + pg_ctl on a temp folder and a free port), so
 * that a fault test may stop and start it without disturbing the cluster's server or other
 * tests. As root it runs as the `postgres` user, since initdb refuses root (as
 * scripts/cluster/lib/postgres.sh does).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { admin } from './postgres-databases.js';
import { newTempDir } from './server.js';

const run = promisify(execFile);
const PG_BIN = '/usr/lib/postgresql/15/bin';
const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** A port nobody listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

async function asOwner(command: string, args: string[]): Promise<void> {
  const [file, rest] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  await run(file, rest, { timeout: 60_000 });
}

export class PrivatePostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  /** The database `sightline` on this server. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/sightline`;
  }

  private get data(): string {
    return path.join(this.dir, 'data');
  }

  static async create(): Promise<PrivatePostgres> {
    const dir = newTempDir('sightline-pg-');
    if (asRoot) await run('chown', ['postgres:postgres', dir]);
    const server = new PrivatePostgres(dir, await freePort());
    await asOwner(`${PG_BIN}/initdb`, ['-D', server.data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']);
    await server.start();
    await admin(`postgres://postgres@127.0.0.1:${server.port}/postgres`, (client) => client.query('CREATE DATABASE sightline'));
    return server;
  }

  /** Starts the server and waits until it accepts connections. */
  async start(): Promise<void> {
    const options = `-p ${this.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${this.dir} -c fsync=off -c synchronous_commit=off -c max_connections=100`;
    await asOwner(`${PG_BIN}/pg_ctl`, ['-D', this.data, '-l', path.join(this.dir, 'server.log'), '-w', '-t', '60', '-o', options, 'start']);
  }

  /** Fast shutdown: open sessions are ended, as an operator's `pg_ctl stop` or a failover would. */
  async stop(): Promise<void> {
    await asOwner(`${PG_BIN}/pg_ctl`, ['-D', this.data, '-m', 'fast', '-w', 'stop']);
  }

  /** Stops it if it runs; for `after` hooks. */
  async dispose(): Promise<void> {
    if (fs.existsSync(path.join(this.data, 'postmaster.pid'))) await this.stop().catch(() => undefined);
  }
}
