import type { JsonObject } from '../../../src/kernel/json.js';
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { applyGeoIp, GeoIp, type GeoLookup } from '../../../src/geoip/geoip.js';
import { clientIp, isPublicIp, normalizeIp } from '../../../src/util/ip.js';

describe('GeoIp (GeoLite2 City from @ip-location-db)', () => {
  let geo: GeoIp;
  before(async () => {
    geo = await GeoIp.open();
  });

  test('81.2.69.142 → GB, Europe/London', () => {
    const found = geo.lookup('81.2.69.142');
    assert.ok(found);
    assert.equal(found.$geoip_country_code, 'GB');
    assert.equal(found.$geoip_country_name, 'United Kingdom');
    assert.equal(found.$geoip_continent_code, 'EU');
    assert.equal(found.$geoip_continent_name, 'Europe');
    assert.equal(found.$geoip_time_zone, 'Europe/London');
    assert.equal(typeof found.$geoip_latitude, 'number');
    assert.equal(typeof found.$geoip_longitude, 'number');
  });

  test('89.160.20.112 → SE, Europe/Stockholm', () => {
    const found = geo.lookup('89.160.20.112');
    assert.equal(found?.$geoip_country_code, 'SE');
    assert.equal(found?.$geoip_country_name, 'Sweden');
    assert.equal(found?.$geoip_time_zone, 'Europe/Stockholm');
  });

  test('IPv6 and IPv4-mapped addresses', () => {
    const v6 = geo.lookup('2001:480::1');
    assert.equal(v6?.$geoip_country_code, 'US');
    assert.equal(v6?.$geoip_continent_name, 'North America');
    assert.equal(geo.lookup('::ffff:81.2.69.142')?.$geoip_country_code, 'GB');
  });

  test('empty fields are omitted', () => {
    const found = geo.lookup('8.8.8.8');
    assert.equal(found?.$geoip_country_code, 'US');
    for (const value of Object.values(found ?? {})) assert.notEqual(value, '');
  });

  test('private, loopback, reserved and invalid addresses → null', () => {
    for (const ip of ['10.0.0.1', '192.168.1.20', '172.16.5.4', '127.0.0.1', '100.64.0.1', '169.254.1.1', '::1', '::', 'fe80::1', 'fd00::1', 'not an ip', '']) {
      assert.equal(geo.lookup(ip), null, ip);
    }
  });

  test('lookup cost', (t) => {
    // Varied public addresses: the first pass decodes records cold, the second hits the
    // record cache the way steady traffic does.
    const ips = Array.from({ length: 20_000 }, (_, i) => `${(i % 200) + 20}.${(i * 7) % 256}.${(i * 13) % 256}.${i % 250}`);
    const pass = () => {
      const started = process.hrtime.bigint();
      let located = 0;
      for (const ip of ips) if (geo.lookup(ip)) located++;
      return { micros: Number(process.hrtime.bigint() - started) / 1000 / ips.length, located };
    };
    const cold = pass();
    const warm = pass();
    t.diagnostic(
      `GeoIP lookup: ${cold.micros.toFixed(2)} µs cold, ${warm.micros.toFixed(2)} µs warm per lookup ` +
        `(${ips.length} IPv4 lookups, ${warm.located} located)`,
    );
    assert.ok(warm.micros < 200, `${warm.micros} µs per lookup`);
  });

  test('applyGeoIp on real data', () => {
    const properties: JsonObject = { $ip: '81.2.69.142', $set: { plan: 'pro' } };
    assert.equal(applyGeoIp(properties, geo), true);
    assert.equal(properties.$geoip_country_code, 'GB');
    const set = properties.$set as JsonObject;
    const setOnce = properties.$set_once as JsonObject;
    assert.equal(set.plan, 'pro');
    assert.equal(set.$geoip_country_code, 'GB');
    assert.equal(setOnce.$initial_geoip_time_zone, 'Europe/London');
  });
});

