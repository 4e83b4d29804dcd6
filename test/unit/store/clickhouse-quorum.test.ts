/** Mirror inserts refused because another node's quorum insert runs are retried; other failures are not. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { retryWhileQuorumBusy } from '../../../src/store/clickhouse/quorum.js';

const busy = () => new Error('Code: 286, e.displayText() = DB::Exception: Another quorum insert has been already started, e.what() = DB::Exception\n');

test('a refusal for a running quorum insert is retried until the insert goes through', async () => {
  let attempts = 0;
  const result = await retryWhileQuorumBusy(async () => {
    attempts += 1;
    if (attempts < 3) throw busy();
    return 'written';
  });
  assert.equal(result, 'written');
  assert.equal(attempts, 3);
});

test('the parsed code of a newer client error counts too', async () => {
  let attempts = 0;
  await retryWhileQuorumBusy(async () => {
    attempts += 1;
    if (attempts === 1) throw Object.assign(new Error('quorum'), { code: '286' });
  });
  assert.equal(attempts, 2);
});

test('any other failure is thrown at once', async () => {
  let attempts = 0;
  const other = new Error('Code: 285, e.displayText() = DB::Exception: Number of alive replicas (1) is less than requested quorum (2)');
  await assert.rejects(
    retryWhileQuorumBusy(async () => {
      attempts += 1;
      throw other;
    }),
    (error) => error === other,
  );
  assert.equal(attempts, 1);
});
