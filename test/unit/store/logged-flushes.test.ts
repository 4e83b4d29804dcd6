/**
 * The event store's process reads flush records from the flush log's files (store/duckdb/logged-flushes.ts):
 * each record at its place, into one buffer; a record that is not all there fails with the
 * message by which the caller sends the bytes instead.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { LoggedFlushReader, UNREADABLE } from '../../../src/store/duckdb/logged-flushes.js';
import { newTempDir } from '../../helpers/server.js';

test('reads each record at its place, from one segment after another', () => {
  const dir = newTempDir();
  const first = path.join(dir, 'a.log');
  const second = path.join(dir, 'b.log');
  fs.writeFileSync(first, 'one\ntwo, longer\n');
  fs.writeFileSync(second, 'three\n');
  const reader = new LoggedFlushReader();
  const text = (at: { file: string; offset: number; length: number }) => Buffer.from(reader.read(at)).toString();
  try {
    assert.equal(text({ file: first, offset: 4, length: 12 }), 'two, longer\n');
    assert.equal(text({ file: first, offset: 0, length: 4 }), 'one\n');
    assert.equal(text({ file: second, offset: 0, length: 6 }), 'three\n');
  } finally {
    reader.close();
  }
});

test('a record cut short or a segment that is gone fails as unreadable', () => {
  const dir = newTempDir();
  const file = path.join(dir, 'torn.log');
  fs.writeFileSync(file, 'half a rec');
  const reader = new LoggedFlushReader();
  try {
    assert.throws(() => reader.read({ file, offset: 0, length: 20 }), (error: Error) => error.message.startsWith(UNREADABLE) && error.message.includes('ends before'));
    assert.throws(() => reader.read({ file: path.join(dir, 'gone.log'), offset: 0, length: 4 }), (error: Error) => error.message.startsWith(UNREADABLE) && error.message.includes('ENOENT'));
  } finally {
    reader.close();
  }
});
