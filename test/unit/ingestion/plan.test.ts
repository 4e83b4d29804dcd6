/**
 * plan() runs the steps in order over a whole flush: duplicates are counted and skipped, the
 * rest become rows and metadata changes, and definitions are only remembered once committed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { DefinitionCache } from '../../../src/ingestion/plan/definitions.js';
import { plan, snapshotRequest, type PendingEvent } from '../../../src/ingestion/plan/plan.js';
import { emptySnapshot, incoming, withPerson } from '../../helpers/plan-fixtures.js';

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

test('a redelivered event the store already has is written again as a row only, once, and only for an event store that keeps one row per uuid', () => {
  const snapshot = emptySnapshot();
  const person = withPerson(snapshot, 1, { uuid: 'person-u1', properties: { plan: 'free' } }, ['u1']);
  snapshot.groupTypes.set(1, new Map([['company', 0]]));
  const known = incoming('signup', 'u1', { $set: { plan: 'pro' }, $groups: { company: 'acme', team: 'x' } });
  snapshot.existingUuids.set(1, new Set([known.uuid]));
  const fresh = incoming('pageview', 'u2');
  const copy = () => ({ ...known, properties: structuredClone(known.properties) });
  const batch = (): PendingEvent[] => [
    { ...pending(1, copy()), redelivered: true },
    { ...pending(1, copy()), redelivered: true }, // twice in one flush: one row
    pending(1, copy()), // an SDK retry, not a redelivery: dropped
    { ...pending(1, fresh), redelivered: true }, // redelivered but never stored: planned as usual
  ];
  const now = new Date('2026-11-01T12:00:05Z');

  const result = plan(batch(), snapshot, 8, { definitions: new DefinitionCache(), now, rewriteRedelivered: true });
  assert.deepEqual(result.events.map((row) => row.uuid), [known.uuid, fresh.uuid]);
  assert.equal(result.rewritten, 1);
  assert.deepEqual(Object.fromEntries(result.dropped), { duplicate_uuid: 2 });
  const [row] = result.events;
  assert.equal(row.person_id, person.uuid, "stored under the distinct id's person");
  assert.equal(row.timestamp.getTime(), known.timestamp.getTime());
  assert.deepEqual(row.groups, ['acme', '', '', '', ''], 'known group types fill their column; none is allocated');
  assert.equal(JSON.parse(row.properties_json).$group_0, 'acme');
  assert.deepEqual(result.changes.eventUuids, [{ project_id: 1, uuid: fresh.uuid }], 'the store already has its uuid');
  assert.deepEqual(result.changes.newGroupTypes, []);
  assert.equal(person.properties.plan, 'free', 'its $set is not applied again');
  assert.deepEqual(result.changes.upsertPersons.map((p) => p.uuid), [result.events[1].person_id], 'only the new event makes a person');
  assert.deepEqual(result.changes.refreshPersons, [{ project_id: 1, uuid: person.uuid }], "the person's mirror rows are copied again");

  const withoutRewrites = plan(batch(), snapshot, 9, { definitions: new DefinitionCache(), now });
  assert.deepEqual(withoutRewrites.events.map((row) => row.uuid), [fresh.uuid], 'an event store that would keep two rows gets none');
  assert.equal(withoutRewrites.changes.refreshPersons, undefined);
});

test("a redelivered event whose person was deleted since its first commit is not written again; a personless one is", () => {
  const snapshot = emptySnapshot(); // u1's person was deleted: its distinct id has none now
  const personal = incoming('signup', 'u1', { $set: { plan: 'pro' } });
  const personless = incoming('pageview', 'u1', { $process_person_profile: false });
  snapshot.existingUuids.set(1, new Set([personal.uuid, personless.uuid]));
  const batch: PendingEvent[] = [
    { ...pending(1, personal), redelivered: true },
    { ...pending(1, personless), redelivered: true },
  ];
  const result = plan(batch, snapshot, 8, { definitions: new DefinitionCache(), now: new Date('2026-11-01T12:00:05Z'), rewriteRedelivered: true });
  assert.deepEqual(result.events.map((row) => row.uuid), [personless.uuid]);
  assert.deepEqual(Object.fromEntries(result.dropped), { person_deleted: 1 });
  assert.deepEqual(result.changes.upsertPersons, [], 'no person is made again');
});

test('a redelivered event committed before a deletion of its distinct id is not written under a person made since; one committed after is', () => {
  const snapshot = emptySnapshot();
  const person = withPerson(snapshot, 1, { uuid: 'person-new', properties: {} }, ['u1']); // made after the deletion
  const before = incoming('signup', 'u1', { $set: { plan: 'pro' } });
  const after = incoming('pageview', 'u1');
  const elsewhere = incoming('pageview', 'u2');
  withPerson(snapshot, 1, { uuid: 'person-u2', properties: {} }, ['u2']);
  snapshot.existingUuids.set(1, new Set([before.uuid, after.uuid, elsewhere.uuid]));
  snapshot.firstCommits = new Map([
    [`1:${before.uuid}`, { node: 'a', flushSeq: 12 }],
    [`1:${after.uuid}`, { node: 'a', flushSeq: 13 }],
    [`1:${elsewhere.uuid}`, { node: 'a', flushSeq: 12 }],
  ]);
  // The deletion came after node a's flush 12 and before its 13th; node b had committed up to 40.
  snapshot.deletionsOfDistinctIds = new Map([['1:u1', [{ a: 12, b: 40 }]]]);
  const batch: PendingEvent[] = [before, after, elsewhere].map((event) => ({ ...pending(1, event), redelivered: true }));
  const result = plan(batch, snapshot, 20, { definitions: new DefinitionCache(), now: new Date('2026-11-01T12:00:05Z'), rewriteRedelivered: true });
  assert.deepEqual(result.events.map((row) => row.uuid), [after.uuid, elsewhere.uuid]);
  assert.equal(result.events[0].person_id, person.uuid);
  assert.deepEqual(Object.fromEntries(result.dropped), { person_deleted: 1 });
});
