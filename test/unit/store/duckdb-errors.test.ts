/**
 * Which DuckDB errors make the event store reopen its instance: an invalidated database, and a
 * commit that found no memory (the instance that ran out kept failing every commit); not a
 * query that ran out of memory, which fails alone.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isCommitOutOfMemory, isInvalidated } from '../../../src/store/duckdb/query-errors.js';

test('a commit without memory and an invalidated database are told apart from a query without memory', () => {
  const commit = new Error('TransactionContext Error: Failed to commit: could not allocate block of size 256.0 KiB (65.5 MiB/65.8 MiB used)');
  assert.equal(isCommitOutOfMemory(commit), true);
  assert.equal(isInvalidated(commit), false);
  assert.equal(isInvalidated(new Error('FATAL Error: Failed: database has been invalidated because of a previous fatal error.')), true);
  assert.equal(isInvalidated(new Error('Database "events_db" has been invalidated because checkpointing failed')), true);
  const query = new Error('Out of Memory Error: could not allocate block of size 256.0 KiB (64.0 MiB/64.0 MiB used)');
  assert.equal(isCommitOutOfMemory(query), false);
  assert.equal(isInvalidated(query), false);
});
