/**
 * Capture surface, over real HTTP: every encoding and body shape the SDKs send, every capture error
 * of docs/api.md and PostHog's capture, silent drops, timestamps, uuids, the client IP, and
 * "acknowledged means stored, once". Requests go to a running server; what was stored is read back
 * from the data dir after a clean stop.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';

import LZString from 'lz-string';

import { capture, eventsByUuid, newUuid, send, stopAndRead, UUID_V7, type StoredEvent } from '../helpers/ingest.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { createTenant } from '../helpers/api-fixtures.js';
import { readStores, type StoredSnapshot } from '../helpers/stores.js';

const MB = 1024 * 1024;
const SMALL_LIMIT = 64 * 1024;
const SMALL_DECODED_LIMIT = 1 * MB;

let server: TestServer;
/** Body limit 64 KB, decoded limit 1 MB, X-Forwarded-For trusted. */
let small: TestServer;
let snapshot: StoredSnapshot;
let smallSnapshot: StoredSnapshot;

before(async () => {
  [server, small] = await Promise.all([
    startServer(),
    startServer({
      env: {
        SIGHTLINE_BODY_LIMIT_BYTES: String(SMALL_LIMIT),
        SIGHTLINE_DECODED_LIMIT_BYTES: String(SMALL_DECODED_LIMIT),
        SIGHTLINE_TRUST_PROXY: 'true',
      },
    }),
  ]);
});
after(async () => {
  await server?.stop();
  await small?.stop();
});

/** uuids that must be stored (with a check on the stored row), and uuids that must not. */
const expectStored = new Map<string, (event: StoredEvent) => void>();
const expectAbsent = new Map<string, string>();
const stored = (uuid: string, check: (event: StoredEvent) => void = () => {}) => expectStored.set(uuid, check);
const absent = (uuid: string, why: string) => expectAbsent.set(uuid, why);
/** Checks over the whole snapshot, and the same bookkeeping for the small server. */
const generatedChecks: ((snap: StoredSnapshot) => void)[] = [];
const smallStored = new Map<string, string>();
const smallAbsent = new Map<string, string>();
const smallChecks: ((snap: StoredSnapshot) => void)[] = [];


/** A posthog-node style event (distinct_id at top level). */
function nodeEvent(tag: string, extra: Record<string, unknown> = {}): Record<string, any> {
  return { event: 'test event', distinct_id: `user-${tag}`, uuid: newUuid(), properties: { tag }, ...extra };
}

/** A posthog-js style event (distinct_id and token inside properties). */
function jsEvent(tag: string, token: string): Record<string, any> {
  return { event: '$pageview', uuid: newUuid(), timestamp: new Date().toISOString(), properties: { tag, distinct_id: `js-${tag}`, token, $lib: 'web' } };
}

const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');

async function ok(pathAndQuery: string, init: { method?: string; body?: string | Uint8Array; headers?: Record<string, string> }) {
  const response = await send(server, pathAndQuery, init);
  assert.equal(response.status, 200, `${init.method ?? 'POST'} ${pathAndQuery} → ${response.status} ${response.text}`);
  assert.deepEqual(response.json, { status: 1 });
  return response;
}

// -------------------------------------------------------------------------------------------

