import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';

import LZString from 'lz-string';

import { ApiError } from '../../../src/kernel/errors.js';
import { decodeCapture, replaceNonFiniteLiterals } from '../../../src/capture/decode.js';
import type { CaptureInput } from '../../../src/capture/types.js';

const MB = 1024 * 1024;

function input(overrides: Omit<Partial<CaptureInput>, 'body'> & { body?: Buffer | string }): CaptureInput {
  const body = overrides.body ?? Buffer.alloc(0);
  return {
    path: '/i/v0/e/',
    query: {},
    contentType: 'application/json',
    contentEncoding: undefined,
    maxDecodedBytes: MB,
    ...overrides,
    body: typeof body === 'string' ? Buffer.from(body) : body,
  };
}

const envelope = {
  api_key: 'phc_test',
  sent_at: '2026-01-02T03:04:05.000Z',
  batch: [
    { event: 'clicked', distinct_id: 'u1', properties: { a: 1 } },
    { event: '$pageview', properties: { distinct_id: 'u2', token: 'phc_test' } },
  ],
};
const envelopeJson = JSON.stringify(envelope);
const b64 = (text: string) => Buffer.from(text).toString('base64');

/** Runs fn and returns the ApiError it throws (fails when it does not throw one). */
function apiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ApiError, `expected ApiError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected an ApiError');
}

function assertEnvelopeDecoded(result: ReturnType<typeof decodeCapture>) {
  assert.equal(result.token, 'phc_test');
  assert.deepEqual(result.sentAt, new Date('2026-01-02T03:04:05.000Z'));
  assert.deepEqual(result.events, envelope.batch);
}

describe('decodeCapture: encodings', () => {
  test('plain JSON', () => {
    assertEnvelopeDecoded(decodeCapture(input({ body: envelopeJson })));
  });

  test('gzip announced by Content-Encoding (posthog-node)', () => {
    assertEnvelopeDecoded(decodeCapture(input({ path: '/batch/', contentEncoding: 'gzip', body: gzipSync(envelopeJson) })));
  });

  test('gzip announced by ?compression=gzip-js (legacy posthog-js)', () => {
    const result = decodeCapture(
      input({ path: '/e/', query: { compression: 'gzip-js' }, contentType: 'text/plain', body: gzipSync(envelopeJson) }),
    );
    assertEnvelopeDecoded(result);
  });

  test('gzip detected by magic bytes only (posthog-js: text/plain, no header)', () => {
    assertEnvelopeDecoded(decodeCapture(input({ contentType: 'text/plain', body: gzipSync(envelopeJson) })));
  });

  test('base64 body is decoded optimistically', () => {
    assertEnvelopeDecoded(decodeCapture(input({ contentType: 'text/plain', body: b64(envelopeJson) })));
  });

  test('base64 body with ?compression=base64', () => {
    assertEnvelopeDecoded(decodeCapture(input({ query: { compression: 'b64' }, body: b64(envelopeJson) })));
  });

  test('form data= with base64 and compression field, `+` sent unescaped', () => {
    // Pick a payload whose base64 contains '+', which form decoding turns into a space.
    const json = JSON.stringify({ ...envelope, pad: '>>>?' });
    const encoded = b64(json);
    assert.ok(encoded.includes('+'));
    const body = `data=${encoded}&compression=base64`;
    const result = decodeCapture(input({ contentType: 'application/x-www-form-urlencoded', body }));
    assert.equal(result.token, 'phc_test');
    assert.equal(result.events.length, 2);
  });

  test('form data= with URL-encoded JSON (no base64)', () => {
    const body = new URLSearchParams({ data: envelopeJson }).toString();
    assertEnvelopeDecoded(decodeCapture(input({ contentType: 'application/x-www-form-urlencoded', body })));
  });

  test('data= prefixed body under another content type (legacy posthog-js)', () => {
    const body = `data=${encodeURIComponent(b64(envelopeJson))}`;
    assertEnvelopeDecoded(decodeCapture(input({ path: '/e/', contentType: 'text/plain', body })));
  });

  test('lz64 from the real lz-string compressToBase64 (query hint)', () => {
    const body = LZString.compressToBase64(envelopeJson);
    assertEnvelopeDecoded(decodeCapture(input({ path: '/e/', query: { compression: 'lz64' }, contentType: 'text/plain', body })));
  });

  test('lz64 in a form, `+` turned into spaces by form decoding', () => {
    let json = envelopeJson;
    let encoded = LZString.compressToBase64(json);
    for (let i = 0; !encoded.includes('+'); i++) {
      json = JSON.stringify({ ...envelope, pad: i });
      encoded = LZString.compressToBase64(json);
    }
    const body = `compression=lz64&data=${encoded}`;
    const result = decodeCapture(input({ path: '/e/', contentType: 'application/x-www-form-urlencoded', body }));
    assert.equal(result.events.length, 2);
    assert.equal(result.token, 'phc_test');
  });

  test('lz64 via Content-Encoding: lz-string', () => {
    const body = LZString.compressToBase64(envelopeJson);
    assertEnvelopeDecoded(decodeCapture(input({ contentEncoding: 'lz-string', body })));
  });

  test('GET ?data= with JSON, token in the query', () => {
    const event = { event: 'hit', distinct_id: 'u1' };
    const result = decodeCapture(
      input({ method: 'GET', path: '/e/', query: { data: JSON.stringify(event), token: 'phc_q' }, contentType: undefined }),
    );
    assert.deepEqual(result.events, [event]);
    assert.equal(result.token, 'phc_q');
  });

  test('GET ?data= with base64 whose + became spaces', () => {
    const json = JSON.stringify({ event: 'hit>>>?', distinct_id: 'u1', api_key: 'phc_x' });
    const encoded = b64(json);
    assert.ok(encoded.includes('+'));
    const result = decodeCapture(input({ method: 'GET', path: '/e/', query: { data: encoded.replace(/\+/g, ' ') } }));
    assert.equal(result.events[0].event, 'hit>>>?');
    assert.equal(result.token, 'phc_x');
  });

  test('legacy double base64 only on legacy paths', () => {
    const body = b64(b64(envelopeJson));
    assertEnvelopeDecoded(decodeCapture(input({ path: '/capture/', contentType: 'text/plain', body })));
    assertEnvelopeDecoded(decodeCapture(input({ path: '/e', contentType: 'text/plain', body })));
    assert.equal(apiError(() => decodeCapture(input({ path: '/i/v0/e/', body }))).status, 400);
    assert.equal(apiError(() => decodeCapture(input({ path: '/batch/', body }))).status, 400);
  });

  test('NaN / Infinity / -Infinity become null, also inside gzip; words in strings untouched', () => {
    const text =
      '{"api_key":"k","batch":[{"event":"NaN Infinity","distinct_id":"-Infinity","properties":{"a":NaN,"b":[Infinity,-Infinity],"c":"say \\"NaN\\"","NaNx":1}}]}';
    for (const body of [Buffer.from(text), gzipSync(text)]) {
      const [event] = decodeCapture(input({ body })).events;
      assert.equal(event.event, 'NaN Infinity');
      assert.equal(event.distinct_id, '-Infinity');
      assert.deepEqual(event.properties, { a: null, b: [null, null], c: 'say "NaN"', NaNx: 1 });
    }
  });

  test('replaceNonFiniteLiterals leaves identifiers containing the words alone', () => {
    assert.equal(replaceNonFiniteLiterals('[NaN,Infinity,-Infinity]'), '[null,null,null]');
    assert.equal(replaceNonFiniteLiterals('[NaNa, xInfinity]'), '[NaNa, xInfinity]');
    assert.equal(replaceNonFiniteLiterals('{"NaN":"\\"NaN"}'), '{"NaN":"\\"NaN"}');
  });
});

describe('decodeCapture: bad payloads', () => {
  test('empty body → 400 empty payload', () => {
    const error = apiError(() => decodeCapture(input({ body: '' })));
    assert.equal(error.status, 400);
    assert.equal(error.code, 'invalid_payload');
    assert.match(error.detail, /empty payload/);
  });

  test('gzip bomb (10 MB of zeros, 1 MB limit) → 413, fast', () => {
    const bomb = gzipSync(Buffer.alloc(10 * MB));
    const started = performance.now();
    const error = apiError(() => decodeCapture(input({ body: bomb, maxDecodedBytes: MB })));
    const elapsed = performance.now() - started;
    assert.equal(error.status, 413);
    assert.equal(error.code, 'request_too_large');
    assert.ok(elapsed < 200, `took ${elapsed} ms`);
  });

  test('gzip bomb of 200 MB (multi-member) stays within bounded memory', () => {
    // 200 concatenated members of 1 MB zeros each: ~200 kB on the wire, 200 MB inflated.
    const member = gzipSync(Buffer.alloc(MB));
    const bomb = Buffer.concat(Array.from({ length: 200 }, () => member));
    const before = process.memoryUsage().arrayBuffers;
    const started = performance.now();
    const error = apiError(() => decodeCapture(input({ body: bomb, maxDecodedBytes: MB })));
    const elapsed = performance.now() - started;
    const grown = process.memoryUsage().arrayBuffers - before;
    assert.equal(error.status, 413);
    assert.ok(elapsed < 500, `took ${elapsed} ms`);
    assert.ok(grown < 50 * MB, `array buffers grew by ${grown} bytes`);
  });

  test('decoded size is limited for plain, base64 and lz64 payloads too', () => {
    const big = JSON.stringify({ event: 'x', distinct_id: 'u', properties: { blob: 'a'.repeat(4000) } });
    assert.equal(apiError(() => decodeCapture(input({ body: big, maxDecodedBytes: 1000 }))).status, 413);
    assert.equal(apiError(() => decodeCapture(input({ body: b64(big), maxDecodedBytes: 1000 }))).status, 413);
    const lz = LZString.compressToBase64(big);
    const error = apiError(() =>
      decodeCapture(input({ query: { compression: 'lz64' }, body: lz, maxDecodedBytes: 1000 })),
    );
    assert.equal(error.status, 413);
  });

  test('truncated gzip → 400', () => {
    const gz = gzipSync(envelopeJson);
    const error = apiError(() => decodeCapture(input({ body: gz.subarray(0, gz.length - 12) })));
    assert.equal(error.status, 400);
    assert.equal(error.code, 'invalid_payload');
    assert.match(error.detail, /gunzip/);
  });

  test('corrupt gzip → 400', () => {
    const body = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), Buffer.from('not really deflate data')]);
    assert.equal(apiError(() => decodeCapture(input({ body }))).status, 400);
  });

  test('garbage → 400 (invalid UTF-8, not JSON, wrong JSON type)', () => {
    for (const body of [Buffer.from([0xff, 0xfe, 0xfd, 0x00, 0x7b]), Buffer.from('hello world'), Buffer.from('"just a string"'), Buffer.from('null')]) {
      const error = apiError(() => decodeCapture(input({ body })));
      assert.equal(error.status, 400, body.toString());
      assert.equal(error.code, 'invalid_payload');
    }
  });

  test('bad base64 with an explicit base64 hint → 400', () => {
    assert.equal(apiError(() => decodeCapture(input({ query: { compression: 'base64' }, body: '{{{not base64' }))).status, 400);
  });

  test('bad lz64 → 400', () => {
    const error = apiError(() => decodeCapture(input({ query: { compression: 'lz64' }, body: '!!!!' })));
    assert.equal(error.status, 400);
    assert.match(error.detail, /lz64/);
  });

  test('form without data → 400; empty batch → 400; non-array batch → 400', () => {
    assert.equal(
      apiError(() => decodeCapture(input({ contentType: 'application/x-www-form-urlencoded', body: 'ver=1.2&x=1' }))).status,
      400,
    );
    assert.equal(apiError(() => decodeCapture(input({ body: '{"api_key":"k","batch":[]}' }))).status, 400);
    assert.equal(apiError(() => decodeCapture(input({ body: '[]' }))).status, 400);
    assert.equal(apiError(() => decodeCapture(input({ body: '{"api_key":"k","batch":{}}' }))).status, 400);
  });
});

describe('decodeCapture: shapes', () => {
  test('bare array of events (posthog-js /s/)', () => {
    const events = [{ event: 'a', properties: { token: 't' } }, { event: 'b', properties: { token: 't' } }];
    const result = decodeCapture(input({ path: '/s/', body: JSON.stringify(events) }));
    assert.deepEqual(result.events, events);
    assert.equal(result.token, 't');
    assert.equal(result.sentAt, null);
  });

  test('single event object', () => {
    const event = { event: 'a', distinct_id: 'u', api_key: 'phc_single' };
    const result = decodeCapture(input({ path: '/capture/', body: JSON.stringify(event) }));
    assert.deepEqual(result.events, [event]);
    assert.equal(result.token, 'phc_single');
  });

  test('/engage event without a name becomes $identify with $set lifted into properties', () => {
    const body = JSON.stringify({ $distinct_id: 'u1', $token: 'phc_e', $set: { plan: 'pro' }, properties: { $set: { a: 1 } } });
    const result = decodeCapture(input({ path: '/engage/', body }));
    assert.deepEqual(result.events, [
      { $distinct_id: 'u1', $token: 'phc_e', event: '$identify', properties: { $set: { a: 1, plan: 'pro' } } },
    ]);
    assert.equal(result.token, 'phc_e');
  });

  test('a nameless event elsewhere is kept for the normaliser to drop', () => {
    const result = decodeCapture(input({ path: '/capture/', body: '{"distinct_id":"u","api_key":"k"}' }));
    assert.equal(result.events.length, 1);
    assert.equal(result.events[0].event, undefined);
  });

  test('non-object batch items are dropped and counted', () => {
    const body = JSON.stringify({ api_key: 'k', batch: [1, 'x', null, [], { event: 'ok' }] });
    const result = decodeCapture(input({ body }));
    assert.deepEqual(result.events, [{ event: 'ok' }]);
    assert.equal(result.droppedNonObjects, 4);
  });

  test('$performance_event items are removed and counted (even when that empties the batch)', () => {
    const body = JSON.stringify({ api_key: 'k', batch: [{ event: '$performance_event' }, { event: 'kept' }] });
    const result = decodeCapture(input({ body }));
    assert.deepEqual(result.events, [{ event: 'kept' }]);
    assert.equal(result.droppedPerformanceEvents, 1);
    const onlyPerf = decodeCapture(input({ body: JSON.stringify({ api_key: 'k', batch: [{ event: '$performance_event' }] }) }));
    assert.deepEqual(onlyPerf.events, []);
  });

  test('historical_migration flag', () => {
    const result = decodeCapture(input({ path: '/batch/', body: JSON.stringify({ ...envelope, historical_migration: true }) }));
    assert.equal(result.historicalMigration, true);
    assert.equal(decodeCapture(input({ body: envelopeJson })).historicalMigration, undefined);
  });
});

describe('decodeCapture: token and sent_at', () => {
  test('batch-level api_key wins over (even inconsistent) event tokens', () => {
    const body = JSON.stringify({ api_key: 'phc_batch', batch: [{ event: 'a', token: 'x' }, { event: 'b', token: 'y' }] });
    assert.equal(decodeCapture(input({ body })).token, 'phc_batch');
    const viaToken = JSON.stringify({ token: 'phc_tok', batch: [{ event: 'a' }] });
    assert.equal(decodeCapture(input({ body: viaToken })).token, 'phc_tok');
  });

  test('event-level token / $token / api_key / properties.token, consistent', () => {
    const events = [
      { event: 'a', token: 'phc_1' },
      { event: 'b', $token: 'phc_1' },
      { event: 'c', api_key: 'phc_1' },
      { event: 'd', properties: { token: 'phc_1' } },
      { event: 'e' },
    ];
    assert.equal(decodeCapture(input({ body: JSON.stringify(events) })).token, 'phc_1');
  });

  test('inconsistent event tokens → 401 invalid_api_key without attr', () => {
    const events = [{ event: 'a', token: 'phc_1' }, { event: 'b', properties: { token: 'phc_2' } }];
    const error = apiError(() => decodeCapture(input({ body: JSON.stringify(events) })));
    assert.equal(error.status, 401);
    assert.equal(error.type, 'authentication_error');
    assert.equal(error.code, 'invalid_api_key');
    assert.equal(error.detail, 'batch submitted with inconsistent api_key values');
    assert.equal(error.attr, undefined);
    assert.equal('attr' in error.toBody(), false);
  });

  test('missing token → null; query token only used for GET', () => {
    assert.equal(decodeCapture(input({ body: '[{"event":"a"}]' })).token, null);
    assert.equal(decodeCapture(input({ query: { token: 'phc_q' }, body: '[{"event":"a"}]' })).token, null);
    assert.equal(decodeCapture(input({ method: 'GET', query: { api_key: 'phc_q' }, body: '[{"event":"a"}]' })).token, 'phc_q');
  });

  test('sent_at from the envelope, else from query _ in ms (after 2020 only)', () => {
    assert.deepEqual(decodeCapture(input({ body: envelopeJson, query: { _: '1700000000000' } })).sentAt, new Date(envelope.sent_at));
    const single = '{"event":"a"}';
    assert.deepEqual(decodeCapture(input({ body: single, query: { _: '1700000000000' } })).sentAt, new Date(1700000000000));
    assert.equal(decodeCapture(input({ body: single, query: { _: '1500000000000' } })).sentAt, null);
    assert.equal(decodeCapture(input({ body: single, query: { _: '1700000000' } })).sentAt, null);
    assert.equal(decodeCapture(input({ body: single })).sentAt, null);
  });
});
