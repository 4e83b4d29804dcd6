/**
 * plan() runs the steps in order over a whole flush: duplicates are counted and skipped, the
 * rest become rows and metadata changes, and definitions are only remembered once committed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { DefinitionCache } from '../../../src/ingestion/plan/definitions.js';
import { plan, snapshotRequest, type PendingEvent } from '../../../src/ingestion/plan/plan.js';
import { emptySnapshot, incoming } from '../../helpers/plan-fixtures.js';

const pending = (projectId: number, event: ReturnType<typeof incoming>, anonymizeIps = false): PendingEvent => ({ projectId, anonymizeIps, event });

test('snapshotRequest asks for every distinct id, uuid and identified group a batch mentions', () => {
  const batch = [
    pending(1, incoming('$identify', 'user', { $anon_distinct_id: 'anon' })),
    pending(1, incoming('$create_alias', 'user', { alias: 'other' })),
    pending(2, incoming('$groupidentify', 'u2', { $group_type: 'company', $group_key: 42 })),
  ];
  const request = snapshotRequest(batch);
  assert.deepEqual([...request.distinctIds.get(1)!].sort(), ['anon', 'other', 'user']);
  assert.deepEqual(request.eventUuids.get(1), [batch[0].event.uuid, batch[1].event.uuid]);
  assert.deepEqual([...request.groups.get(2)!], ['company\u000042']);
});

test('a flush: duplicates dropped and counted, rows in order with their persons, changes for the stores', () => {
  const snapshot = emptySnapshot();
  const stored = incoming('pageview', 'u1');
  snapshot.existingUuids.set(1, new Set([stored.uuid]));
  const first = incoming('signup', 'u1', { $set: { plan: 'pro' }, $ip: '1.2.3.4' });
  const retry = { ...first, properties: { ...first.properties } };
  const other = incoming('pageview', 'u2', { $groups: { company: 'acme' } });
  const cache = new DefinitionCache();
  const result = plan([pending(1, stored), pending(1, first, true), pending(1, retry), pending(1, other)], snapshot, 7, {
    definitions: cache,
    now: new Date('2026-11-01T12:00:05Z'),
  });

  assert.deepEqual(Object.fromEntries(result.dropped), { duplicate_uuid: 2 });
  assert.deepEqual(result.events.map((row) => row.uuid), [first.uuid, other.uuid]);
  assert.equal(JSON.parse(result.events[0].properties_json).$ip, undefined, 'anonymised');
  assert.deepEqual(result.events[1].groups, ['acme', '', '', '', '']);
  assert.equal(result.changes.flushSeq, 7);
  assert.deepEqual(result.changes.eventUuids, [{ project_id: 1, uuid: first.uuid }, { project_id: 1, uuid: other.uuid }]);
  assert.deepEqual(result.changes.upsertPersons.map((p) => p.properties.plan ?? null).sort(), [null, 'pro']);
  assert.ok(result.changes.propertyDefinitions.some((d) => d.name === 'plan'), 'the $set property is defined');

  const remembered = () => [...cache.pairs.values()].reduce((n, set) => n + set.size, 0) + cache.eventHours.size;
  assert.equal(remembered(), 0, 'nothing is remembered before the commit');
  result.committed();
  assert.ok(cache.eventHours.size === 2 && remembered() > 2, 'remembered once committed');
});
