/**
 * Enrichment side of ingestion: groups ($groupidentify, $groups → $group_N, the five
 * type limit), property/event definitions with inferred types, event↔property pairs, and GeoIP.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { capture, eventsByUuid, newUuid, personsByDistinctId, stopAndRead } from '../helpers/ingest.js';
import { startServer, type TestServer } from '../helpers/server.js';
import type { StoredSnapshot } from '../helpers/stores.js';

let server: TestServer;
let noGeo: TestServer;
let snap: StoredSnapshot;
let noGeoSnap: StoredSnapshot;

before(async () => {
  [server, noGeo] = await Promise.all([startServer(), startServer({ env: { SIGHTLINE_GEOIP: 'false' } })]);
});
after(async () => {
  await server?.stop();
  await noGeo?.stop();
});

type Event = Record<string, any>;
const ev = (event: string, distinctId: string, properties: Record<string, unknown> = {}): Event => ({ event, distinct_id: distinctId, uuid: newUuid(), properties });
const send = async (target: TestServer, ...events: Event[]) => capture(target, '/batch/', { api_key: target.projectKey, batch: events });

const e: Record<string, Event> = {};
const nowSeconds = Math.floor(Date.now() / 1000);

describe('sending', () => {
  test('groups', async () => {
    e.identify1 = ev('$groupidentify', '$company_acme', {
      $group_type: 'company',
      $group_key: 'acme',
      $group_set: { co_name: 'Acme', co_founded: '2020-01-01T00:00:00Z', co_employees: 50 },
      gi_only_prop: 'x',
    });
    e.identify2 = ev('$groupidentify', '$company_acme', { $group_type: 'company', $group_key: 'acme', $group_set: { co_employees: 60, co_plan: 'pro' } });
    e.grouped = ev('grouped', 'g-user', { $groups: { company: 'acme', project: 'p-1' } });
    e.newKey = ev('grouped', 'g-user', { $groups: { company: 'newco' } });
    e.identifyProject = ev('$groupidentify', 'g-user', { $group_type: 'project', $group_key: 'p-1', $group_set: { pr_name: 'P1' } });
    e.fiveTypes = ev('grouped', 'g-user', { $groups: { team: 't', org: 'o', region: 'r', sixth: 's', company: 'acme' } });
    e.identifySixth = ev('$groupidentify', 'g-user', { $group_type: 'sixth', $group_key: 's', $group_set: { sixth_prop: 1 } });
    e.numericKeys = ev('grouped', 'g-user', { $groups: { company: 42 } });
    e.identifyNumericKey = ev('$groupidentify', 'g-user', { $group_type: 'company', $group_key: 123, $group_set: { co_name: 'Numbered' } });
    e.personless = ev('grouped', 'g-anon', { $groups: { company: 'acme' }, $process_person_profile: false });
    for (const event of [e.identify1, e.identify2, e.grouped, e.newKey, e.identifyProject, e.fiveTypes, e.identifySixth, e.numericKeys, e.identifyNumericKey, e.personless]) {
      await send(server, event);
    }
  });

  test('definitions', async () => {
    e.def1 = ev('def event', 'd-user', {
      num: 42,
      float_num: 1.5,
      str: 'hello',
      bool: true,
      bool_str: 'TRUE',
      created_at: '2024-01-01T00:00:00Z',
      some_time: nowSeconds,
      old_time: 1000,
      when: '2024-01-01 10:00:00',
      rfc2822: 'Mon, 01 Jan 2024 10:00:00 +0000',
      '$feature/my-flag': true,
      '$feature/other': 'variant-a',
      $feature_flag_response: true,
      utm_campaign: 123,
      nullprop: null,
      obj: { a: 1 },
      arr: [1],
      $set: { person_num: 7, person_str: 'x' },
      $set_once: { person_first: 'y' },
      $unset: ['gone'],
    });
    // First non-null type wins: a later string does not change `num`, a later number types `nullprop`.
    e.def2 = ev('def event', 'd-user', { num: 'now a string', nullprop: 5 });
    e.metrics = ev('$$plugin_metrics', 'd-user', { metric_only: 1 });
    await send(server, e.def1);
    await send(server, e.def2, e.metrics);
  });

  test('GeoIP from properties.$ip', async () => {
    e.gb = ev('geo', 'geo-user', { $ip: '81.2.69.142' });
    e.se = ev('geo', 'geo-user', { $ip: '89.160.20.112' });
    e.disabled = ev('geo', 'geo-disabled', { $ip: '81.2.69.142', $geoip_disable: true });
    e.private = ev('geo', 'geo-private', { $ip: '10.1.2.3' });
    e.personlessGeo = ev('geo', 'geo-anon', { $ip: '81.2.69.142', $process_person_profile: false });
    e.mapped = ev('geo', 'geo-mapped', { $ip: '::ffff:89.160.20.112' });
    await send(server, e.gb);
    await send(server, e.se, e.disabled, e.private, e.personlessGeo, e.mapped);
    e.off = ev('geo', 'geo-off', { $ip: '81.2.69.142' });
    await send(noGeo, e.off);
  });

  test('stop and read', async () => {
    [snap, noGeoSnap] = await Promise.all([stopAndRead(server), stopAndRead(noGeo)]);
  });
});

describe('groups in the stores', () => {
  const stored = (event: Event) => {
    const found = eventsByUuid(snap).get(event.uuid);
    assert.ok(found, `${event.event} stored`);
    return found;
  };

  test('group types: first seen → next index, at most five', () => {
    assert.deepEqual(snap.groupTypes, [
      { group_type: 'company', group_type_index: 0 },
      { group_type: 'project', group_type_index: 1 },
      { group_type: 'team', group_type_index: 2 },
      { group_type: 'org', group_type_index: 3 },
      { group_type: 'region', group_type_index: 4 },
    ]);
  });

  test('$groupidentify creates and then updates (merges) group properties', () => {
    const group = (index: number, key: string) => snap.groups.find((g) => g.group_type_index === index && g.group_key === key);
    assert.deepEqual(group(0, 'acme')?.properties, { co_name: 'Acme', co_founded: '2020-01-01T00:00:00Z', co_employees: 60, co_plan: 'pro' });
    assert.deepEqual(group(1, 'p-1')?.properties, { pr_name: 'P1' });
    assert.deepEqual(group(0, '123')?.properties, { co_name: 'Numbered' }, 'a numeric key is stored as text');
    assert.equal(snap.groups.length, 3, `only identified groups exist: ${JSON.stringify(snap.groups)}`);
    for (const event of [e.identify1, e.identify2, e.identifyProject, e.identifySixth, e.identifyNumericKey]) stored(event);
  });

  test('$groups fills $group_N properties and the stored group columns', () => {
    const grouped = stored(e.grouped);
    assert.equal(grouped.properties.$group_0, 'acme');
    assert.equal(grouped.properties.$group_1, 'p-1');
    assert.deepEqual(grouped.groups, ['acme', 'p-1', '', '', '']);
    assert.deepEqual(stored(e.newKey).groups, ['newco', '', '', '', ''], 'a new key is still recorded on the event');

    const five = stored(e.fiveTypes);
    assert.deepEqual(five.groups, ['acme', '', 't', 'o', 'r']);
    assert.equal(five.properties.$group_5, undefined, 'the sixth type is ignored');
    assert.ok(!Object.values(five.properties).includes('s'), 'the sixth key is nowhere');

    assert.deepEqual(stored(e.numericKeys).groups, ['42', '', '', '', '']);
    assert.deepEqual(stored(e.personless).groups, ['', '', '', '', ''], 'personless events get no $group_N (as PostHog)');
    assert.deepEqual(stored(e.identify1).groups, ['', '', '', '', ''], '$groupidentify without $groups fills no column');
  });
});

describe('definitions in the stores', () => {
  const def = (name: string, type: 1 | 2 | 3, groupIndex = -1) =>
    snap.propertyDefinitions.find((d) => d.name === name && d.type === type && d.group_type_index === groupIndex);
  const typeOf = (name: string, type: 1 | 2 | 3, groupIndex = -1) => {
    const found = def(name, type, groupIndex);
    assert.ok(found, `definition ${name} (type ${type}, group ${groupIndex}) exists`);
    assert.equal(found.is_numerical, found.property_type === 'Numeric', `${name}: is_numerical follows the type`);
    return found.property_type;
  };

  test('event property types inferred from the first value', () => {
    const expected: Record<string, string | null> = {
      num: 'Numeric',
      float_num: 'Numeric',
      str: 'String',
      bool: 'Boolean',
      bool_str: 'Boolean',
      created_at: 'DateTime',
      some_time: 'DateTime',
      old_time: 'Numeric',
      when: 'DateTime',
      rfc2822: 'DateTime',
      '$feature/my-flag': 'String',
      '$feature/other': 'String',
      $feature_flag_response: 'String',
      utm_campaign: 'String',
      nullprop: 'Numeric',
      obj: null,
      arr: null,
      $ip: 'String',
    };
    const actual = Object.fromEntries(Object.keys(expected).map((name) => [name, typeOf(name, 1)]));
    assert.deepEqual(actual, expected);
    assert.equal(def('num', 1)!.is_numerical, true);
  });

  test('person definitions from $set / $set_once; group definitions from $group_set only', () => {
    assert.equal(typeOf('person_num', 2), 'Numeric');
    assert.equal(typeOf('person_str', 2), 'String');
    assert.equal(typeOf('person_first', 2), 'String');
    assert.equal(typeOf('co_name', 3, 0), 'String');
    assert.equal(typeOf('co_founded', 3, 0), 'DateTime');
    assert.equal(typeOf('co_employees', 3, 0), 'Numeric');
    assert.equal(typeOf('co_plan', 3, 0), 'String');
    assert.equal(typeOf('pr_name', 3, 1), 'String');
    assert.equal(snap.propertyDefinitions.filter((d) => d.name === 'sixth_prop').length, 0, 'no group type, no definition');
    for (const name of ['co_name', 'co_plan', 'gi_only_prop', '$group_type', '$group_key', '$group_set']) {
      assert.equal(def(name, 1), undefined, `${name} is not an event property definition`);
    }
    for (const name of ['person_num', 'person_first']) assert.equal(def(name, 1), undefined, `${name} is not an event property`);
    assert.equal(snap.propertyDefinitions.filter((d) => d.type === 3 && d.group_type_index === -1).length, 0);
  });

  test('bookkeeping keys are never event property definitions', () => {
    for (const name of ['$set', '$set_once', '$unset', '$groups', '$group_0', '$group_1', '$group_2', '$group_3', '$group_4']) {
      assert.equal(def(name, 1), undefined, name);
    }
    assert.equal(def('gone', 2), undefined, '$unset keys are not definitions');
  });

  test('event definitions (never for $$plugin_metrics)', () => {
    const names = snap.eventDefinitions.map((d) => d.name);
    for (const name of ['def event', '$groupidentify', 'grouped', 'geo']) assert.ok(names.includes(name), name);
    assert.ok(!names.includes('$$plugin_metrics'));
    assert.equal(def('metric_only', 1), undefined);
  });

  test('event ↔ property pairs', () => {
    const pairs = new Set(snap.eventProperties.map((p) => `${p.event} / ${p.property}`));
    for (const pair of ['def event / num', 'def event / $feature/my-flag', 'def event / person_num', 'def event / person_first', '$groupidentify / co_name', '$groupidentify / pr_name', 'geo / $geoip_country_code']) {
      assert.ok(pairs.has(pair), `pair ${pair}`);
    }
    for (const pair of ['def event / $set', 'def event / $set_once', 'grouped / $groups', 'grouped / $group_0', '$groupidentify / gi_only_prop', '$groupidentify / $group_set']) {
      assert.ok(!pairs.has(pair), `no pair ${pair}`);
    }
  });
});

describe('GeoIP in the stores', () => {
  const props = (event: Event) => {
    const found = eventsByUuid(snap).get(event.uuid);
    assert.ok(found);
    return found.properties;
  };

  test('public IPs are located (country code and time zone)', () => {
    assert.equal(props(e.gb).$geoip_country_code, 'GB');
    assert.equal(props(e.gb).$geoip_time_zone, 'Europe/London');
    assert.equal(props(e.gb).$geoip_continent_code, 'EU');
    assert.equal(typeof props(e.gb).$geoip_country_name, 'string');
    assert.equal(props(e.se).$geoip_country_code, 'SE');
    assert.equal(props(e.se).$geoip_time_zone, 'Europe/Stockholm');
    assert.equal(props(e.mapped).$geoip_country_code, 'SE', 'IPv4-mapped IPv6');
  });

  test('the person gets the latest location in $geoip_* and the first in $initial_geoip_*', () => {
    const person = personsByDistinctId(snap).get('geo-user');
    assert.ok(person);
    assert.equal(person.properties.$geoip_country_code, 'SE');
    assert.equal(person.properties.$initial_geoip_country_code, 'GB');
    assert.equal(person.properties.$geoip_time_zone, 'Europe/Stockholm');
    assert.equal(person.properties.$initial_geoip_time_zone, 'Europe/London');
  });

  test('$geoip_disable and private IPs: no lookup', () => {
    for (const event of [e.disabled, e.private]) {
      const geoKeys = Object.keys(props(event)).filter((k) => k.startsWith('$geoip_') && k !== '$geoip_disable');
      assert.deepEqual(geoKeys, [], event.distinct_id);
    }
    const person = personsByDistinctId(snap).get('geo-disabled');
    assert.ok(person);
    assert.ok(!Object.keys(person.properties).some((k) => k.includes('geoip')));
  });

  test('personless events are located too (posthog-js anonymous traffic), without a person', () => {
    assert.equal(props(e.personlessGeo).$geoip_country_code, 'GB');
    assert.equal(props(e.personlessGeo).$set, undefined);
    assert.equal(personsByDistinctId(snap).get('geo-anon'), undefined);
  });

  test('SIGHTLINE_GEOIP=false disables the lookup', () => {
    const found = eventsByUuid(noGeoSnap).get(e.off.uuid);
    assert.ok(found);
    assert.equal(found.properties.$ip, '81.2.69.142');
    assert.ok(!Object.keys(found.properties).some((k) => k.startsWith('$geoip_')));
  });
});
