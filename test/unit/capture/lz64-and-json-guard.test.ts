/**
 * The bounded lz64 decoder (capture/lz64.ts) decodes exactly what lz-string does and stops at
 * its bound; the JSON guard (util/json-guard.ts) refuses deep values and repairs lone
 * surrogates, iteratively.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import LZString from 'lz-string';

import { decompressLz64, Lz64TooLargeError } from '../../../src/capture/lz64.js';
import { guardJson, JsonTooDeepError, mayHoldSurrogates, wellFormed } from '../../../src/util/json-guard.js';

test('lz64: round trip of anything lz-string compresses, including lone surrogates', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', minLength: 1, maxLength: 2000 }), (text) => {
      assert.equal(decompressLz64(LZString.compressToBase64(text), Infinity), text);
    }),
    { numRuns: 500 },
  );
  const big = JSON.stringify(Array.from({ length: 3000 }, (_, i) => ({ event: `e${i % 40}`, properties: { i } })));
  assert.equal(decompressLz64(LZString.compressToBase64(big), Infinity), big);
});

test('lz64: garbage is null or the same text lz-string gives, never an exception', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 300 }), (garbage) => {
      const ours = decompressLz64(garbage, 1_000_000);
      let theirs: string | null;
      try {
        theirs = LZString.decompressFromBase64(garbage);
      } catch {
        theirs = null;
      }
      if (ours !== null) assert.equal(ours, theirs);
    }),
    { numRuns: 2000 },
  );
});

test('lz64: output past the bound throws while decoding', () => {
  const text = 'a'.repeat(50_000);
  const compressed = LZString.compressToBase64(text);
  assert.equal(decompressLz64(compressed, 50_000), text);
  assert.throws(() => decompressLz64(compressed, 49_999), Lz64TooLargeError);
});

test('guardJson: depth limit, iteratively; shallow values pass untouched', () => {
  const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000));
  assert.throws(() => guardJson(deep), JsonTooDeepError);
  assert.throws(() => guardJson(JSON.parse('{"a":'.repeat(129) + '1' + '}'.repeat(129))), JsonTooDeepError);
  const ok = JSON.parse('{"a":'.repeat(127) + '[1]' + '}'.repeat(127));
  assert.equal(guardJson(ok), ok);
  assert.equal(guardJson(5), 5);
});

test('guardJson: lone surrogates in strings and keys become U+FFFD, pairs are kept, __proto__ stays data', () => {
  const text = '{"\\ud800k":"\\udc00v","ok":"\\ud83d\\ude00","list":["\\ud800",{"__proto__":"\\udfff"}]}';
  assert.ok(mayHoldSurrogates(text));
  assert.ok(!mayHoldSurrogates('{"plain":"text"}'));
  const value = guardJson(JSON.parse(text), { fixStrings: true });
  assert.deepEqual(Object.keys(value), ['ok', 'list', '\ufffdk']);
  assert.equal(value['\ufffdk'], '\ufffdv');
  assert.equal(value.ok, '😀');
  assert.equal(value.list[0], '\ufffd');
  assert.equal(Object.getPrototypeOf(value.list[1]), Object.prototype);
  assert.equal(Object.getOwnPropertyDescriptor(value.list[1], '__proto__')?.value, '\ufffd');
  assert.equal(wellFormed('a\ud800b\udc00c\ud83d\ude00'), 'a\ufffdb\ufffdc😀');
});
