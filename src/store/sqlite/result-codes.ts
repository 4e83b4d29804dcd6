/** SQLite's primary result codes by number, spelled as its C API does (an extended code's low byte is its primary code). */
const PRIMARY_CODES = [
  'SQLITE_OK', 'SQLITE_ERROR', 'SQLITE_INTERNAL', 'SQLITE_PERM', 'SQLITE_ABORT', 'SQLITE_BUSY', 'SQLITE_LOCKED',
  'SQLITE_NOMEM', 'SQLITE_READONLY', 'SQLITE_INTERRUPT', 'SQLITE_IOERR', 'SQLITE_CORRUPT', 'SQLITE_NOTFOUND',
  'SQLITE_FULL', 'SQLITE_CANTOPEN', 'SQLITE_PROTOCOL', 'SQLITE_EMPTY', 'SQLITE_SCHEMA', 'SQLITE_TOOBIG',
  'SQLITE_CONSTRAINT', 'SQLITE_MISMATCH', 'SQLITE_MISUSE', 'SQLITE_NOLFS', 'SQLITE_AUTH', 'SQLITE_FORMAT',
  'SQLITE_RANGE', 'SQLITE_NOTADB', 'SQLITE_NOTICE', 'SQLITE_WARNING',
];

/** SQLITE_CONSTRAINT_UNIQUE, the extended code of a UNIQUE or PRIMARY KEY clash. */
const CONSTRAINT_UNIQUE = 2067;

/**
 * The code to judge a store error by. node:sqlite's errors all carry the code ERR_SQLITE_ERROR
 * and SQLite's numeric result code in `errcode`: that becomes its name (SQLITE_CONSTRAINT, ...).
 * A value SQLite cannot bind (ERR_INVALID_ARG_*) is an error on the data, like a TypeError, so
 * it gets no code. Any other error keeps its own.
 */
export function storeErrorCode(error: unknown): unknown {
  const { code, errcode } = (error ?? {}) as { code?: unknown; errcode?: unknown };
  if (code === 'ERR_SQLITE_ERROR' && typeof errcode === 'number') return PRIMARY_CODES[errcode & 0xff] ?? `SQLITE_${errcode}`;
  if (code === 'ERR_INVALID_ARG_TYPE' || code === 'ERR_INVALID_ARG_VALUE') return undefined;
  return code;
}

export const isUniqueViolation = (error: unknown): boolean => (error as { errcode?: unknown } | null)?.errcode === CONSTRAINT_UNIQUE;
