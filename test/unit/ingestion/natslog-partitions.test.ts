/** The NATS log's pure parts: partitioning keeps a person's events together and in order; the wire form round-trips; the settings. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { decodeBatch, encodeBatch, encodeInParts } from '../../../src/ingestion/log/batch-codec.js';
import { EventTooLargeError } from '../../../src/ingestion/log/types.js';
import { partitionOf, partitionsMergedWith, splitByPartition } from '../../../src/ingestion/log/partitions.js';
import type { PendingEvent } from '../../../src/ingestion/plan/plan.js';
import { loadConfig, type Machine } from '../../../src/config.js';

const arbEvent = fc.record({
  projectId: fc.integer({ min: 1, max: 5 }),
  anonymizeIps: fc.boolean(),
  event: fc.record({
    uuid: fc.uuid(),
    event: fc.string({ minLength: 1, maxLength: 10 }),
    distinctId: fc.constantFrom('a', 'b', 'c', 'd', 'é', 'user-42'),
    properties: fc.dictionary(fc.string({ maxLength: 5 }), fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.boolean())),
    timestamp: fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }),
    elementsChain: fc.string({ maxLength: 10 }),
  }),
}) as fc.Arbitrary<PendingEvent>;

test('splitting by partition keeps every event once, each person in one partition, in the batch order', () => {
  fc.assert(
    fc.property(fc.array(arbEvent, { maxLength: 40 }), fc.integer({ min: 1, max: 16 }), (events, partitions) => {
      const groups = splitByPartition(events, partitions);
      const flat = [...groups.values()].flat();
      assert.equal(flat.length, events.length);
      for (const [p, group] of groups) {
        assert.ok(p >= 0 && p < partitions);
        for (const e of group) assert.equal(partitionOf(e, partitions), p);
        // The reference: the batch filtered to this partition, in order.
        assert.deepEqual(group, events.filter((e) => partitionOf(e, partitions) === p));
      }
    }),
  );
});

test("a group's merges reach the partitions of their other distinct ids, its own left out", () => {
  const event = (name: string, distinctId: string, properties: Record<string, unknown>) =>
    ({ projectId: 1, anonymizeIps: false, event: { uuid: '0', event: name, distinctId, properties, timestamp: new Date(0), elementsChain: '' } }) as PendingEvent;
  fc.assert(
    fc.property(fc.constantFrom('a', 'b', 'c', 'd', 'é', 'user-42'), fc.constantFrom('a', 'b', 'c', 'd', 'é', 'user-42'), fc.integer({ min: 1, max: 16 }), (own, other, partitions) => {
      const p = partitionOf(event('x', own, {}), partitions);
      const q = partitionOf(event('x', other, {}), partitions);
      const expected = p === q ? [] : [q];
      for (const merge of [
        event('$identify', own, { $anon_distinct_id: other }),
        event('$create_alias', own, { alias: other }),
        event('$merge_dangerously', own, { alias: other }),
      ]) {
        assert.deepEqual(partitionsMergedWith([merge], p, partitions), expected, merge.event.event);
      }
      // Not merges: an $identify without an anonymous id, an alias on another event, a number.
      const plain = [event('$identify', own, {}), event('$pageview', own, { alias: other, $anon_distinct_id: other }), event('$create_alias', own, { alias: 7 })];
      assert.deepEqual(partitionsMergedWith(plain, p, partitions), []);
    }),
  );
});

test('a batch round-trips through its wire form', () => {
  fc.assert(fc.property(fc.array(arbEvent, { maxLength: 20 }), (events) => assert.deepEqual(decodeBatch(encodeBatch(events)), structuredClone(events))));
});

test('SIGHTLINE_NATS_URL: only with PostgreSQL; bad URLs and stream names are refused', () => {
  const machine: Machine = { cgroupLimit: () => null, totalMemoryBytes: 8 * 2 ** 30, cores: 2 };
  const base = { SIGHTLINE_DATA_DIR: '/tmp/x' };
  assert.equal(loadConfig({ ...base, SIGHTLINE_NATS_URL: 'nats://h:4222' }, machine).nats, undefined);
  const pg = { ...base, SIGHTLINE_POSTGRES_URL: 'postgres://u:p@h:5432/d' };
  assert.deepEqual(loadConfig({ ...pg, SIGHTLINE_NATS_URL: 'nats://a:1, nats://b:2' }, machine).nats, { urls: ['nats://a:1', 'nats://b:2'], stream: 'SIGHTLINE_INGEST', partitions: 8, publishTimeoutMs: 5000, maxBytes: 1024 * 1024 * 1024 });
  assert.throws(() => loadConfig({ ...pg, SIGHTLINE_NATS_URL: 'http://a:1' }, machine), /SIGHTLINE_NATS_URL/);
  assert.throws(() => loadConfig({ ...pg, SIGHTLINE_NATS_URL: 'nats://a:1', SIGHTLINE_NATS_STREAM: 'a.b' }, machine), /SIGHTLINE_NATS_STREAM/);
  assert.equal(loadConfig({ ...pg, SIGHTLINE_NATS_URL: 'nats://a:1', SIGHTLINE_NATS_MAX_MB: '64' }, machine).nats?.maxBytes, 64 * 1024 * 1024);
  assert.throws(() => loadConfig({ ...pg, SIGHTLINE_NATS_URL: 'nats://a:1', SIGHTLINE_NATS_MAX_MB: '0' }, machine), /SIGHTLINE_NATS_MAX_MB/);
});

test('a batch is cut into messages within the size bound, the same way every time, keeping every event in order', () => {
  fc.assert(
    fc.property(fc.array(arbEvent, { minLength: 1, maxLength: 40 }), fc.integer({ min: 0, max: 3_000 }), (events, extra) => {
      const largest = Math.max(...events.map((e) => encodeBatch([e]).byteLength));
      const maxBytes = largest + extra;
      const parts = encodeInParts(events, maxBytes);
      for (const part of parts) assert.ok(part.byteLength <= maxBytes);
      assert.deepEqual(parts.flatMap(decodeBatch), decodeBatch(encodeBatch(events)));
      assert.deepEqual(encodeInParts(events, maxBytes), parts);
      if (encodeBatch(events).byteLength <= maxBytes) assert.equal(parts.length, 1);
    }),
  );
});

test('an event larger than a message on its own is refused', () => {
  const event = fc.sample(arbEvent, 1)[0];
  const size = encodeBatch([event]).byteLength;
  assert.throws(() => encodeInParts([event, event], size - 1), EventTooLargeError);
});
