/**
 * Ingestion's planning steps one by one (src/ingestion/plan/), on in-memory snapshots: what each
 * step decides for a single event, and what it leaves for the stores.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Deduplicator } from '../../../src/ingestion/plan/dedupe.js';
import { enrich } from '../../../src/ingestion/plan/enrich.js';
import { applyGroups, GroupWorkingSet, identifiedGroupOf, MAX_GROUP_TYPES } from '../../../src/ingestion/plan/groups.js';
import { applyPersons, PersonWorkingSet, personUuidFor } from '../../../src/ingestion/plan/persons.js';
import { toRow } from '../../../src/ingestion/plan/row.js';
import { emptySnapshot, incoming, withPerson } from '../../helpers/plan-fixtures.js';

test('dedupe: a uuid already stored, or seen earlier in the flush, is refused; other projects are apart', () => {
  const snapshot = emptySnapshot();
  snapshot.existingUuids.set(1, new Set(['stored']));
  const dedupe = new Deduplicator(snapshot);
  assert.equal(dedupe.take(1, 'stored'), false);
  assert.equal(dedupe.take(1, 'new'), true);
  assert.equal(dedupe.take(1, 'new'), false);
  assert.equal(dedupe.take(2, 'new'), true, 'the same uuid in another project is another event');
  assert.equal(dedupe.take(2, 'stored'), true);
});

test('enrich: the enricher runs on every event, and $ip goes only where the project anonymises IPs', () => {
  const located = (properties: Record<string, unknown>) => (properties.$geoip_country_code = 'FR');
  const kept = { $ip: '1.2.3.4' };
  enrich(kept, false, located);
  assert.deepEqual(kept, { $ip: '1.2.3.4', $geoip_country_code: 'FR' });
  const anonymised = { $ip: '1.2.3.4' };
  enrich(anonymised, true, located);
  assert.deepEqual(anonymised, { $geoip_country_code: 'FR' }, 'located first, then the address removed');
  const withoutGeo = { $ip: '1.2.3.4' };
  enrich(withoutGeo, false, undefined);
  assert.deepEqual(withoutGeo, { $ip: '1.2.3.4' });
});

test('groups: $groups fills $group_N by first-seen type index, up to five types per project', () => {
  const groups = new GroupWorkingSet(emptySnapshot());
  const event = incoming('pageview', 'u1', { $groups: { company: 'acme', team: 7, bad: null } });
  const found = applyGroups(groups, 1, event, true);
  assert.deepEqual(found.columns, ['acme', '7', '', '', '']);
  assert.equal(found.identifiedIndex, null);
  assert.equal(event.properties.$group_0, 'acme');
  assert.equal(event.properties.$group_1, '7');
  for (let i = 2; i < MAX_GROUP_TYPES + 2; i++) applyGroups(groups, 1, incoming('e', 'u1', { $groups: { [`t${i}`]: 'k' } }), true);
  assert.deepEqual(
    groups.changes().newGroupTypes.map((t) => t.group_type),
    ['company', 'team', 't2', 't3', 't4'],
    'a sixth type is not allocated',
  );
});

test('groups: events without person processing keep $groups as sent and fill no column', () => {
  const groups = new GroupWorkingSet(emptySnapshot());
  const event = incoming('pageview', 'u1', { $groups: { company: 'acme' } });
  assert.deepEqual(applyGroups(groups, 1, event, false).columns, ['', '', '', '', '']);
  assert.equal(event.properties.$group_0, undefined);
});

test('groups: $groupidentify upserts the group, merging $group_set into what the store had', () => {
  const snapshot = emptySnapshot();
  snapshot.groupTypes.set(1, new Map([['company', 0]]));
  snapshot.groups.set(1, new Map([['0\u0000acme', { properties: { plan: 'free', seats: 3 }, created_at: '2026-01-01T00:00:00.000Z' }]]));
  const groups = new GroupWorkingSet(snapshot);
  const event = incoming('$groupidentify', 'u1', { $group_type: 'company', $group_key: 'acme', $group_set: { plan: 'pro' } });
  assert.equal(identifiedGroupOf(event), 'company\u0000acme');
  assert.equal(applyGroups(groups, 1, event, true).identifiedIndex, 0);
  assert.deepEqual(groups.changes().upsertGroups, [
    { project_id: 1, group_type_index: 0, group_key: 'acme', properties: { plan: 'pro', seats: 3 }, created_at: '2026-01-01T00:00:00.000Z' },
  ]);
  assert.equal(identifiedGroupOf(incoming('$groupidentify', 'u1', { $group_type: 'company' })), null, 'no key, no group');
});

test('persons: an unknown distinct id gets a person with the deterministic uuid and its $set/$set_once', () => {
  const persons = new PersonWorkingSet(emptySnapshot());
  const event = incoming('signup', 'u1', { $set: { email: 'a@x' }, $set_once: { first: 1 } });
  const { personId, warning } = applyPersons(persons, 1, event, true);
  assert.equal(personId, personUuidFor(1, 'u1'));
  assert.equal(warning, null);
  const [person] = persons.changes().upsertPersons;
  assert.deepEqual(person.properties, { email: 'a@x', first: 1, $creator_event_uuid: event.uuid });
});

test('persons: $identify merges the anonymous person into the identified one; a second identify of another anonymous id is refused', () => {
  const snapshot = emptySnapshot();
  const anon = withPerson(snapshot, 1, { uuid: 'p-anon', properties: { a: 1 } }, ['anon']);
  const known = withPerson(snapshot, 1, { uuid: 'p-known', properties: { b: 2 }, is_identified: true }, ['user']);
  const persons = new PersonWorkingSet(snapshot);
  const identify = incoming('$identify', 'user', { $anon_distinct_id: 'anon' });
  assert.deepEqual(applyPersons(persons, 1, identify, true), { personId: known.uuid, warning: null });
  assert.deepEqual(persons.changes().deletePersons, [{ project_id: 1, uuid: anon.uuid }]);
  assert.equal(persons.personOf(1, 'anon')!.uuid, known.uuid);

  const other = withPerson(snapshot, 1, { uuid: 'p-other', is_identified: true }, ['other']);
  const refused = applyPersons(persons, 1, incoming('$identify', 'user', { $anon_distinct_id: 'other' }), true);
  assert.equal(refused.warning, 'cannot_merge_already_identified');
  assert.equal(persons.personOf(1, 'other')!.uuid, other.uuid, 'the identified person stays apart');
});

test('persons: personless events and events without person processing create nobody', () => {
  const persons = new PersonWorkingSet(emptySnapshot());
  for (const event of [incoming('$exception', 'u1', { $set: { a: 1 } }), incoming('pageview', 'u2', { $set: { a: 1 } })]) {
    const processPerson = event.event !== 'pageview';
    const { personId } = applyPersons(persons, 1, event, processPerson);
    assert.equal(personId, personUuidFor(1, event.distinctId), 'the uuid the person would have');
  }
  assert.deepEqual(persons.changes().upsertPersons, []);
  assert.deepEqual(persons.changes().setDistinctIds, []);
});

test('row: the event as stored, properties serialised once, with its person and groups', () => {
  const event = incoming('pageview', 'u1', { $browser: 'Firefox' }, { elementsChain: 'a:nth-child="1"' });
  const received = new Date('2026-11-01T12:00:01Z');
  const row = toRow(3, event, 'p1', ['acme', '', '', '', ''], received);
  assert.deepEqual(row, {
    project_id: 3,
    uuid: event.uuid,
    event: 'pageview',
    distinct_id: 'u1',
    person_id: 'p1',
    timestamp: event.timestamp,
    created_at: received,
    properties_json: '{"$browser":"Firefox"}',
    elements_chain: 'a:nth-child="1"',
    groups: ['acme', '', '', '', ''],
  });
});
