import { DatabaseSync, enhance, type DatabaseSyncInstance, type EnhancedDatabaseSync } from '@photostructure/sqlite';
import { migrations } from './migrations.js';

/**
 * node:sqlite's API from a package that ships its compiled binary for every platform inside
 * itself (nothing compiles at install, unlike better-sqlite3); `enhance` adds better-sqlite3's
 * `transaction` (savepoints when nested), `pragma` and `pluck`, which the stores use.
 */
export type Sqlite = EnhancedDatabaseSync<DatabaseSyncInstance>;
export type SqliteStatement = ReturnType<Sqlite['prepare']>;

/** Opens the metadata database in WAL mode and applies pending migrations. */
export function openSqlite(file: string): Sqlite {
  const db = enhance(new DatabaseSync(file));
  db.pragma('journal_mode = WAL');
  // FULL: an acknowledged flush survives power loss, not only a process crash; group commit
  // keeps the number of fsyncs small.
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // 16 MB of page cache, as better-sqlite3 compiled it in (this binding's default is 2 MB).
  db.pragma('cache_size = -16000');
  addFoldCase(db);
  migrate(db);
  return db;
}

/**
 * Case folding for every script (SQLite's own LIKE and lower() fold only ASCII), for searches
 * that ignore case as PostgreSQL's ILIKE does. Exported for the benchmark that runs the same SQL.
 */
export function addFoldCase(db: DatabaseSyncInstance): void {
  db.function('fold_case', { deterministic: true }, (text: unknown) => (typeof text === 'string' ? text.toLowerCase() : text));
}

function migrate(db: Sqlite): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set(
    (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((row) => row.version),
  );
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        migration.version,
        migration.name,
        new Date().toISOString(),
      );
    })();
  }
}

export { isUniqueViolation } from './result-codes.js';
export { toBool } from '../rows.js';
export const parseJson = <T>(text: unknown, fallback: T): T => {
  if (typeof text !== 'string') return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
};