describe('encodings and body shapes', () => {
  test('plain JSON single event (legacy /capture/)', async () => {
    const event = nodeEvent('json-single', { api_key: server.projectKey });
    await capture(server, '/capture/', event);
    stored(event.uuid, (e) => {
      assert.equal(e.event, 'test event');
      assert.equal(e.distinct_id, 'user-json-single');
      assert.equal(e.properties.tag, 'json-single');
    });
  });

  test('posthog-node: {api_key, batch, sent_at} gzip with Content-Encoding', async () => {
    const batch = [nodeEvent('node-gzip-1'), nodeEvent('node-gzip-2')];
    const body = gzipSync(JSON.stringify({ api_key: server.projectKey, batch, sent_at: new Date().toISOString() }));
    await ok('/batch/', { body, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'user-agent': 'posthog-node/5.70.0' } });
    for (const event of batch) stored(event.uuid, (e) => assert.equal(e.distinct_id, event.distinct_id));
  });

  test('posthog-js: gzip by magic bytes only, sent as text/plain, distinct_id and token in properties', async () => {
    const batch = [jsEvent('js-gzip-1', server.projectKey), jsEvent('js-gzip-2', server.projectKey)];
    const body = gzipSync(JSON.stringify({ api_key: server.projectKey, batch, sent_at: new Date().toISOString() }));
    await ok('/i/v0/e/', { body, headers: { 'content-type': 'text/plain' } });
    for (const event of batch) stored(event.uuid, (e) => assert.equal(e.distinct_id, event.properties.distinct_id));
  });

  test('legacy posthog-js: ?compression=gzip-js&ip=1&_=…&ver=…', async () => {
    const event = jsEvent('gzip-js', server.projectKey);
    const body = gzipSync(JSON.stringify([event]));
    await ok(`/e/?compression=gzip-js&ip=1&_=${Date.now()}&ver=1.100.0`, { body, headers: { 'content-type': 'text/plain' } });
    stored(event.uuid);
  });

  test('base64 body without any hint, and with ?compression=base64', async () => {
    const a = jsEvent('b64-sniffed', server.projectKey);
    const b = jsEvent('b64-hinted', server.projectKey);
    await ok('/e/', { body: b64(JSON.stringify(a)), headers: { 'content-type': 'text/plain' } });
    await ok('/e/?compression=base64', { body: b64(JSON.stringify([b])), headers: { 'content-type': 'text/plain' } });
    stored(a.uuid);
    stored(b.uuid);
  });

  test('form bodies: data=<json>, data=<base64>&compression=base64, data=<base64> with ?compression=base64', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const plain = jsEvent('form-plain', server.projectKey);
    const inForm = jsEvent('form-b64-field', server.projectKey);
    const inQuery = jsEvent('form-b64-query', server.projectKey);
    await ok('/e/', { body: `data=${encodeURIComponent(JSON.stringify(plain))}`, headers: form });
    await ok('/e/', { body: `data=${encodeURIComponent(b64(JSON.stringify([inForm])))}&compression=base64`, headers: form });
    await ok('/i/v0/e/?compression=base64', { body: `data=${encodeURIComponent(b64(JSON.stringify({ api_key: server.projectKey, batch: [inQuery] })))}`, headers: form });
    // Old clients did not URL-encode the base64: `+` arrives as a space.
    const spaced = jsEvent('form-b64-spaces', server.projectKey);
    spaced.properties.padding = '>>>???~~~'.repeat(20); // makes + and / appear in the base64
    const encoded = b64(JSON.stringify(spaced));
    assert.ok(encoded.includes('+'), 'test payload needs a + in its base64');
    await ok('/e/', { body: `data=${encoded}&compression=base64`, headers: form });
    for (const e of [plain, inForm, inQuery, spaced]) stored(e.uuid, (s) => assert.equal(s.properties.tag, e.properties.tag));
  });

  test('lz64: form field compression=lz64, and ?compression=lz64 with a raw body', async () => {
    const inForm = jsEvent('lz64-form', server.projectKey);
    const inQuery = jsEvent('lz64-query', server.projectKey);
    inForm.properties.text = 'ünïcødé ✓ 😀 '.repeat(10);
    const formBody = `data=${encodeURIComponent(LZString.compressToBase64(JSON.stringify([inForm])))}&compression=lz64`;
    await ok('/e/', { body: formBody, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    await ok('/e/?compression=lz64', { body: LZString.compressToBase64(JSON.stringify(inQuery)), headers: { 'content-type': 'text/plain' } });
    stored(inForm.uuid, (e) => assert.equal(e.properties.text, inForm.properties.text));
    stored(inQuery.uuid);
  });

  test('GET ?data= (base64 and URL-encoded JSON)', async () => {
    const a = jsEvent('get-b64', server.projectKey);
    const b = jsEvent('get-json', server.projectKey);
    await ok(`/e/?data=${encodeURIComponent(b64(JSON.stringify(a)))}&ip=1&_=${Date.now()}`, { method: 'GET' });
    await ok(`/capture?data=${encodeURIComponent(JSON.stringify(b))}`, { method: 'GET' });
    stored(a.uuid);
    stored(b.uuid);
  });

  test('bare array of events', async () => {
    const events = [jsEvent('array-1', server.projectKey), jsEvent('array-2', server.projectKey)];
    await capture(server, '/e/', events);
    for (const e of events) stored(e.uuid);
  });

  test('body without any content type', async () => {
    const event = nodeEvent('no-content-type', { api_key: server.projectKey });
    await ok('/capture/', { body: new TextEncoder().encode(JSON.stringify(event)) });
    stored(event.uuid);
  });

  test('token in api_key, token, $token or properties.token', async () => {
    const cases = {
      api_key: nodeEvent('tok-api_key', { api_key: server.projectKey }),
      token: nodeEvent('tok-token', { token: server.projectKey }),
      $token: nodeEvent('tok-$token', { $token: server.projectKey }),
      'properties.token': nodeEvent('tok-properties', { properties: { tag: 'tok-properties', token: server.projectKey } }),
    };
    for (const [where, event] of Object.entries(cases)) {
      const response = await send(server, '/capture/', { body: JSON.stringify(event), headers: { 'content-type': 'application/json' } });
      assert.equal(response.status, 200, `token in ${where}: ${response.text}`);
      stored(event.uuid);
    }
    // A batch envelope may carry the key as `token` too.
    const envelope = nodeEvent('tok-envelope-token');
    await capture(server, '/batch', { token: server.projectKey, batch: [envelope] });
    stored(envelope.uuid);
  });

  test('distinct_id at top level, as $distinct_id, or inside properties', async () => {
    const top = nodeEvent('did-top', { api_key: server.projectKey });
    const dollar = { event: 'test event', uuid: newUuid(), $distinct_id: 'dollar-did', properties: {}, api_key: server.projectKey };
    const inside = { event: 'test event', uuid: newUuid(), properties: { distinct_id: 'inside-did' }, api_key: server.projectKey };
    for (const event of [top, dollar, inside]) await capture(server, '/capture', event);
    stored(top.uuid, (e) => assert.equal(e.distinct_id, 'user-did-top'));
    stored(dollar.uuid, (e) => assert.equal(e.distinct_id, 'dollar-did'));
    stored(inside.uuid, (e) => assert.equal(e.distinct_id, 'inside-did'));
  });

  test('every route, with and without trailing slash, with odd query strings', async () => {
    const paths = ['/capture', '/capture/', '/batch', '/batch/', '/e', '/e/', '/i/v0/e', '/i/v0/e/', '/track', '/track/'];
    for (const path of paths) {
      const event = nodeEvent(`route-${path}`);
      await capture(server, `${path}?ip=1&_=${Date.now()}&ver=1.2.3&retry_count=0&unknown=x`, { api_key: server.projectKey, batch: [event] });
      stored(event.uuid, (e) => assert.equal(e.properties.tag, `route-${path}`));
    }
  });

  test('/engage: a legacy people update without an event name becomes $identify', async () => {
    const uuid = newUuid();
    await capture(server, '/engage/', { $token: server.projectKey, $distinct_id: 'engage-user', uuid, $set: { plan: 'gold' } });
    stored(uuid, (e) => {
      assert.equal(e.event, '$identify');
      assert.equal(e.distinct_id, 'engage-user');
      assert.deepEqual(e.properties.$set, { plan: 'gold' });
    });
  });

  test('a batch of 12 000 events (no batch size limit, more than one flush) is acknowledged once all of it is stored', async () => {
    const batch = Array.from({ length: 12_000 }, (_, i) => ({ event: 'bulk', distinct_id: `bulk-${i % 50}`, uuid: newUuid(), properties: { i } }));
    await capture(server, '/batch/', gzipSync(JSON.stringify({ api_key: server.projectKey, batch })), { 'content-encoding': 'gzip' });
    for (const e of batch) stored(e.uuid, (s) => assert.equal(s.properties.i, e.properties.i));
  });

  test('NaN / Infinity from Python-era clients become null', async () => {
    const uuid = newUuid();
    const body = `{"api_key":"${server.projectKey}","event":"nan event","distinct_id":"py","uuid":"${uuid}","properties":{"x":NaN,"y":Infinity,"s":"NaN"}}`;
    await ok('/capture/', { body, headers: { 'content-type': 'application/json' } });
    stored(uuid, (e) => assert.deepEqual([e.properties.x, e.properties.y, e.properties.s], [null, null, 'NaN']));
  });
});

