#!/usr/bin/env node
/** Command line: `serve` (default), `init`, `migrate`, `export`, `import`, `users add`, `users set-password`. */
import { Command, InvalidArgumentError } from 'commander';
import { beginOpeningStores, storeSettings } from './app-stores.js';
import { addUserToOrganization, createTenant } from './tenancy/bootstrap.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger } from './kernel/logger.js';
import { setPasswordFromInput } from './sessions/cli.js';
import { limitHeapGrowth } from './util/idle-collect.js';
import { migrateStores, openMetaStore, openStores } from './store/index.js';
import { runTransfer } from './transfer/cli.js';
import { UnfinishedImportError } from './transfer/marker.js';
import { migrateStream } from './ingestion/log/index.js';
import { DataDirError, EventStoreUnreachableError, MetaStoreUnreachableError } from './store/errors.js';
import type { MembershipLevel, MetaStore } from './store/types.js';

/** A setting's error ends the process with its message, not a stack trace. */
function exitOnConfigError(error: unknown): never {
  if (error instanceof ConfigError) {
    process.stderr.write(`Configuration error: ${error.message}\n`);
    process.exit(2);
  }
  throw error;
}

/** So does a data folder or a metadata database that cannot be used: one line with the place, the cause and the fix. */
function exitOnStartError(error: unknown): never {
  if (error instanceof DataDirError || error instanceof MetaStoreUnreachableError || error instanceof EventStoreUnreachableError || error instanceof UnfinishedImportError) {
    process.stderr.write(`${error.advice}\n`);
    process.exit(1);
  }
  exitOnConfigError(error);
}

function config(): Config {
  try {
    return loadConfig();
  } catch (error) {
    exitOnConfigError(error);
  }
}

/** CLI commands only need the metadata store (SQLite allows a running server alongside). */
function openMeta(cfg: Config): Promise<MetaStore> {
  return openMetaStore(metaSettings(cfg));
}

const metaSettings = (cfg: Config) => ({ dataDir: cfg.dataDir, postgresUrl: cfg.postgresUrl });

