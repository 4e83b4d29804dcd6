/** Which store errors are about a flush's content (the flush isolates the event) and which about the store (it retries). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { refusesContent } from '../../../src/store/errors.js';
import { storeUnavailable } from '../../../src/kernel/errors.js';

const withCode = (code: string) => Object.assign(new Error(code), { code });

test('SQLite: constraint, mismatch, too big and range refuse content; I/O and full disks do not', () => {
  for (const code of ['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_MISMATCH', 'SQLITE_TOOBIG', 'SQLITE_RANGE']) assert.equal(refusesContent(withCode(code)), true, code);
  for (const code of ['SQLITE_IOERR_WRITE', 'SQLITE_FULL', 'SQLITE_BUSY', 'SQLITE_READONLY']) assert.equal(refusesContent(withCode(code)), false, code);
});

test('PostgreSQL: data exceptions, constraint violations and program limits refuse content; lost connections and shutdowns do not', () => {
  // 22021 bad byte sequence, 22P02 bad text representation, 23505 unique violation, 54000 program limit.
  for (const code of ['22021', '22P02', '23505', '54000']) assert.equal(refusesContent(withCode(code)), true, code);
  // 08006 connection failure, 57P01 admin shutdown, 53300 too many connections, 40P01 deadlock, and a system error.
  for (const code of ['08006', '57P01', '53300', '40P01', 'ECONNREFUSED']) assert.equal(refusesContent(withCode(code)), false, code);
});

test('an error without a code is a program error on the data: content', () => {
  assert.equal(refusesContent(new TypeError('x is undefined')), true);
  assert.equal(refusesContent('not an error'), false);
});

test('a store marked unreachable is never content, even without a code (node-postgres: "Connection terminated unexpectedly")', () => {
  const lost = storeUnavailable('MetaStoreUnavailableError', new Error('Connection terminated unexpectedly'));
  assert.equal(refusesContent(lost), false);
});

test('SQLite errors as node:sqlite throws them: judged by the name of their numeric result code', () => {
  const sqlite = (errcode: number) => Object.assign(new Error('sqlite'), { code: 'ERR_SQLITE_ERROR', errcode });
  // 2067 SQLITE_CONSTRAINT_UNIQUE, 20 SQLITE_MISMATCH, 18 SQLITE_TOOBIG, 25 SQLITE_RANGE.
  for (const errcode of [2067, 20, 18, 25]) assert.equal(refusesContent(sqlite(errcode)), true, String(errcode));
  // 778 SQLITE_IOERR_WRITE, 13 SQLITE_FULL, 5 SQLITE_BUSY, 8 SQLITE_READONLY.
  for (const errcode of [778, 13, 5, 8]) assert.equal(refusesContent(sqlite(errcode)), false, String(errcode));
  // A value SQLite cannot bind is an error on the data.
  assert.equal(refusesContent(Object.assign(new TypeError('Provided value cannot be bound'), { code: 'ERR_INVALID_ARG_TYPE' })), true);
});
