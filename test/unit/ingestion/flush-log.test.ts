/**
 * The flush log on real files: what was appended is read back in order after a restart, a
 * torn or damaged tail is ignored, an undone append is gone, full segments are sealed (after the
 * metadata store was made durable) and deleted only once both stores hold all of their flushes.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import { FlushLog } from '../../../src/ingestion/flush-log.js';
import { createLogger } from '../../../src/kernel/logger.js';
import { decodeFlushRecord } from '../../../src/store/flush-record.js';
import { encodedFlush, flushChanges } from '../../helpers/flushes.js';
import { newTempDir } from '../../helpers/server.js';

const log = createLogger('silent');

const flush = encodedFlush;
const changes = flushChanges;

const tempDir = () => newTempDir('sightline-flush-log-');
const segments = (dir: string) => fs.readdirSync(dir).filter((name) => name.endsWith('.log')).sort();

async function open(dir: string, options: { segmentBytes?: number; beforeSeal?: () => Promise<void> } = {}) {
  return FlushLog.open(dir, { beforeSeal: options.beforeSeal ?? (async () => undefined), segmentBytes: options.segmentBytes }, log);
}

describe('flush records', () => {
  test('round-trip: changes, events and properties text survive, uuids are derived from the events', () => {
    const encoded = flush(7, 2);
    assert.equal(encoded.seq, 7);
    assert.equal(encoded.events, 2);
    assert.equal(encoded.bytes.indexOf(0x0a), encoded.bytes.length - 1, 'one line, ended by its only newline');
    const record = decodeFlushRecord(encoded.bytes);
    assert.deepEqual({ ...record.changes, eventUuids: [] }, changes(7));
    assert.deepEqual(record.changes.eventUuids, record.events.map((e) => ({ project_id: 1, uuid: e.uuid })));
    assert.equal(JSON.parse(record.events[1].properties_json).note, 'line\nbreak "quoted" ünïcode 🎉');
    assert.equal(record.events[1].timestamp.toISOString(), '2026-01-01T00:00:07.001Z');
  });

  test('anything but a whole record of this format is refused', () => {
    const bytes = flush(1).bytes;
    assert.throws(() => decodeFlushRecord(bytes.subarray(0, bytes.length - 10)));
    const withHeader = (header: string) => Buffer.from(`${Buffer.byteLength(header)} ${header}\n`);
    assert.doesNotThrow(() => decodeFlushRecord(withHeader('{"format":2,"changes":{"flushSeq":1},"events":[]}')));
    assert.throws(() => decodeFlushRecord(withHeader('{"format":3,"changes":{"flushSeq":1},"events":[]}')), /format/);
    assert.throws(() => decodeFlushRecord(withHeader('{"format":2,"changes":{},"events":[]}')), /not a flush record/);
    assert.throws(() => decodeFlushRecord(Buffer.from('{"format":2,"changes":{"flushSeq":1},"events":[]}\n')), /not a flush record/);
    assert.throws(() => decodeFlushRecord(withHeader('{"format":2,"changes":{"flushSeq":1},"events":[[1,"u","e","d",null,0,0,"",["","","","",""],5]]}')), /length/);
  });
});

describe('FlushLog', () => {
  test('what was appended is read back in order after a restart, then released', async () => {
    const dir = tempDir();
    const { flushLog, records } = await open(dir);
    assert.equal(records.length, 0);
    for (const seq of [1, 2, 3]) await flushLog.append(flush(seq));
    // An unclean stop: no close.
    const reopened = await open(dir);
    assert.deepEqual(reopened.records.map((r) => r.encoded.seq), [1, 2, 3]);
    assert.deepEqual(reopened.records.map((r) => r.changes.flushSeq), [1, 2, 3]);
    assert.deepEqual(Buffer.from(reopened.records[1].encoded.bytes), Buffer.from(flush(2).bytes));
    assert.equal(reopened.records[2].encoded.events, 3);
    // The old segment is sealed; new appends go to a new one.
    await reopened.flushLog.append(flush(4));
    assert.equal(segments(dir).length, 2);
    reopened.flushLog.release(3);
    assert.deepEqual(segments(dir), ['0000000000000004.log']);
    await reopened.flushLog.close(4);
    assert.deepEqual(segments(dir), [], 'a clean stop with both stores up to date leaves nothing behind');
  });

  test('a torn tail (an append cut short by a crash) is ignored, whole records before it are kept', async () => {
    const dir = tempDir();
    const { flushLog } = await open(dir);
    await flushLog.append(flush(1));
    await flushLog.append(flush(2));
    const [name] = segments(dir);
    const partial = flush(3).bytes.subarray(0, 40);
    fs.appendFileSync(path.join(dir, name), partial);
    const { records } = await open(dir);
    assert.deepEqual(records.map((r) => r.encoded.seq), [1, 2]);
  });

  test('a damaged line ends its segment; a segment with nothing whole in it is deleted', async () => {
    const dir = tempDir();
    const { flushLog } = await open(dir);
    await flushLog.append(flush(1));
    const [name] = segments(dir);
    fs.appendFileSync(path.join(dir, name), Buffer.concat([Buffer.from('{"format":1,"chan\0\0\0\n'), flush(3).bytes]));
    fs.writeFileSync(path.join(dir, '0000000000000009.log'), 'garbage without a newline');
    const { records } = await open(dir);
    assert.deepEqual(records.map((r) => r.encoded.seq), [1]);
    assert.deepEqual(segments(dir), [name]);
  });

  test('an undone append (its metadata commit failed) is not read back', async () => {
    const dir = tempDir();
    const { flushLog } = await open(dir);
    await flushLog.append(flush(1));
    await flushLog.append(flush(2));
    await flushLog.undoLastAppend();
    await flushLog.append(flush(3));
    const { records } = await open(dir);
    assert.deepEqual(records.map((r) => r.encoded.seq), [1, 3]);
  });

  test('full segments are sealed after the metadata store was made durable, and released only when wholly taken', async () => {
    const dir = tempDir();
    const sealedAfter: number[] = [];
    let appended = 0;
    const size = flush(1).bytes.length;
    const { flushLog } = await open(dir, { segmentBytes: size * 2, beforeSeal: async () => void sealedAfter.push(appended) });
    for (let seq = 1; seq <= 5; seq++) {
      await flushLog.append(flush(seq));
      appended = seq;
    }
    assert.deepEqual(segments(dir), ['0000000000000001.log', '0000000000000003.log', '0000000000000005.log']);
    assert.deepEqual(sealedAfter, [2, 4], 'each segment is sealed once full, before the next append');
    flushLog.release(3); // flush 3 is taken, flush 4 (in the same segment) is not
    assert.deepEqual(segments(dir), ['0000000000000003.log', '0000000000000005.log']);
    flushLog.release(4);
    assert.deepEqual(segments(dir), ['0000000000000005.log'], 'the open segment stays until it is sealed');
    assert.equal(flushLog.bytes, size);
  });
});
