/** DuckDB's query errors as the event store's engine-neutral failures (store/errors.ts). */
import { queryFailure } from '../errors.js';

/**
 * A database DuckDB invalidated (a checkpoint that failed, say for memory): every statement on it
 * fails until the store reopens it, which its next call does.
 */
// Its wording varies: 'Database "events_db" has been invalidated because checkpointing failed',
// '… The database has been invalidated.'
const INVALIDATED = /database (?:"[^"]*" )?has been invalidated|FATAL Error/i;

/** DuckDB's error classes that come from evaluating expressions over data. */
const EVALUATION_ERROR = /^(Conversion|Invalid Input|Out of Range|Binder|Not implemented) Error: /;

export const isInvalidated = (error: unknown) => INVALIDATED.test(error instanceof Error ? error.message : String(error));

/**
 * A write whose commit found no memory for its blocks ("Failed to commit: could not allocate
 * block…"). Seen with 1M persons at the 512 MB default: the instance kept its limit full (checkpoints
 * failing for memory let the WAL and what DuckDB keeps for it grow) and every later commit failed
 * the same way, for good; a new instance on the file replayed the WAL and wrote again at once.
 */
const COMMIT_OUT_OF_MEMORY = /Failed to commit: could not allocate/i;

export const isCommitOutOfMemory = (error: unknown) => COMMIT_OUT_OF_MEMORY.test(error instanceof Error ? error.message : String(error));

export function classifyQueryError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const { message } = error;
  if (/^Out of Memory Error/.test(message)) return queryFailure('QueryOutOfMemoryError', message);
  if (INVALIDATED.test(message)) return queryFailure('QueryStoreRecoveringError', message);
  if (/^INTERRUPT Error/.test(message)) return queryFailure('QueryInterruptedError', message);
  // First line only: DuckDB appends the statement, which is ours, not the user's.
  if (EVALUATION_ERROR.test(message)) return queryFailure('QueryEvaluationError', message.split('\n')[0]);
  return error;
}
