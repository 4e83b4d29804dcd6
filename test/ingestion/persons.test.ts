/**
 * Persons: identify / alias / merge rules, $set / $set_once / $unset, refused merges,
 * personless events and $initial_* properties, checked in both stores after a clean stop (the
 * metadata store's persons and the event store's mirror that queries join on).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import {
  assertMirrorMatches,
  capture,
  currentPersonOf,
  eventsByUuid,
  newUuid,
  personsByDistinctId,
  stopAndRead,
  type StoredPerson,
} from '../helpers/ingest.js';
import { startServer, type TestServer } from '../helpers/server.js';
import type { StoredSnapshot } from '../helpers/stores.js';

let server: TestServer;
let snap: StoredSnapshot;

before(async () => {
  // GeoIP off: its $set keys would only add noise to the person property assertions.
  server = await startServer({ env: { SIGHTLINE_GEOIP: 'false' } });
});
after(async () => {
  await server?.stop();
});

type Event = Record<string, any>;

const ev = (event: string, distinctId: string, properties: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Event => ({
  event,
  distinct_id: distinctId,
  uuid: newUuid(),
  properties,
  ...extra,
});

/** One request per call, so each call is its own flush (persons read back from the store). */
async function send(...events: Event[]): Promise<void> {
  await capture(server, '/batch/', { api_key: server.projectKey, batch: events });
}

const person = (distinctId: string): StoredPerson => {
  const found = personsByDistinctId(snap).get(distinctId);
  assert.ok(found, `no person for ${distinctId}`);
  return found;
};
const noPerson = (distinctId: string) => assert.equal(personsByDistinctId(snap).get(distinctId), undefined, `${distinctId} must have no person`);
const ids = (p: StoredPerson) => [...p.distinct_ids].sort();

/** Every event sent for these distinct ids resolves (as queries do) to one and the same person. */
function assertEventsUnder(sent: Event[], expectedPerson: StoredPerson): void {
  const byUuid = eventsByUuid(snap);
  for (const e of sent) {
    const stored = byUuid.get(e.uuid);
    assert.ok(stored, `event ${e.event} for ${e.distinct_id ?? e.properties.distinct_id} was stored`);
    assert.equal(currentPersonOf(snap, stored), expectedPerson.uuid, `event ${e.event} (${stored.distinct_id}) resolves to the surviving person`);
  }
}

// Scenario events, kept for the assertions after the stop.
const s: Record<string, Event[]> = {};

