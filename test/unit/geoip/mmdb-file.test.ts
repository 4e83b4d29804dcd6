import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import maxmind, { type Reader, type Response } from 'maxmind';

import { defaultGeoIpPaths } from '../../../src/geoip/geoip.js';
import { MmdbFile } from '../../../src/geoip/mmdb-file.js';
import { ipBytes } from '../../../src/util/ip.js';

const ALLOCATED_V6 = [0x2001, 0x2400, 0x2401, 0x2600, 0x2601, 0x2604, 0x2800, 0x2a00, 0x2a01, 0x2a02, 0x2c0f];

/** A deterministic spread of addresses (xorshift), so a failure names an address that fails again. */
function* addresses(count: number, version: 4 | 6): Generator<string> {
  let state = version === 4 ? 0x9e3779b9 : 0x85ebca6b;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
  for (let i = 0; i < count; i++) {
    if (version === 4) yield [24, 16, 8, 0].map((shift) => (next() >>> shift) & 0xff).join('.');
    // Within blocks the registries have handed out, or few would be located.
    else yield [ALLOCATED_V6[next() % ALLOCATED_V6.length], ...Array.from({ length: 7 }, () => next() & 0xffff)].map((g) => g.toString(16)).join(':');
  }
}

describe('MmdbFile reads the GeoLite2 files as the maxmind library does', () => {
  const paths = defaultGeoIpPaths();
  // A small page cache, so that evictions happen throughout the comparison.
  const ours = { 4: MmdbFile.open(paths.ipv4, { cacheBytes: 64 * 1024 }), 6: MmdbFile.open(paths.ipv6, { cacheBytes: 64 * 1024 }) };
  after(() => {
    ours[4].close();
    ours[6].close();
  });

  for (const version of [4, 6] as const) {
    test(`IPv${version}: 20,000 addresses give the same records`, async () => {
      const reference: Reader<Response> = await maxmind.open(version === 4 ? paths.ipv4 : paths.ipv6);
      let located = 0;
      for (const ip of addresses(20_000, version)) {
        const expected = reference.get(ip);
        const actual = ours[version].get(ipBytes(ip));
        assert.deepEqual(actual, expected, ip);
        if (expected) located++;
      }
      assert.ok(located > 1_000, `only ${located} located: the comparison would say little`);
    });
  }

  test('an IPv6 address is not found in the IPv4 file', () => {
    assert.equal(ours[4].ipVersion, 4);
    assert.equal(ours[4].get(ipBytes('2001:480::1')), null);
  });

  test('a file that is not a MaxMind DB is refused with a clear error', () => {
    assert.throws(() => MmdbFile.open(new URL(import.meta.url).pathname), /not a MaxMind DB file/);
  });
});

describe('ipBytes', () => {
  test('IPv4, IPv6 with and without ::, and a dotted tail', () => {
    assert.deepEqual([...ipBytes('81.2.69.142')], [81, 2, 69, 142]);
    assert.deepEqual([...ipBytes('2001:db8::1')], [0x20, 0x01, 0x0d, 0xb8, ...new Array(11).fill(0), 1]);
    assert.deepEqual([...ipBytes('::')], new Array(16).fill(0));
    assert.deepEqual([...ipBytes('1:2:3:4:5:6:7:8')], [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]);
    assert.deepEqual([...ipBytes('::ffff:81.2.69.142')], [...new Array(10).fill(0), 0xff, 0xff, 81, 2, 69, 142]);
    assert.deepEqual([...ipBytes('fe80::1%eth0')], [0xfe, 0x80, ...new Array(13).fill(0), 1]);
  });
});
