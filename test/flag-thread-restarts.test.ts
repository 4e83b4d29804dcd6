/**
 * A flag thread that cannot start (here: its data directory does not exist) must not be started
 * again by every request: requests are answered on the main thread, and the next attempt waits
 * a pause that doubles (flag-threads.ts).
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';

import type { FlagAnswer } from '../src/http/flags/answer.js';
import type { FlagAnswerer } from '../src/http/flags/answerer.js';
import type { FlagHttpRequest } from '../src/http/flags/request.js';
import { FlagThreads } from '../src/http/flags/flag-threads.js';
import { newTempDir } from './helpers/server.js';

test('a flag thread that dies at start is retried after a pause, and requests are answered meanwhile', async () => {
  const stops: { restartPauseMs: number }[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      const line = JSON.parse(String(chunk));
      if (/a flag thread stopped/.test(line.msg)) stops.push(line);
      done();
    },
  });
  const answered: string[] = [];
  // The main thread's answerer, reduced to noting which request it answered (by its path).
  const fallback: FlagAnswerer = {
    answer: async (_route, input) => {
      answered.push(input.path);
      return { status: 200, body: Buffer.from('{}') } as unknown as FlagAnswer;
    },
    close: async () => undefined,
  };
  const request = (path: string): FlagHttpRequest => ({ path, query: {}, contentType: 'application/json', contentEncoding: undefined, ip: null, body: new Uint8Array() });
  const data = { dataDir: `${newTempDir()}/missing/dir`, maxDecodedBytes: 1_000_000, logLevel: 'silent' as const, changeStamps: new SharedArrayBuffer(4) };
  const threads = new FlagThreads(1, data, null, fallback, pino({ level: 'error' }, sink));
  try {
    // No thread before the first request; that request starts one, which dies, and is answered on the main thread.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(stops.length, 0, 'no thread starts before a request needs it');
    await threads.answer('flags', request('first'));
    assert.deepEqual(answered, ['first']);
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
    assert.equal(answered.at(-1), 'after', 'answered on the main thread once the new thread died');
    assert.equal(stops.length, 2);
    assert.equal(stops[1].restartPauseMs, 2_000);
  } finally {
    await threads.close();
  }
});
