/**
 * WorkerCalls (util/worker-calls.ts): a thread being terminated keeps the process alive until it
 * has exited, even when an answer to an earlier call arrives meanwhile (it used to unref the
 * thread, and a flush-log test was cancelled now and then with "Promise resolution is still
 * pending but the event loop has already resolved").
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/late-answer.ts');

test('stopping a thread whose answer is still on its way resolves, and the process waits for it', () => {
  const result = spawnSync(process.execPath, ['--import', 'tsx', fixture, '10'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(result.status, 0, `exit ${result.status}: ${result.stderr}`);
  assert.equal(result.stdout.trim(), 'done');
});