describe('applyGeoIp', () => {
  const stub: GeoLookup = {
    lookup: (ip) => (ip === '1.1.1.1' ? { $geoip_country_code: 'AU', $geoip_time_zone: 'Australia/Sydney', $geoip_latitude: -33.5 } : null),
  };

  test('adds event properties and mirrors the full key list on the person, null for missing keys', () => {
    const properties: JsonObject = { $ip: '1.1.1.1', $set_once: { $initial_geoip_country_code: 'kept?' } };
    assert.equal(applyGeoIp(properties, stub), true);
    assert.equal(properties.$geoip_country_code, 'AU');
    assert.equal(properties.$geoip_latitude, -33.5);
    assert.equal('$geoip_city_name' in properties, false);
    const set = properties.$set as JsonObject;
    const setOnce = properties.$set_once as JsonObject;
    assert.equal(Object.keys(set).length, 15);
    assert.equal(set.$geoip_country_code, 'AU');
    assert.equal(set.$geoip_time_zone, 'Australia/Sydney');
    assert.equal(set.$geoip_city_name, null);
    assert.equal(set.$geoip_accuracy_radius, null);
    assert.equal(setOnce.$initial_geoip_country_code, 'AU');
    assert.equal(setOnce.$initial_geoip_latitude, -33.5);
    assert.equal(setOnce.$initial_geoip_postal_code, null);
  });

  test('skipped when $geoip_disable is truthy, $ip is missing, or the IP is not located', () => {
    for (const properties of [{ $ip: '1.1.1.1', $geoip_disable: true }, { $ip: '1.1.1.1', $geoip_disable: 1 }, {}, { $ip: '' }, { $ip: '9.9.9.9' }]) {
      const before = JSON.stringify(properties);
      assert.equal(applyGeoIp(properties, stub), false);
      assert.equal(JSON.stringify(properties), before);
    }
    assert.equal(applyGeoIp({ $ip: '1.1.1.1' }, null), false);
  });

  test('personless events get the event properties but no person writes', () => {
    const properties: JsonObject = { $ip: '1.1.1.1', $process_person_profile: false };
    assert.equal(applyGeoIp(properties, stub), true);
    assert.equal(properties.$geoip_country_code, 'AU');
    assert.equal('$set' in properties, false);
    assert.equal('$set_once' in properties, false);
  });
});

describe('client IP', () => {
  test('socket address, normalised', () => {
    assert.equal(clientIp('203.0.113.9', undefined, false), '203.0.113.9');
    assert.equal(clientIp('::ffff:203.0.113.9', undefined, false), '203.0.113.9');
    assert.equal(clientIp('203.0.113.9:5123', undefined, false), '203.0.113.9');
    assert.equal(clientIp('2001:db8::1', undefined, false), '2001:db8::1');
    assert.equal(clientIp('[2001:db8::1]:443', undefined, false), '2001:db8::1');
    assert.equal(clientIp(undefined, undefined, false), null);
  });

  test('X-Forwarded-For only when the proxy is trusted; first entry wins', () => {
    const xff = '81.2.69.142:1234, 10.0.0.2, 10.0.0.3';
    assert.equal(clientIp('10.0.0.3', xff, true), '81.2.69.142');
    assert.equal(clientIp('10.0.0.3', xff, false), '10.0.0.3');
    assert.equal(clientIp('10.0.0.3', ' ::ffff:81.2.69.142 ', true), '81.2.69.142');
    assert.equal(clientIp('10.0.0.3', 'unknown', true), '10.0.0.3');
  });

  test('normalizeIp and isPublicIp', () => {
    assert.equal(normalizeIp('garbage'), null);
    assert.equal(normalizeIp('1.2.3.4:80'), '1.2.3.4');
    assert.equal(isPublicIp('81.2.69.142'), true);
    assert.equal(isPublicIp('2001:480::1'), true);
    assert.equal(isPublicIp('192.168.0.1'), false);
    assert.equal(isPublicIp('::ffff:10.0.0.1'), false);
    assert.equal(isPublicIp('224.0.0.1'), false);
    assert.equal(isPublicIp('::ffff:a00:1'), false);
    assert.equal(isPublicIp('172.32.0.1'), true);
    assert.equal(isPublicIp('172.31.255.255'), false);
  });
});
