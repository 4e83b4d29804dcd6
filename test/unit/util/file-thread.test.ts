import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { FileThread } from '../../../src/util/file-thread.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

test('the file thread stops after a quiet while, and the next call starts another on the same descriptors', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'file-thread-'));
  const files = new FileThread(150);
  try {
    const fd = await files.create(path.join(dir, 'log'));
    await files.append(fd, Buffer.from('abc'), 0);
    assert.equal(files.running, true);
    await sleep(80);
    await files.append(fd, Buffer.from('def'), 3); // a call postpones the stop
    await sleep(80);
    assert.equal(files.running, true);
    await sleep(400);
    assert.equal(files.running, false, 'stopped once quiet');
    await files.append(fd, Buffer.from('ghi'), 6);
    assert.equal(files.running, true);
    await files.close(fd);
    assert.equal(fs.readFileSync(path.join(dir, 'log'), 'utf8'), 'abcdefghi');
  } finally {
    await files.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('calls made while the idle thread is being ended are answered by the next one', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'file-thread-'));
  const files = new FileThread(20);
  try {
    const fd = await files.create(path.join(dir, 'log'));
    let position = 0;
    // Calls at moments around the stop: none may fail with "the file thread was stopped".
    for (let i = 0; i < 40; i++) {
      await sleep(i % 7 === 0 ? 25 : 5 + (i % 5) * 4);
      await files.append(fd, Buffer.from('x'), position++);
    }
    await files.close(fd);
    assert.equal(fs.readFileSync(path.join(dir, 'log'), 'utf8'), 'x'.repeat(40));
  } finally {
    await files.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