async function serve(): Promise<void> {
  const cfg = config();
  const log = createLogger(cfg.logLevel);
  limitHeapGrowth(cfg.memory.heapGrowingPercent);
  // The stores open (DuckDB loading on its own thread) while the service's modules load.
  const opening = beginOpeningStores(cfg);
  const { startApp } = await import('./app.js');
  const running = await startApp(cfg, log, opening).catch(exitOnStartError);
  let signals = 0;
  const shutdown = (signal: string) => {
    signals += 1;
    if (signals > 1) return;
    log.info({ signal }, 'shutting down: draining requests and flushing events');
    const timer = setTimeout(() => {
      log.error('shutdown took too long; exiting');
      // Not process.exit(): it waits for every worker thread to stop, and a thread held in a
      // native call (DuckDB closing under a running query) never does, so the process hung on.
      // What was acknowledged is in the flush log and is replayed at the next start.
      process.kill(process.pid, 'SIGKILL');
    }, cfg.shutdownTimeoutMs);
    running.stop().then(
      () => {
        clearTimeout(timer);
        log.info('stopped cleanly');
        process.exit(0);
      },
      (error) => {
        log.error({ err: error }, 'shutdown failed');
        // The logger writes asynchronously and exit() would drop the line: say it on stderr too.
        process.stderr.write(`shutdown failed: ${(error as Error)?.stack ?? String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

const level = (value: string): MembershipLevel => {
  const aliases: Record<string, MembershipLevel> = { member: 1, admin: 8, owner: 15, '1': 1, '8': 8, '15': 15 };
  const parsed = aliases[value.toLowerCase()];
  if (!parsed) throw new InvalidArgumentError('level must be member (1), admin (8) or owner (15)');
  return parsed;
};

const program = new Command().name('sightline').description('Self-hosted product analytics');

program.command('serve', { isDefault: true }).description('start the service').action(serve);

program
  .command('init')
  .description('create an organization with a project, an owner and their keys')
  .option('--org <name>', 'organization name', 'New Organization')
  .option('--project <name>', 'project name', 'Default Project')
  .option('--email <email>', 'owner e-mail', 'admin@sightline.local')
  .option('--json', 'print machine-readable JSON')
  .action(async (options: { org: string; project: string; email: string; json?: boolean }) => {
    const meta = await openMeta(config());
    const created = await createTenant(meta, { organizationName: options.org, projectName: options.project, email: options.email });
    await meta.close();
    const result = {
      organization_id: created.organization.id,
      project_id: created.project.id,
      user_email: created.user.email,
      project_api_key: created.projectApiKey,
      personal_api_key: created.personalApiKey,
    };
    process.stdout.write(options.json ? `${JSON.stringify(result)}\n` : `${Object.entries(result).map(([k, v]) => `${k}: ${v}`).join('\n')}\n`);
  });

program
  .command('migrate')
  .description('apply pending schema migrations of the metadata store (the server also does at start)')
  .action(async () => {
    try {
      process.stdout.write(`${await migrateStores({ ...metaSettings(config()), clickhouse: config().clickhouse })}\n`);
      const nats = config().nats;
      if (nats) process.stdout.write(`${await migrateStream(nats)}\n`);
    } catch (error) {
      process.stderr.write(`migration failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    }
  });

program
  .command('export')
  .description('write the metadata and events of the configured stores into an archive directory (stop the server first)')
  .requiredOption('--out <dir>', 'a new or empty directory')
  .option('--gzip', 'compress the NDJSON files')
  .action(async (options: { out: string; gzip?: boolean }) => {
    const cfg = config();
    const source = { metadata: cfg.postgresUrl ? 'postgresql' : 'sqlite', events: cfg.clickhouse ? 'clickhouse' : 'duckdb' };
    process.exitCode = await runTransfer({ kind: 'export', dir: options.out, gzip: options.gzip ?? false, source }, () => openStores(storeSettings(cfg)));
  });

program
  .command('import')
  .description('write an archive made by `sightline export` into the configured stores, which must be empty')
  .requiredOption('--from <dir>', 'the archive directory')
  .action(async (options: { from: string }) => {
    const cfg = config();
    process.exitCode = await runTransfer({ kind: 'import', dir: options.from, dataDir: cfg.dataDir }, () => openStores(storeSettings(cfg)));
  });

const users = program.command('users').description('manage users');

users
  .command('add')
  .description('add a user to an organization and print a new personal API key')
  .requiredOption('--org <id>', 'organization id')
  .requiredOption('--email <email>', 'e-mail of the user')
  .option('--level <level>', 'member, admin or owner (1, 8, 15)', level, 1 as MembershipLevel)
  .option('--json', 'print machine-readable JSON')
  .action(async (options: { org: string; email: string; level: MembershipLevel; json?: boolean }) => {
    const meta = await openMeta(config());
    try {
      const { user, personalApiKey } = await addUserToOrganization(meta, { organizationId: options.org, email: options.email, level: options.level });
      const result = { user_uuid: user.uuid, email: user.email, level: options.level, personal_api_key: personalApiKey };
      process.stdout.write(options.json ? `${JSON.stringify(result)}\n` : `${Object.entries(result).map(([k, v]) => `${k}: ${v}`).join('\n')}\n`);
    } catch (error) {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    } finally {
      await meta.close();
    }
  });

users
  .command('set-password')
  .description("set a user's web app password, read from standard input (e.g. printf '%s' \"$PASSWORD\" | sightline users set-password --email …); ends their sessions")
  .requiredOption('--email <email>', 'e-mail of the user')
  .action(async (options: { email: string }) => {
    if (process.stdin.isTTY) process.stderr.write('Type the new password, then Enter and Ctrl-D (it is shown as you type):\n');
    const meta = await openMeta(config());
    try {
      process.stdout.write(`${await setPasswordFromInput(meta, options.email, process.stdin)}\n`);
    } catch (error) {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    } finally {
      await meta.close();
    }
  });

await program.parseAsync(process.argv);