describe('sending (each request acknowledged)', () => {
  test('identify merges an anonymous person into an existing identified-to-be person', async () => {
    s.merge = [
      ev('$pageview', 'anon-m1', { $set: { anon_prop: 'a', shared: 'from-anon' }, $set_once: { first_seen_as: 'anon' } }),
      ev('signed up', 'user-m1', { $set: { user_prop: 'u', shared: 'from-user' } }),
      ev('$identify', 'user-m1', { $anon_distinct_id: 'anon-m1', $set: { email: 'm1@example.com' } }),
      ev('after identify', 'anon-m1'),
    ];
    for (const e of s.merge) await send(e);
  });

  test('the same merge inside one batch (one flush)', async () => {
    s.mergeOneFlush = [
      ev('$pageview', 'anon-b1', { $set: { anon_prop: 'a', shared: 'from-anon' } }),
      ev('signed up', 'user-b1', { $set: { user_prop: 'u', shared: 'from-user' } }),
      ev('$identify', 'user-b1', { $anon_distinct_id: 'anon-b1', $set: { email: 'b1@example.com' } }),
    ];
    await send(...s.mergeOneFlush);
  });

  test('posthog-js identify (top-level $set/$set_once) adds the new id to the anonymous person', async () => {
    s.jsIdentify = [
      { event: '$pageview', uuid: newUuid(), properties: { distinct_id: 'anon-m2', token: server.projectKey } },
      {
        event: '$identify',
        uuid: newUuid(),
        properties: { distinct_id: 'user-m2', $anon_distinct_id: 'anon-m2', token: server.projectKey },
        $set: { name: 'Two' },
        $set_once: { signup_source: 'landing' },
      },
    ];
    await capture(server, '/i/v0/e/', { api_key: server.projectKey, batch: [s.jsIdentify[0]] }, { 'content-type': 'text/plain' });
    await capture(server, '/i/v0/e/', { api_key: server.projectKey, batch: [s.jsIdentify[1]] }, { 'content-type': 'text/plain' });
  });

  test('identify where neither id has a person creates one identified person with both', async () => {
    s.fresh = [ev('$identify', 'user-m3', { $anon_distinct_id: 'anon-m3', $set: { fresh: true } })];
    await send(...s.fresh);
  });

  test('alias: adds an id; merges two unidentified persons', async () => {
    s.alias = [ev('first', 'user-a1'), ev('$create_alias', 'user-a1', { alias: 'alias-a1', distinct_id: 'user-a1' }), ev('as alias', 'alias-a1')];
    for (const e of s.alias) await send(e);
    s.aliasMerge = [ev('x', 'anon-a2', { $set: { from_anon: 1 } }), ev('y', 'user-a2', { $set: { from_user: 2 } }), ev('$create_alias', 'user-a2', { alias: 'anon-a2' })];
    for (const e of s.aliasMerge) await send(e);
  });

  test('$set overwrites, $set_once does not, $unset removes (list and object forms)', async () => {
    s.props = [
      ev('e1', 'props-1', { $set: { plan: 'free', color: 'red', temp: 1, temp2: 2 }, $set_once: { source: 'ads' } }),
      ev('e2', 'props-1', { $set: { plan: 'pro' }, $set_once: { source: 'organic', referrer_once: 'x' } }),
      ev('e3', 'props-1', { $unset: ['temp'] }),
      ev('e4', 'props-1', { $unset: { temp2: null } }),
      // posthog-node setPersonProperties: a `$set` event.
      ev('$set', 'props-1', { $set: { color: 'blue' } }),
      // Top-level $set on a normal event (posthog-js surveys) counts too.
      ev('e5', 'props-1', {}, { $set: { top_level: 'yes' } }),
    ];
    for (const e of s.props) await send(e);
  });

  test('merges with illegal ids are refused: "null", "undefined", "0", quoted, "anonymous"', async () => {
    s.illegal = [
      ev('shared junk id', 'null'),
      ev('$identify', 'user-r1', { $anon_distinct_id: 'null' }),
      ev('$identify', 'user-r2', { $anon_distinct_id: 'null' }),
      ev('$identify', 'user-r3', { $anon_distinct_id: 'undefined' }),
      ev('$identify', 'user-r4', { $anon_distinct_id: '0' }),
      ev('$identify', 'user-r5', { $anon_distinct_id: '"undefined"' }),
      ev('$create_alias', 'user-r6', { alias: 'anonymous' }),
      ev('$create_alias', 'user-r7', { alias: 'NaN' }),
    ];
    for (const e of s.illegal) await send(e);
  });

  test('an identified person is not merged by identify or alias; $merge_dangerously merges', async () => {
    s.identified = [ev('$identify', 'user-i1', { $anon_distinct_id: 'anon-i1', $set: { who: 'i1', only_i1: true } })];
    s.other = [ev('own event', 'user-i2', { $set: { who: 'i2' } })];
    s.refused = [ev('$identify', 'user-i2', { $anon_distinct_id: 'user-i1' }), ev('$create_alias', 'user-i2', { alias: 'user-i1' })];
    for (const e of [...s.identified, ...s.other, ...s.refused]) await send(e);
  });

  test('(then $merge_dangerously)', async () => {
    s.dangerous = [ev('$merge_dangerously', 'user-i2', { alias: 'user-i1' })];
    await send(...s.dangerous);
  });

  test('$process_person_profile: false creates no person and drops person events', async () => {
    s.ghost = [
      ev('ghost event', 'ghost-1', { $process_person_profile: false, $set: { x: 1 }, $set_once: { y: 2 }, $unset: ['z'] }),
      ev('ghost event 2', 'ghost-1', { $process_person_profile: false }),
    ];
    s.ghostDropped = [
      ev('$identify', 'ghost-2', { $process_person_profile: false, $anon_distinct_id: 'anon-ghost-2' }),
      ev('$create_alias', 'ghost-3', { $process_person_profile: false, alias: 'alias-ghost-3' }),
      ev('$merge_dangerously', 'ghost-4', { $process_person_profile: false, alias: 'alias-ghost-4' }),
      ev('$groupidentify', 'ghost-5', { $process_person_profile: false, $group_type: 'company', $group_key: 'ghostco', $group_set: { a: 1 } }),
    ];
    // A personless event for someone who has a person: no property change, but their person id.
    s.ghostKnown = [ev('personless for known', 'props-1', { $process_person_profile: false, $set: { color: 'green' } })];
    await send(...s.ghost, ...s.ghostDropped);
    await send(...s.ghostKnown);
    // Non-boolean values mean the default (true).
    s.notFalse = [ev('string false', 'pp-string', { $process_person_profile: 'false', $set: { real: true } })];
    await send(...s.notFalse);
  });

  test('(later, ghost-1 gets a person: the same deterministic id)', async () => {
    s.ghostLater = [ev('now a person', 'ghost-1', { $set: { finally: true } })];
    await send(...s.ghostLater);
  });

  test('$initial_* and latest values from event properties', async () => {
    s.initial = [
      ev('$pageview', 'init-1', { $browser: 'Chrome', $current_url: 'https://a.example/x', utm_source: 'newsletter', $os: 'Mac OS X', $referrer: '$direct', $set_once: { $initial_referrer: 'explicit' } }),
      ev('$pageview', 'init-1', { $browser: 'Firefox', $current_url: 'https://a.example/y', utm_source: 'ads', $os: 'Windows' }),
    ];
    for (const e of s.initial) await send(e);
    s.server = [ev('server side', 'init-2', { $is_server: true, $os: 'Linux', $os_version: '6.1', $lib: 'posthog-node', $app_version: '1.2.3' })];
    s.osName = [ev('mobile', 'init-3', { $os_name: 'iOS', $app_build: '42' })];
    await send(...s.server, ...s.osName);
  });

  test('stop and read both stores', async () => {
    snap = await stopAndRead(server);
  });
});