// -------------------------------------------------------------------------------------------

describe('CORS', () => {
  test('OPTIONS preflight from another origin echoes Origin and requested headers, allows credentials', async () => {
    const response = await send(server, '/i/v0/e/', {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-probe' },
    });
    assert.ok(response.status === 200 || response.status === 204, `preflight status ${response.status}`);
    assert.equal(response.headers.get('access-control-allow-origin'), 'http://localhost:5173');
    assert.equal(response.headers.get('access-control-allow-credentials'), 'true');
    assert.equal(response.headers.get('access-control-allow-headers'), 'content-type,x-probe');
    assert.match(response.headers.get('access-control-allow-methods') ?? '', /POST/);
    assert.match(response.headers.get('access-control-allow-methods') ?? '', /GET/);
    assert.match(response.headers.get('vary') ?? '', /Origin/i);
  });

  test('preflight on every capture path, with and without slash', async () => {
    for (const path of ['/e', '/e/', '/batch/', '/capture', '/i/v0/e', '/track/', '/engage']) {
      const response = await send(server, path, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      assert.ok(response.status === 200 || response.status === 204, `${path} preflight status ${response.status}`);
      assert.equal(response.headers.get('access-control-allow-origin'), 'https://app.example.com', path);
    }
  });

  test('POST answers (success and errors) carry the CORS headers', async () => {
    const event = jsEvent('cors-post', server.projectKey);
    const headers = { origin: 'http://localhost:5173', 'content-type': 'text/plain' };
    const success = await send(server, '/i/v0/e/', { body: gzipSync(JSON.stringify({ api_key: server.projectKey, batch: [event] })), headers });
    assert.equal(success.status, 200);
    stored(event.uuid);
    const failure = await send(server, '/i/v0/e/', { body: '{not json', headers });
    assert.equal(failure.status, 400);
    const unauthorized = await send(server, '/i/v0/e/', { body: JSON.stringify({ api_key: 'phc_unknown', batch: [jsEvent('x', 'phc_unknown')] }), headers });
    assert.equal(unauthorized.status, 401);
    for (const response of [success, failure, unauthorized]) {
      assert.equal(response.headers.get('access-control-allow-origin'), 'http://localhost:5173');
      assert.equal(response.headers.get('access-control-allow-credentials'), 'true');
    }
  });
});

// -------------------------------------------------------------------------------------------

describe('errors', () => {
  const assertAuthError = (response: Awaited<ReturnType<typeof send>>) => {
    assert.equal(response.status, 401, response.text);
    assert.equal(response.json.type, 'authentication_error');
    assert.equal(response.json.code, 'invalid_api_key');
    assert.equal(typeof response.json.detail, 'string');
    assert.ok(!('attr' in response.json), 'authentication errors have no attr');
    assert.deepEqual(Object.keys(response.json).sort(), ['code', 'detail', 'type']);
  };
  const assertInvalidPayload = (response: Awaited<ReturnType<typeof send>>, what: string) => {
    assert.equal(response.status, 400, `${what}: ${response.status} ${response.text}`);
    assert.deepEqual(Object.keys(response.json).sort(), ['attr', 'code', 'detail', 'type'], what);
    assert.equal(response.json.type, 'validation_error', what);
    assert.equal(response.json.code, 'invalid_payload', what);
    assert.equal(response.json.attr, null, what);
    assert.equal(typeof response.json.detail, 'string', what);
  };
  const json = { 'content-type': 'application/json' };

  test('401 invalid_api_key: missing key, unknown key, personal key; nothing stored', async () => {
    const missing = nodeEvent('no-key');
    const unknown = nodeEvent('unknown-key');
    const personal = nodeEvent('personal-key');
    assertAuthError(await send(server, '/capture/', { body: JSON.stringify(missing), headers: json }));
    assertAuthError(await send(server, '/batch/', { body: JSON.stringify({ api_key: 'phc_doesnotexist', batch: [unknown] }), headers: json }));
    assertAuthError(await send(server, '/batch/', { body: JSON.stringify({ api_key: server.personalKey, batch: [personal] }), headers: json }));
    absent(missing.uuid, 'no api key');
    absent(unknown.uuid, 'unknown api key');
    absent(personal.uuid, 'personal key used as project key');
  });

  test('a personal API key with project_id captures into that project (legacy capture); otherwise invalid_project or invalid_personal_api_key', async () => {
    const second = await (await server.api('/api/projects/', { method: 'POST', body: { name: 'captured by personal key' } })).json();
    const inBody = nodeEvent('personal-body');
    const inQuery = nodeEvent('personal-query');
    const asText = nodeEvent('personal-text-id');
    let response = await send(server, '/batch/', { body: JSON.stringify({ api_key: server.personalKey, project_id: second.id, batch: [inBody] }), headers: json });
    assert.equal(response.status, 200, response.text);
    response = await send(server, `/capture/?project_id=${second.id}`, { body: JSON.stringify({ ...inQuery, api_key: server.personalKey }), headers: json });
    assert.equal(response.status, 200, response.text);
    response = await send(server, '/e/', { body: JSON.stringify({ ...asText, api_key: server.personalKey, project_id: String(second.id) }), headers: json });
    assert.equal(response.status, 200, response.text);
    const listed = await (await server.api(`/api/projects/${second.id}/events/?limit=10`)).json();
    assert.deepEqual(listed.results.map((e: any) => e.id).sort(), [inBody.uuid, inQuery.uuid, asText.uuid].sort());
    for (const event of [inBody, inQuery, asText]) stored(event.uuid);

    const invalidProject = (reply: Awaited<ReturnType<typeof send>>, what: string) => {
      assert.equal(reply.status, 400, `${what}: ${reply.text}`);
      assert.deepEqual(reply.json, { type: 'validation_error', code: 'invalid_project', detail: reply.json.detail, attr: 'project_id' }, what);
      assert.equal(typeof reply.json.detail, 'string');
    };
    const other = await createTenant(server, 'capture-other');
    const refused: Record<string, any>[] = [];
    const attempt = (key: string, projectId: unknown) => {
      const event = nodeEvent(`refused-${refused.length}`);
      refused.push(event);
      return send(server, '/batch/', { body: JSON.stringify({ api_key: key, project_id: projectId, batch: [event] }), headers: json });
    };
    invalidProject(await attempt(server.personalKey, 'abc'), 'not a number');
    invalidProject(await attempt(server.personalKey, -3), 'negative');
    invalidProject(await attempt(server.personalKey, 987654), 'no such project');
    invalidProject(await attempt(server.personalKey, other.projectId), "another organization's project");
    const invalidKey = async (reply: Awaited<ReturnType<typeof send>>, what: string) => {
      assert.equal(reply.status, 401, `${what}: ${reply.text}`);
      assert.deepEqual(Object.keys(reply.json).sort(), ['code', 'detail', 'type'], what);
      assert.equal(reply.json.code, 'invalid_personal_api_key', what);
      assert.equal(reply.json.type, 'authentication_error', what);
    };
    await invalidKey(await attempt('phx_thisKeyDoesNotExistAnywhere000000000000000000', second.id), 'unknown personal key');
    const readOnly = await (await server.api('/api/personal_api_keys/', { method: 'POST', body: { label: 'read only', scopes: ['query:read'] } })).json();
    await invalidKey(await attempt(readOnly.value, second.id), 'a key limited by scopes');
    // The other organization's owner may write to their own project.
    response = await attempt(other.ownerKey, other.projectId);
    assert.equal(response.status, 200, response.text);
    stored(refused.pop()!.uuid);
    for (const event of refused) absent(event.uuid, 'refused personal-key capture');
  });

  test('401 for a batch whose events disagree on the key', async () => {
    const a = nodeEvent('mixed-a', { api_key: server.projectKey });
    const b = nodeEvent('mixed-b', { api_key: 'phc_other' });
    assertAuthError(await send(server, '/e/', { body: JSON.stringify([a, b]), headers: json }));
    absent(a.uuid, 'inconsistent keys');
  });

  test('400 invalid_payload: bad JSON, bad gzip, bad base64, bad lz64', async () => {
    const key = server.projectKey;
    assertInvalidPayload(await send(server, '/batch/', { body: `{"api_key":"${key}","batch":[`, headers: json }), 'truncated JSON');
    assertInvalidPayload(await send(server, '/batch/', { body: 'hello world', headers: { 'content-type': 'text/plain' } }), 'not JSON');
    const truncatedGzip = gzipSync(JSON.stringify({ api_key: key, batch: [nodeEvent('bad-gzip')] })).subarray(0, 30);
    assertInvalidPayload(await send(server, '/i/v0/e/', { body: truncatedGzip, headers: { 'content-type': 'text/plain' } }), 'truncated gzip');
    const corrupt = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), Buffer.from('definitely not deflate data')]);
    assertInvalidPayload(await send(server, '/i/v0/e/', { body: corrupt, headers: { 'content-type': 'text/plain' } }), 'corrupt gzip');
    assertInvalidPayload(
      await send(server, '/batch/', { body: 'this is not gzip at all', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } }),
      'Content-Encoding gzip on a non-gzip body',
    );
    assertInvalidPayload(await send(server, '/e/?compression=base64', { body: '@@@ not base64 !!!', headers: { 'content-type': 'text/plain' } }), 'bad base64');
    assertInvalidPayload(
      await send(server, '/e/', { body: 'data=%40%40%40%21%21&compression=base64', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      'bad base64 in a form',
    );
    assertInvalidPayload(await send(server, '/e/?compression=lz64', { body: '@@@@ not lz !!!!', headers: { 'content-type': 'text/plain' } }), 'bad lz64');
    assertInvalidPayload(
      await send(server, '/e/', { body: 'data=zzzzzzzz&compression=lz64', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      'lz64 that decodes to garbage',
    );
    assertInvalidPayload(
      await send(server, '/e/', { body: 'ver=1.2.3&compression=base64', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      'form without data',
    );
  });

  test('400 invalid_payload: wrong shapes and empty bodies', async () => {
    const key = server.projectKey;
    const shapes: [string, string][] = [
      ['a JSON string', '"hello"'],
      ['a number', '42'],
      ['null', 'null'],
      ['true', 'true'],
      ['empty array', '[]'],
      ['empty batch', JSON.stringify({ api_key: key, batch: [] })],
      ['batch is not an array', JSON.stringify({ api_key: key, batch: { event: 'x', distinct_id: 'y' } })],
      ['batch is a string', JSON.stringify({ api_key: key, batch: 'events' })],
    ];
    for (const [what, body] of shapes) assertInvalidPayload(await send(server, '/batch/', { body, headers: json }), what);
    assertInvalidPayload(await send(server, '/batch/', { body: '', headers: json }), 'empty POST body');
    assertInvalidPayload(await send(server, '/e/', { method: 'GET' }), 'GET without data');
  });

  test('413 for a body over the configured limit; just under it is accepted', async () => {
    const event = nodeEvent('small-under-limit', { api_key: small.projectKey });
    event.properties.pad = 'x'.repeat(SMALL_LIMIT - 2048);
    const under = await send(small, '/capture/', { body: JSON.stringify(event), headers: json });
    assert.equal(under.status, 200, under.text);
    const over = nodeEvent('small-over-limit', { api_key: small.projectKey });
    over.properties.pad = 'x'.repeat(SMALL_LIMIT + 10);
    const response = await send(small, '/capture/', { body: JSON.stringify(over), headers: json });
    assert.equal(response.status, 413, response.text);
    assert.equal(response.json.code, 'request_too_large');
    // Compressed bodies count as sent: incompressible gzip over the limit is refused too.
    const random = Buffer.from(Array.from({ length: SMALL_LIMIT + 1024 }, () => Math.floor(Math.random() * 256)));
    const gz = await send(small, '/i/v0/e/', { body: gzipSync(random), headers: { 'content-type': 'text/plain' } });
    assert.equal(gz.status, 413, gz.text);
    smallStored.set(event.uuid, 'under the limit');
    smallAbsent.set(over.uuid, 'over the limit');
  });

  test('gzip bomb past the decoded limit → 413, and the server keeps answering', async () => {
    const bomb = gzipSync(Buffer.alloc(SMALL_DECODED_LIMIT * 4, 0x20));
    assert.ok(bomb.length < SMALL_LIMIT, 'bomb fits the body limit');
    const response = await send(small, '/i/v0/e/', { body: bomb, headers: { 'content-type': 'text/plain' } });
    assert.equal(response.status, 413, response.text);
    const hinted = await send(small, '/e/?compression=gzip-js', { body: bomb, headers: { 'content-type': 'text/plain' } });
    assert.equal(hinted.status, 413, hinted.text);
    const after = nodeEvent('after-small-bomb', { api_key: small.projectKey });
    const ok = await send(small, '/capture/', { body: JSON.stringify(after), headers: json });
    assert.equal(ok.status, 200, ok.text);
    smallStored.set(after.uuid, 'sent after the bomb');
  });

  test('default limits: a real >20 MB body → 413, a gzip bomb past 100 MB → 413, server still answers', async () => {
    const big = nodeEvent('over-20mb', { api_key: server.projectKey });
    big.properties.pad = 'y'.repeat(21 * MB);
    const response = await send(server, '/batch/', { body: JSON.stringify({ api_key: server.projectKey, batch: [big] }), headers: json });
    assert.equal(response.status, 413, response.text.slice(0, 200));
    absent(big.uuid, 'body over 20 MB');

    const bomb = gzipSync(Buffer.alloc(120 * MB, 0x20), { level: 1 });
    assert.ok(bomb.length < 1 * MB, `bomb is small (${bomb.length} bytes)`);
    const bombed = await send(server, '/i/v0/e/', { body: bomb, headers: { 'content-type': 'text/plain' } });
    assert.equal(bombed.status, 413, bombed.text);

    const afterwards = nodeEvent('after-big-bomb', { api_key: server.projectKey });
    await capture(server, '/capture/', afterwards);
    stored(afterwards.uuid);
  });

  test('a single event over 1 MB is dropped, the rest of its batch is stored', async () => {
    const huge = nodeEvent('huge-event');
    huge.properties.pad = 'z'.repeat(MB + 10);
    const fine = nodeEvent('next-to-huge');
    await capture(server, '/batch/', { api_key: server.projectKey, batch: [huge, fine] });
    absent(huge.uuid, 'event over 1 MB');
    stored(fine.uuid);
  });

  test('silent drops: no name, no distinct_id, empty distinct_id → 200 and nothing stored', async () => {
    const noName = { distinct_id: 'user-no-name', uuid: newUuid(), properties: {} };
    const emptyName = { event: '', distinct_id: 'user-empty-name', uuid: newUuid(), properties: {} };
    const noDistinct = { event: 'no distinct id', uuid: newUuid(), properties: {} };
    const emptyDistinct = { event: 'empty distinct id', distinct_id: '', uuid: newUuid(), properties: {} };
    const emptyInProps = { event: 'empty distinct id in properties', uuid: newUuid(), properties: { distinct_id: '' } };
    const nullDistinct = { event: 'null distinct id', distinct_id: null, uuid: newUuid(), properties: {} };
    for (const event of [noName, emptyName, noDistinct, emptyDistinct, emptyInProps, nullDistinct]) {
      await capture(server, '/capture/', { ...event, api_key: server.projectKey });
      absent(event.uuid, `silently dropped: ${JSON.stringify(event)}`);
    }
    // In a batch, only the invalid ones go.
    const good = nodeEvent('batch-with-invalid');
    const bad = { event: 'x', uuid: newUuid(), properties: {} };
    await capture(server, '/batch/', { api_key: server.projectKey, batch: [bad, good] });
    absent(bad.uuid, 'no distinct id in a batch');
    stored(good.uuid);
  });
});

// -------------------------------------------------------------------------------------------

describe('timestamps, uuids, IP', () => {
  const windows = new Map<string, { from: number; to: number }>();
  /** Sends and records [before, after] + delta: the server's "now" lies between the two. */
  async function timed(pathAndQuery: string, body: unknown, uuid: string, deltaMs: number) {
    const from = Date.now();
    await capture(server, pathAndQuery, body);
    const to = Date.now();
    windows.set(uuid, { from: from + deltaMs, to: to + deltaMs });
    stored(uuid, (e) => {
      const at = Date.parse(e.timestamp);
      const w = windows.get(uuid)!;
      assert.ok(at >= w.from - 1 && at <= w.to + 1, `timestamp ${e.timestamp} not in [${new Date(w.from).toISOString()}, ${new Date(w.to).toISOString()}]`);
    });
  }

  test('sent_at corrects client clock skew: now + (timestamp − sent_at)', async () => {
    const event = nodeEvent('skew', { timestamp: '2021-06-01T00:00:00.000Z' });
    await timed('/batch/', { api_key: server.projectKey, sent_at: '2021-06-01T00:00:30.000Z', batch: [event] }, event.uuid, -30_000);
  });

  test('a per-event sent_at and the query parameter _ (ms) work as sent_at too', async () => {
    const perEvent = nodeEvent('skew-per-event', { timestamp: '2021-06-01T00:00:00.000Z', sent_at: '2021-06-01T00:01:00.000Z' });
    await timed('/batch/', { api_key: server.projectKey, batch: [perEvent] }, perEvent.uuid, -60_000);
    const sentAt = Date.now();
    const viaQuery = jsEvent('skew-underscore', server.projectKey);
    viaQuery.timestamp = new Date(sentAt - 5_000).toISOString();
    await timed(`/e/?_=${sentAt}&ver=1.100.0`, [viaQuery], viaQuery.uuid, -5_000);
  });

  test('offset (ms before now) overrides timestamp', async () => {
    const event = nodeEvent('offset', { offset: 120_000, timestamp: '2021-06-01T00:00:00.000Z' });
    await timed('/capture/', { ...event, api_key: server.projectKey }, event.uuid, -120_000);
  });

  test('more than 23 h in the future is clamped to now; less is kept', async () => {
    const clamped = nodeEvent('future-clamped', { timestamp: new Date(Date.now() + 48 * 3600_000).toISOString() });
    await timed('/capture/', { ...clamped, api_key: server.projectKey }, clamped.uuid, 0);
    const soon = new Date(Date.now() + 3600_000);
    const kept = nodeEvent('future-kept', { timestamp: soon.toISOString() });
    await capture(server, '/capture/', { ...kept, api_key: server.projectKey });
    stored(kept.uuid, (e) => assert.equal(e.timestamp, soon.toISOString()));
  });

  test('$ignore_sent_at keeps the timestamp as sent; without sent_at the timestamp is kept too', async () => {
    const ignoring = nodeEvent('ignore-sent-at', { timestamp: '2021-06-01T00:00:00.000Z' });
    ignoring.properties.$ignore_sent_at = true;
    const plain = nodeEvent('no-sent-at', { timestamp: '2022-02-03T04:05:06.789+02:00' });
    await capture(server, '/batch/', { api_key: server.projectKey, sent_at: '2021-06-01T00:10:00.000Z', batch: [ignoring] });
    await capture(server, '/batch/', { api_key: server.projectKey, batch: [plain] });
    stored(ignoring.uuid, (e) => assert.equal(e.timestamp, '2021-06-01T00:00:00.000Z'));
    stored(plain.uuid, (e) => assert.equal(e.timestamp, '2022-02-03T02:05:06.789Z'));
  });

  test('without timestamp the event is stamped with the receive time', async () => {
    const event = nodeEvent('no-timestamp');
    await timed('/capture/', { ...event, api_key: server.projectKey }, event.uuid, 0);
  });

  test('uuid: kept when valid (any case), generated v7 when absent, invalid drops only that event', async () => {
    const upper = newUuid().toUpperCase();
    const kept = nodeEvent('uuid-upper', { uuid: upper });
    const generated = nodeEvent('uuid-generated');
    delete generated.uuid;
    generated.event = 'event without uuid';
    const invalid = nodeEvent('uuid-invalid', { uuid: 'not-a-uuid' });
    invalid.event = 'event with invalid uuid';
    const sibling = nodeEvent('uuid-sibling');
    await capture(server, '/batch/', { api_key: server.projectKey, batch: [kept, generated, invalid, sibling] });
    stored(upper.toLowerCase(), (e) => assert.equal(e.properties.tag, 'uuid-upper'));
    stored(sibling.uuid);
    generatedChecks.push((snap) => {
      const rows = snap.events.filter((e) => e.event === 'event without uuid');
      assert.equal(rows.length, 1);
      assert.match(rows[0].uuid, UUID_V7);
      assert.equal(snap.events.filter((e) => e.event === 'event with invalid uuid').length, 0, 'invalid uuid dropped');
    });
  });

  test('$ip comes from the socket; X-Forwarded-For is ignored unless the proxy is trusted', async () => {
    const plain = nodeEvent('ip-socket');
    const forged = nodeEvent('ip-forged-xff');
    const own = nodeEvent('ip-own');
    own.properties.$ip = '203.0.113.7';
    await capture(server, '/batch/', { api_key: server.projectKey, batch: [plain] });
    await capture(server, '/batch/', { api_key: server.projectKey, batch: [forged] }, { 'x-forwarded-for': '81.2.69.142' });
    await capture(server, '/batch/', { api_key: server.projectKey, batch: [own] });
    stored(plain.uuid, (e) => assert.equal(e.properties.$ip, '127.0.0.1'));
    stored(forged.uuid, (e) => {
      assert.equal(e.properties.$ip, '127.0.0.1');
      assert.equal(e.properties.$geoip_country_code, undefined);
    });
    stored(own.uuid, (e) => assert.equal(e.properties.$ip, '203.0.113.7'));

    const trusted = nodeEvent('ip-trusted-xff', { api_key: small.projectKey });
    await capture(small, '/capture/', trusted, { 'x-forwarded-for': '81.2.69.142, 10.0.0.1' });
    smallStored.set(trusted.uuid, 'trusted proxy');
    smallChecks.push((snap) => {
      const e = eventsByUuid(snap).get(trusted.uuid)!;
      assert.equal(e.properties.$ip, '81.2.69.142');
      assert.equal(e.properties.$geoip_country_code, 'GB');
    });
  });
});

// -------------------------------------------------------------------------------------------

describe('acknowledged means durable, and uuids de-duplicate', () => {
  const repeated = [nodeEvent('dup-1'), nodeEvent('dup-2'), nodeEvent('dup-3')];
  const inBatchTwice = nodeEvent('dup-in-batch');

  test('the same batch posted twice (and a uuid twice in one batch) is stored once', async () => {
    const body = { api_key: server.projectKey, sent_at: new Date().toISOString(), batch: repeated };
    await capture(server, '/batch/', body);
    await capture(server, '/batch/', body);
    // Concurrently too: both requests may land in one flush.
    await Promise.all([capture(server, '/batch/', body), capture(server, '/i/v0/e/', gzipSync(JSON.stringify(body)), { 'content-type': 'text/plain' })]);
    await capture(server, '/batch/', { api_key: server.projectKey, batch: [inBatchTwice, { ...inBatchTwice, properties: { tag: 'second copy' } }] });
    for (const e of repeated) stored(e.uuid);
    stored(inBatchTwice.uuid, (e) => assert.equal(e.properties.tag, 'dup-in-batch', 'the first copy wins'));
  });

  test('stop → everything acknowledged is stored exactly once', async () => {
    snapshot = await stopAndRead(server);
    smallSnapshot = await stopAndRead(small);
    assert.ok(expectStored.size > 60 && expectAbsent.size > 10, 'the earlier tests registered their expectations');
    const counts = new Map<string, number>();
    for (const e of snapshot.events) counts.set(e.uuid, (counts.get(e.uuid) ?? 0) + 1);
    const byUuid = eventsByUuid(snapshot);
    for (const [uuid, check] of expectStored) {
      assert.equal(counts.get(uuid), 1, `event ${uuid} stored ${counts.get(uuid) ?? 0} times`);
      check(byUuid.get(uuid)!);
    }
    for (const [uuid, why] of expectAbsent) assert.ok(!byUuid.has(uuid), `event ${uuid} should not be stored (${why})`);
    for (const check of generatedChecks) check(snapshot);
    for (const [uuid, why] of [...counts].filter(([, n]) => n > 1)) assert.fail(`uuid ${uuid} stored ${why} times`);
    for (const e of snapshot.events) assert.ok(e.person_id, `event ${e.uuid} has a person id`);

    const smallByUuid = eventsByUuid(smallSnapshot);
    for (const [uuid, why] of smallStored) assert.ok(smallByUuid.has(uuid), `small server: ${uuid} missing (${why})`);
    for (const [uuid, why] of smallAbsent) assert.ok(!smallByUuid.has(uuid), `small server: ${uuid} stored (${why})`);
    for (const check of smallChecks) check(smallSnapshot);
  });

  test('restart on the same data dir: everything is still there, and old uuids still de-duplicate', async () => {
    const restarted = await startServer({ dataDir: server.dataDir, projectKey: server.projectKey, personalKey: server.personalKey });
    const fresh = nodeEvent('after-restart');
    try {
      await capture(restarted, '/batch/', { api_key: server.projectKey, batch: [...repeated, fresh] });
    } finally {
      assert.equal(await restarted.stop(), 0);
    }
    const again = await readStores(server.dataDir);
    assert.equal(again.events.length, snapshot.events.length + 1, 'only the new event was added');
    const before = eventsByUuid(snapshot);
    const now = eventsByUuid(again);
    for (const [uuid, event] of before) assert.deepEqual(now.get(uuid), event, `event ${uuid} unchanged after restart`);
    assert.ok(now.has(fresh.uuid));
    const personsNow = new Map(again.persons.map((p) => [p.uuid, p]));
    for (const person of snapshot.persons) assert.deepEqual(personsNow.get(person.uuid), person, `person ${person.uuid} unchanged after restart`);
    assert.equal(again.persons.length, snapshot.persons.length + 1, 'one new person (user-after-restart)');
  });
});
