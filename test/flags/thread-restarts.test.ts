/**
 * Starting flag threads (flag-threads.ts): a thread gets requests only once it is ready, and one
 * that cannot start (here: its data directory does not exist) must not be started again by every
 * request: requests are answered on the main thread, and the next attempt waits a pause that
 * doubles.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';

import type { FlagAnswer } from '../../src/flags/remote/answer.js';
import type { FlagAnswerer } from '../../src/flags/remote/answerer.js';
import type { FlagHttpRequest } from '../../src/flags/remote/request.js';
import { FlagThreads } from '../../src/flags/threads/flag-threads.js';
import { newTempDir } from '../helpers/server.js';

/** The main thread's answerer, reduced to noting which requests it answered (by their paths). */
function mainThread(): { fallback: FlagAnswerer; answered: string[] } {
  const answered: string[] = [];
  const fallback: FlagAnswerer = {
    answer: async (_route, input) => {
      answered.push(input.path);
      return { status: 200, body: Buffer.from('{}') } as unknown as FlagAnswer;
    },
    close: async () => undefined,
  };
  return { fallback, answered };
}

/** A request with an empty body: a flag thread answers it 400. */
const request = (path: string): FlagHttpRequest => ({ path, query: {}, contentType: 'application/json', contentEncoding: undefined, location: null, body: new Uint8Array() });

const threadData = (dataDir: string) => ({ dataDir, maxDecodedBytes: 1_000_000, logLevel: 'silent' as const, changeStamps: new SharedArrayBuffer(4) });

test('a starting flag thread gets requests only once it is ready; until then the main thread answers them', async () => {
  const { fallback, answered } = mainThread();
  const threads = new FlagThreads(1, threadData(newTempDir()), fallback, pino({ level: 'silent' }));
  try {
    assert.equal((await threads.answer('flags', request('early'))).status, 200);
    assert.deepEqual(answered, ['early'], 'answered on the main thread while the thread starts');
    const deadline = Date.now() + 20_000;
    let answer: FlagAnswer | undefined;
    while (Date.now() < deadline) {
      const onMain = answered.length;
      answer = await threads.answer('flags', request('later'));
      if (answered.length === onMain) break; // not answered on the main thread
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(answer?.status, 400, 'the ready thread answers');
  } finally {
    await threads.close();
  }
});

test('a flag thread that dies at start is retried after a pause, and requests are answered meanwhile', async () => {
  const stops: { restartPauseMs: number }[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      const line = JSON.parse(String(chunk));
      if (/a flag thread stopped/.test(line.msg)) stops.push(line);
      done();
    },
  });
  const { fallback, answered } = mainThread();
  const data = threadData(`${newTempDir()}/missing/dir`);
  const threads = new FlagThreads(1, data, fallback, pino({ level: 'error' }, sink));
  const stopsReach = async (count: number) => {
    const deadline = Date.now() + 20_000;
    while (stops.length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  try {
    // Threads start with the first request, which the main thread answers meanwhile.
    await threads.answer('flags', request('first'));
    await stopsReach(1);
    assert.equal(stops.length, 1, 'the first thread died');
    assert.equal(stops[0].restartPauseMs, 1_000);

    // Within the pause: answered on the main thread at once, no new thread.
    for (let i = 0; i < 5; i++) await threads.answer('flags', request(`u${i}`));
    assert.deepEqual(answered, ['first', 'u0', 'u1', 'u2', 'u3', 'u4']);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(stops.length, 1, 'no thread was started during the pause');

    // After it: one new attempt, which dies too, and the pause doubles.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await threads.answer('flags', request('after'));
    assert.equal(answered.at(-1), 'after', 'answered on the main thread while the new thread starts');
    await stopsReach(2);
    assert.equal(stops.length, 2);
    assert.equal(stops[1].restartPauseMs, 2_000);
  } finally {
    await threads.close();
  }
});