describe('persons in the stores', () => {
  test('identify merge: one identified person with both ids and combined properties; the other is gone', () => {
    const p = person('user-m1');
    assert.deepEqual(ids(p), ['anon-m1', 'user-m1']);
    assert.equal(p.is_identified, true);
    assert.equal(p.properties.anon_prop, 'a');
    assert.equal(p.properties.user_prop, 'u');
    assert.equal(p.properties.shared, 'from-user', "the surviving person's value wins");
    assert.equal(p.properties.email, 'm1@example.com');
    assert.equal(p.properties.first_seen_as, 'anon');
    const byUuid = eventsByUuid(snap);
    const anonPersonAtFirst = byUuid.get(s.merge[0].uuid)!.person_id!;
    assert.notEqual(anonPersonAtFirst, p.uuid, 'the anonymous event was stored under the anonymous person');
    assert.ok(!snap.persons.some((x) => x.uuid === anonPersonAtFirst), 'the merged-away person is deleted');
    assertEventsUnder(s.merge, p);
  });

  test('the same merge within one flush', () => {
    const p = person('user-b1');
    assert.deepEqual(ids(p), ['anon-b1', 'user-b1']);
    assert.equal(p.is_identified, true);
    assert.deepEqual(
      { anon_prop: p.properties.anon_prop, user_prop: p.properties.user_prop, shared: p.properties.shared, email: p.properties.email },
      { anon_prop: 'a', user_prop: 'u', shared: 'from-user', email: 'b1@example.com' },
    );
    assertEventsUnder(s.mergeOneFlush, p);
  });

  test('posthog-js identify: top-level $set/$set_once applied, anonymous person kept and identified', () => {
    const p = person('user-m2');
    assert.deepEqual(ids(p), ['anon-m2', 'user-m2']);
    assert.equal(p.is_identified, true);
    assert.equal(p.properties.name, 'Two');
    assert.equal(p.properties.signup_source, 'landing');
    assertEventsUnder(s.jsIdentify, p);
    assert.equal(eventsByUuid(snap).get(s.jsIdentify[0].uuid)!.person_id, p.uuid);
  });

  test('identify with two unknown ids', () => {
    const p = person('anon-m3');
    assert.deepEqual(ids(p), ['anon-m3', 'user-m3']);
    assert.equal(p.is_identified, true);
    assert.equal(p.properties.fresh, true);
  });

  test('alias', () => {
    const a1 = person('user-a1');
    assert.deepEqual(ids(a1), ['alias-a1', 'user-a1']);
    assertEventsUnder(s.alias, a1);
    const a2 = person('user-a2');
    assert.deepEqual(ids(a2), ['anon-a2', 'user-a2']);
    assert.equal(a2.properties.from_anon, 1);
    assert.equal(a2.properties.from_user, 2);
    assertEventsUnder(s.aliasMerge, a2);
  });

  test('$set / $set_once / $unset', () => {
    const p = person('props-1');
    assert.deepEqual(ids(p), ['props-1']);
    const { $creator_event_uuid, ...rest } = p.properties;
    assert.equal($creator_event_uuid, s.props[0].uuid);
    assert.deepEqual(rest, { plan: 'pro', color: 'blue', source: 'ads', referrer_once: 'x', top_level: 'yes' });
  });

  test('illegal ids never merge people', () => {
    const junk = person('null');
    assert.deepEqual(ids(junk), ['null']);
    for (const id of ['user-r1', 'user-r2', 'user-r3', 'user-r4', 'user-r5', 'user-r6', 'user-r7']) {
      assert.deepEqual(ids(person(id)), [id], `${id} stays alone`);
    }
    for (const id of ['undefined', '0', '"undefined"', 'anonymous', 'NaN']) noPerson(id);
    assertEventsUnder([s.illegal[1]], person('user-r1'));
  });

  test('identified person: identify/alias refused, event still stored under its own person; $merge_dangerously merges', () => {
    const byUuid = eventsByUuid(snap);
    // Before the dangerous merge the refused events were stored against user-i2's own person.
    for (const e of s.refused) {
      const stored = byUuid.get(e.uuid);
      assert.ok(stored, `${e.event} stored although the merge was refused`);
      assert.equal(stored.person_id, byUuid.get(s.other[0].uuid)!.person_id);
    }
    const survivor = person('user-i2');
    assert.deepEqual(ids(survivor), ['anon-i1', 'user-i1', 'user-i2']);
    assert.equal(survivor.uuid, byUuid.get(s.other[0].uuid)!.person_id, 'the person of distinct_id survives');
    assert.equal(survivor.properties.who, 'i2');
    assert.equal(survivor.properties.only_i1, true);
    assert.equal(survivor.is_identified, true);
    assertEventsUnder([...s.identified, ...s.other, ...s.refused, ...s.dangerous], survivor);
  });

  test('$process_person_profile: false', () => {
    const byUuid = eventsByUuid(snap);
    const [g1, g2] = s.ghost.map((e) => byUuid.get(e.uuid)!);
    assert.ok(g1 && g2, 'personless events are stored');
    assert.equal(g1.properties.$process_person_profile, false, 'the flag is kept on the event');
    for (const key of ['$set', '$set_once', '$unset']) assert.equal(g1.properties[key], undefined, `${key} stripped`);
    assert.ok(g1.person_id, 'personless events still carry a person id');
    assert.equal(g1.person_id, g2.person_id, 'a deterministic one');
    for (const e of s.ghostDropped) assert.ok(!byUuid.has(e.uuid), `${e.event} with $process_person_profile false is dropped`);
    for (const id of ['ghost-2', 'anon-ghost-2', 'ghost-3', 'alias-ghost-3', 'ghost-4', 'alias-ghost-4', 'ghost-5']) noPerson(id);
    assert.ok(!snap.groups.some((g) => g.group_key === 'ghostco'), 'dropped $groupidentify created no group');

    const known = byUuid.get(s.ghostKnown[0].uuid)!;
    assert.equal(known.person_id, person('props-1').uuid, 'personless event of a known person gets their id');
    assert.equal(person('props-1').properties.color, 'blue', 'and does not change them');

    const later = person('ghost-1');
    assert.deepEqual(ids(later), ['ghost-1']);
    assert.deepEqual(Object.keys(later.properties).sort(), ['$creator_event_uuid', 'finally'], 'nothing from the personless events');
    assert.equal(later.uuid, g1.person_id, 'the person created later has the id the personless events already carry');

    const notFalse = person('pp-string');
    assert.equal(notFalse.properties.real, true, 'a non-boolean $process_person_profile means true');
    assert.equal(byUuid.get(s.notFalse[0].uuid)!.properties.$process_person_profile, undefined, 'and is removed from the event');
  });

  test('$initial_* first touch, plain keys latest value', () => {
    const p = person('init-1');
    const pick = (keys: string[]) => Object.fromEntries(keys.map((k) => [k, p.properties[k]]));
    assert.deepEqual(
      pick(['$browser', '$initial_browser', '$current_url', '$initial_current_url', 'utm_source', '$initial_utm_source', '$os', '$initial_os', '$referrer', '$initial_referrer']),
      {
        $browser: 'Firefox',
        $initial_browser: 'Chrome',
        $current_url: 'https://a.example/y',
        $initial_current_url: 'https://a.example/x',
        utm_source: 'ads',
        $initial_utm_source: 'newsletter',
        $os: 'Windows',
        $initial_os: 'Mac OS X',
        $referrer: '$direct',
        $initial_referrer: 'explicit',
      },
    );
    const server = person('init-2');
    assert.equal(server.properties.$os, undefined, 'a server SDK reports its own OS, not the person’s');
    assert.equal(server.properties.$initial_os, undefined);
    assert.equal(server.properties.$app_version, '1.2.3');
    assert.equal(server.properties.$initial_app_version, '1.2.3');
    const mobile = person('init-3');
    assert.equal(mobile.properties.$initial_os, 'iOS');
    assert.equal(mobile.properties.$os_name, undefined);
    assert.equal(mobile.properties.$initial_app_build, '42');
  });

  test('every stored event has a person id; no distinct id belongs to two persons', () => {
    for (const e of snap.events) assert.ok(e.person_id, `event ${e.event} (${e.distinct_id}) has a person id`);
    const seen = new Map<string, string>();
    for (const p of snap.persons) {
      for (const id of p.distinct_ids) {
        assert.ok(!seen.has(id), `${id} belongs to ${seen.get(id)} and ${p.uuid}`);
        seen.set(id, p.uuid);
      }
    }
    // Persons without any distinct id would be unreachable leftovers of merges.
    for (const p of snap.persons) assert.ok(p.distinct_ids.length > 0, `person ${p.uuid} has distinct ids`);
  });

  test("the event store's person mirror matches the metadata store", async () => {
    await assertMirrorMatches(server.dataDir, snap);
  });
});
