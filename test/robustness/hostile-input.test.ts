/**
 * Hostile input: a hand-made corpus and fast-check properties against every public
 * route and every /api/ operation listed by /api/schema/. Whatever arrives, the answer is a 2xx
 * or a 4xx with the API's error body, never a 5xx, a crash or a hang; a normal request right
 * after each case is served correctly; ingestion never degrades; bombs are refused while
 * inflating, with the server's peak memory staying bounded.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';

import { addUser } from '../helpers/api-fixtures.js';
import {
  alive,
  apiOperations,
  assertSpecReply,
  collectionOf,
  encodeAny,
  fillPath,
  minimalBody,
  newUuid,
  request,
  type ApiOperation,
  type Reply,
} from '../helpers/robustness.js';
import { memoryOf } from '../helpers/process-memory.js';
import { startServer, type TestServer } from '../helpers/server.js';

const MB = 1024 * 1024;
const BODY_LIMIT = 2 * MB;
const DECODED_LIMIT = 8 * MB;
const CAPTURE_ROUTES = ['/capture/', '/batch/', '/e/', '/i/v0/e/', '/track/', '/engage/'];
const FLAG_ROUTES = ['/decide?v=3', '/flags?v=2'];
const BODY_ROUTES = [...CAPTURE_ROUTES, ...FLAG_ROUTES];
// HOSTILE_RUNS multiplies the number of generated cases; HOSTILE_SEED replays a failure.
const FC_RUNS = Number(process.env.HOSTILE_RUNS ?? 1);
const SEED = process.env.HOSTILE_SEED ? Number(process.env.HOSTILE_SEED) : undefined;

let server: TestServer;
let K: string;
let operations: ApiOperation[];
/** Path parameter values naming real objects of the server's own organization. */
const ids: Record<string, string> = {};
const canaries: string[] = [];

before(async () => {
  server = await startServer({
    env: {
      SIGHTLINE_BODY_LIMIT_BYTES: String(BODY_LIMIT),
      SIGHTLINE_DECODED_LIMIT_BYTES: String(DECODED_LIMIT),
      // Thousands of hostile /api/ requests on one key: the rate limit is limits.test.ts's business.
      SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0',
      SIGHTLINE_GEOIP: 'false',
    },
  });
  K = server.projectKey;
  await expectOk(await request(server, 'POST', '/batch/', jsonBody({ api_key: K, batch: [{ event: 'seed', distinct_id: 'seed', properties: { color: 'red' } }] })));
  const flag = await api('POST', '/api/projects/@current/feature_flags/', { key: 'always-on', filters: { groups: [{ rollout_percentage: 100 }] } });
  const target = await api('POST', '/api/projects/@current/feature_flags/', { key: 'fuzz-target', filters: { groups: [{ rollout_percentage: 50 }] } });
  assert.ok(flag.id && target.id);
  const project = await api('GET', '/api/projects/@current/');
  const organization = await api('GET', '/api/organizations/@current/');
  const member = await addUser(server, organization.id, 'fuzz-member@robustness.test', 1);
  const invite = await api('POST', `/api/organizations/${organization.id}/invites/`, { target_email: 'invited@robustness.test' });
  const key = await api('POST', '/api/personal_api_keys/', { label: 'spare', scopes: ['*'] });
  const property = (await api('GET', '/api/projects/@current/property_definitions/?search=color')).results[0];
  const eventDefinition = (await api('GET', '/api/projects/@current/event_definitions/?search=seed')).results[0];
  const event = (await api('GET', '/api/projects/@current/events/?event=seed')).results[0];
  // Indexed by the collection a parameter points into (see collectionOf).
  Object.assign(ids, {
    projects: String(project.id),
    organizations: organization.id,
    members: member.uuid,
    invites: invite.id,
    personal_api_keys: key.id,
    property_definitions: property.id,
    event_definitions: eventDefinition.id,
    events: event.id,
    feature_flags: String(target.id),
  });
  operations = await apiOperations(server);
});

after(async () => {
  if (server) assert.equal(await server.stop(), 0, 'the server exits cleanly after the hostile run');
});

// ---------------------------------------------------------------------------------------------
// helpers

const jsonBody = (value: unknown) => ({ body: JSON.stringify(value), headers: { 'content-type': 'application/json' } });

async function expectOk(reply: Reply): Promise<Reply> {
  assert.equal(reply.status, 200, reply.text.slice(0, 300));
  return reply;
}

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const headers: Record<string, string> = { authorization: `Bearer ${server.personalKey}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const reply = await request(server, method, path, { body: body === undefined ? undefined : JSON.stringify(body), headers });
  assert.ok(reply.status < 300, `${method} ${path} → ${reply.status} ${reply.text}`);
  return reply.json;
}

/** A normal capture that must be stored; counted at the end. */
async function canary(): Promise<void> {
  const uuid = newUuid();
  const reply = await request(server, 'POST', '/capture/', jsonBody({ api_key: K, event: 'canary', distinct_id: 'canary', uuid }));
  assert.equal(reply.status, 200, `normal capture after a hostile case → ${reply.status} ${reply.text}`);
  assert.deepEqual(reply.json, { status: 1 });
  canaries.push(uuid);
}

async function normalDecide(): Promise<void> {
  const reply = await request(server, 'POST', '/decide?v=3', jsonBody({ api_key: K, distinct_id: 'normal-user' }));
  assert.equal(reply.status, 200, `normal /decide after a hostile case → ${reply.status} ${reply.text}`);
  assert.equal(reply.json.featureFlags['always-on'], true);
}

async function normalApi(): Promise<void> {
  const reply = await request(server, 'GET', '/api/projects/@current/', { headers: { authorization: `Bearer ${server.personalKey}` } });
  assert.equal(reply.status, 200, `normal /api/ request after a hostile case → ${reply.status} ${reply.text}`);
}

/** Sends one hostile request, checks the answer's shape, then that the server still serves. */
async function hostile(
  method: string,
  path: string,
  init: { body?: string | Uint8Array; headers?: Record<string, string> },
  label: string,
  expectStatus?: number,
): Promise<Reply> {
  const reply = await request(server, method, path, init);
  assertSpecReply(reply, `${label}: ${method} ${path.slice(0, 120)}`);
  if (expectStatus !== undefined) assert.equal(reply.status, expectStatus, `${label}: ${method} ${path} → ${reply.status} ${reply.text.slice(0, 300)}`);
  assert.ok(alive(server), `server died after ${label}`);
  if (path.startsWith('/api/')) await normalApi();
  else if (path.startsWith('/decide') || path.startsWith('/flags')) await normalDecide();
  else await canary();
  return reply;
}

const deepArrays = (n: number) => '['.repeat(n) + ']'.repeat(n);
const deepObjects = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

/** A text body for a route: capture routes get an event, flag routes a flag request. */
function payload(route: string, fields: string): string {
  return route.startsWith('/decide') || route.startsWith('/flags')
    ? `{"api_key":"${K}","distinct_id":"hostile",${fields}}`
    : `{"api_key":"${K}","event":"hostile","distinct_id":"hostile",${fields}}`;
}

// A gzip member of 4 MB of zeros is ~4 KB; Node's gunzip reads concatenated members, so 64 of
// them make a ~260 KB body that inflates to 256 MB, 32 times the decoded limit.
const bombMember = gzipSync(Buffer.alloc(4 * MB), { level: 9 });
const gzipBomb = Buffer.concat(Array.from({ length: 64 }, () => bombMember));

const LZ_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=';
/**
 * lz-string's base64 format, written by hand: one literal, then `codes` references to the
 * entry being defined (LZW's KwKwK case), each one character longer than the last. 40,000
 * codes (~96 KB) decode to 800 million characters.
 */
function lz64Bomb(codes: number): string {
  const out: string[] = [];
  let value = 0;
  let position = 32;
  const put = (bits: number, count: number) => {
    for (let i = 0; i < count; i++) {
      if ((bits >> i) & 1) value |= position;
      position >>= 1;
      if (position === 0) {
        out.push(LZ_ALPHABET[value]);
        value = 0;
        position = 32;
      }
    }
  };
  put(0, 2);
  put(0x61, 8);
  let dictSize = 4;
  let numBits = 3;
  let enlargeIn = 4;
  for (let i = 0; i < codes; i++) {
    put(dictSize++, numBits);
    if (--enlargeIn === 0) enlargeIn = 2 ** numBits++;
  }
  put(2, numBits);
  if (position !== 32) out.push(LZ_ALPHABET[value]);
  return out.join('');
}

// ---------------------------------------------------------------------------------------------
// bombs first, while the server's peak memory is still its start-up peak

test('gzip, base64-gzip and lz64 bombs are refused with 413 while inflating, in bounded memory', async () => {
  const pid = server.process.pid!;
  const before = memoryOf(pid);
  const lzBomb = lz64Bomb(40_000);
  for (const route of BODY_ROUTES) {
    const sep = route.includes('?') ? '&' : '?';
    const cases: [string, string, Uint8Array | string, Record<string, string>][] = [
      ['gzip bomb (magic bytes)', route, gzipBomb, { 'content-type': 'text/plain' }],
      ['gzip bomb (Content-Encoding)', route, gzipBomb, { 'content-type': 'application/json', 'content-encoding': 'gzip' }],
      ['gzip bomb (?compression=gzip-js)', `${route}${sep}compression=gzip-js`, gzipBomb, { 'content-type': 'text/plain' }],
      ['base64 of a gzip bomb', `${route}${sep}compression=base64`, gzipBomb.toString('base64'), { 'content-type': 'text/plain' }],
      ['lz64 bomb', `${route}${sep}compression=lz64`, lzBomb, { 'content-type': 'text/plain' }],
      ['lz64 bomb in a form', route, `compression=lz64&data=${encodeURIComponent(lzBomb)}`, { 'content-type': 'application/x-www-form-urlencoded' }],
    ];
    for (const [label, path, body, headers] of cases) {
      const reply = await hostile('POST', path, { body, headers }, label, 413);
      assert.equal(reply.json.code, 'request_too_large');
    }
  }
  const afterBombs = memoryOf(pid);
  // Each bomb may cost about the decoded limit (8 MB) while inflating; 256 MB inflated would not fit.
  assert.ok(
    afterBombs.hwmMb - before.hwmMb < 160,
    `peak RSS grew from ${before.hwmMb.toFixed(0)} MB to ${afterBombs.hwmMb.toFixed(0)} MB while refusing bombs`,
  );
});

// ---------------------------------------------------------------------------------------------
// hand-made corpus

describe('hand-made corpus on every public POST route', () => {
  const random = randomBytes(4096);
  const valid = (route: string) => Buffer.from(payload(route, '"properties":{"ok":true}'));
  const cases = (route: string): [string, string | Uint8Array, Record<string, string>, string?][] => {
    const gz = gzipSync(valid(route));
    const corrupt = Buffer.from(gz);
    for (let i = 12; i < corrupt.length - 8; i += 3) corrupt[i] ^= 0x5a;
    const badCrc = Buffer.from(gz);
    badCrc[badCrc.length - 6] ^= 0xff;
    const big = 'x'.repeat(MB);
    const props = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`p${i}`, i]));
    return [
      ['empty body', '', { 'content-type': 'application/json' }],
      ['random bytes as JSON', random, { 'content-type': 'application/json' }],
      ['random bytes as gzip-js', random, { 'content-type': 'text/plain' }, 'compression=gzip-js'],
      ['random bytes with Content-Encoding: gzip', random, { 'content-encoding': 'gzip' }],
      ['gzip magic then random bytes', Buffer.concat([Buffer.from([0x1f, 0x8b]), random]), {}],
      ['truncated gzip', gz.subarray(0, Math.floor(gz.length / 2)), { 'content-type': 'text/plain' }],
      ['corrupt gzip', corrupt, { 'content-type': 'text/plain' }],
      ['gzip with a bad CRC', badCrc, { 'content-type': 'text/plain' }],
      ['gzip of random bytes', gzipSync(random), { 'content-type': 'text/plain' }],
      ['gzip of gzip', gzipSync(gz), { 'content-type': 'text/plain' }],
      ['base64 garbage', '!!!not*base64###', { 'content-type': 'text/plain' }, 'compression=base64'],
      ['base64 of random bytes', random.toString('base64'), { 'content-type': 'text/plain' }],
      ['base64 of random bytes (hinted)', random.toString('base64'), { 'content-type': 'text/plain' }, 'compression=base64'],
      ['lz64 garbage', 'ZZZZ$$$$////' + random.toString('base64'), { 'content-type': 'text/plain' }, 'compression=lz64'],
      ['lz64 of random text', random.toString('latin1'), { 'content-type': 'text/plain' }, 'compression=lz64'],
      ['form with garbage data', 'data=%%%ZZ%&compression=gzip-js', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['form with empty data', 'data=', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['form with random data', `data=${encodeURIComponent(random.toString('latin1'))}`, { 'content-type': 'application/x-www-form-urlencoded' }],
      ['invalid UTF-8', Buffer.concat([Buffer.from(payload(route, '"properties":{"s":"')), Buffer.from([0xff, 0xfe, 0xc0, 0x80, 0xed, 0xa0, 0x80]), Buffer.from('"}}')]), { 'content-type': 'application/json' }],
      ['100,000 nested arrays', deepArrays(100_000), { 'content-type': 'application/json' }],
      ['100,000 nested objects in properties', payload(route, `"properties":{"deep":${deepObjects(100_000)}}`), { 'content-type': 'application/json' }],
      ['100,000 nested arrays in $set', payload(route, `"properties":{"$set":{"deep":${deepArrays(100_000)}}},"person_properties":${deepArrays(100_000)}`), {}],
      ['1 MB string value', payload(route, `"properties":{"big":"${big}"}`), { 'content-type': 'application/json' }],
      ['1 MB event name and distinct id', `{"api_key":"${K}","event":"${big}","distinct_id":"${big}"}`, { 'content-type': 'application/json' }],
      ['1 MB property key', payload(route, `"properties":{"${big}":1}`), { 'content-type': 'application/json' }],
      ['10,000 properties', payload(route, `"properties":${JSON.stringify(props)},"person_properties":${JSON.stringify(props)}`), {}],
      ['huge numbers', payload(route, '"timestamp":1e400,"offset":-1e400,"properties":{"a":1e400,"b":-1e400,"c":1e-400,"d":123456789012345678901234567890,"e":-0}'), {}],
      ['NaN and Infinity literals', payload(route, '"offset":NaN,"properties":{"a":NaN,"b":Infinity,"c":-Infinity,"d":[NaN]}'), {}],
      ['lone surrogates everywhere', `{"api_key":"${K}","event":"\\ud800","distinct_id":"\\udc00x","uuid":"\\ud800","properties":{"\\ud83d":"\\ude00","$set":{"\\udbff":"\\ud800"},"$groups":{"\\ud800":"\\udfff"},"alias":"\\ud800"},"groups":{"\\ud800":"\\ud800"},"person_properties":{"\\ud800":"\\ud800"}}`, {}],
      ['lone surrogate alias', payload(route, '"event":"$create_alias","properties":{"alias":"\\ud800"}'), {}],
      ['lone surrogate group', `{"api_key":"${K}","event":"$groupidentify","distinct_id":"g","properties":{"$group_type":"\\ud800","$group_key":"\\udc00","$group_set":{"\\ud800":"\\ud800"}}}`, {}],
      ['NUL characters', payload(route, '"properties":{"a\\u0000b":"c\\u0000d"}'), {}],
      ['duplicate keys', `{"api_key":"${K}","api_key":"${K}","event":"a","event":{"x":1},"distinct_id":"d","distinct_id":["d"],"properties":{"a":1,"a":"two"}}`, {}],
      ['unknown fields', payload(route, '"unknown":{"nested":[1,2,3]},"$$weird":true,"properties":{"ok":1}'), {}],
      ['prototype pollution keys', payload(route, '"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"properties":{"__proto__":{"x":1},"constructor":{"prototype":{}}}'), {}],
      ['batch of non-objects', `{"api_key":"${K}","batch":[1,"x",null,[],true]}`, {}],
      ['batch that is not an array', `{"api_key":"${K}","batch":{"event":"x"}}`, {}],
      ['empty batch', `{"api_key":"${K}","batch":[]}`, {}],
      ['a bare array of mixed values', `[{"api_key":"${K}","event":"x","distinct_id":"d"},1,null,"s"]`, {}],
      ['inconsistent api keys', `[{"api_key":"${K}","event":"x","distinct_id":"d"},{"api_key":"phc_other","event":"y","distinct_id":"d"}]`, {}],
    ];
  };

  for (const route of BODY_ROUTES) {
    test(`POST ${route}`, async () => {
      for (const [label, body, headers, query] of cases(route)) {
        const path = query ? `${route}${route.includes('?') ? '&' : '?'}${query}` : route;
        await hostile('POST', path, { body, headers }, label);
      }
    });
  }
});

describe('wrong types in every field', () => {
  const wrong: unknown[] = [null, true, false, 0, -1.5, 1e308, '', 'x', [], [null], {}, { a: { b: [] } }, '\ud800'];
  const captureFields = ['api_key', 'event', 'distinct_id', '$distinct_id', 'properties', 'timestamp', 'sent_at', 'offset', 'uuid', '$set', '$set_once', 'elements_chain', 'token'];
  const propertyFields = ['distinct_id', 'token', '$set', '$set_once', '$unset', '$groups', '$group_type', '$group_key', '$group_set', 'alias', '$elements', '$elements_chain', '$process_person_profile', '$ip', '$ignore_sent_at', '$anon_distinct_id', '$feature_flag'];
  const EVENT_KINDS = ['typed', '$identify', '$groupidentify', '$create_alias', '$autocapture'];
  const decideFields = ['api_key', 'token', 'distinct_id', 'groups', 'person_properties', 'group_properties', 'flag_keys_to_evaluate', '$anon_distinct_id', '$device_id', 'geoip_disable', 'disable_flags'];

  test('/capture/ event fields and properties', async () => {
    // The token decides whether a request is read at all: one request per value.
    for (const value of wrong) await hostile('POST', '/capture/', jsonBody({ api_key: value, event: 'typed', distinct_id: 'typed' }), `capture api_key=${JSON.stringify(value)}`);
    // Other fields: one array body per field, one event per wrong value (events fail alone).
    for (const field of captureFields.filter((f) => f !== 'api_key')) {
      const events = wrong.map((value) => ({ api_key: K, event: 'typed', distinct_id: 'typed', [field]: value }));
      await hostile('POST', '/capture/', jsonBody(events), `capture ${field}=each wrong type`);
      await hostile('POST', '/batch/', jsonBody({ api_key: K, batch: events.map(({ api_key: _, ...event }) => event) }), `batch item ${field}=each wrong type`);
    }
    for (const field of propertyFields) {
      const events = EVENT_KINDS.flatMap((event) => wrong.map((value) => ({ api_key: K, event, distinct_id: 'typed', properties: { [field]: value } })));
      await hostile('POST', '/capture/', jsonBody(events), `properties.${field}=each wrong type, every event kind`);
    }
  });

  test('/batch/ envelope and items', async () => {
    for (const field of ['api_key', 'batch', 'sent_at', 'historical_migration']) {
      for (const value of wrong) {
        const body: Record<string, unknown> = { api_key: K, batch: [{ event: 'typed', distinct_id: 'typed' }], [field]: value };
        await hostile('POST', '/batch/', jsonBody(body), `batch ${field}=${JSON.stringify(value)}`);
      }
    }
    await hostile('POST', '/batch/', jsonBody({ api_key: K, batch: wrong }), 'batch of wrong-typed items');
  });

  test('/decide and /flags request fields', async () => {
    for (const route of FLAG_ROUTES) {
      for (const field of decideFields) {
        for (const value of wrong) {
          const body: Record<string, unknown> = { api_key: K, distinct_id: 'typed', [field]: value };
          await hostile('POST', route, jsonBody(body), `${route} ${field}=${JSON.stringify(value)}`);
        }
      }
    }
  });
});

describe('GET routes of the public surface', () => {
  test('GET capture with ?data=, /decide, /flags, /array/:token/config and /flags/definitions with hostile values', async () => {
    const values = ['', '%ZZ', '%', '%00', '%ED%A0%80', '%FF%FE', encodeURIComponent('x'.repeat(8000)), encodeURIComponent(deepArrays(2000)), encodeURIComponent('{"a":'), 'W10=', '!!!'];
    for (const value of values) {
      for (const route of CAPTURE_ROUTES) {
        await hostile('GET', `${route}?data=${value}&compression=${value}&_=${value}&token=${value}`, {}, `GET ${route} data=${value.slice(0, 20)}`);
        await hostile('GET', `${route}?compression=lz64&data=${value}`, {}, `GET ${route} lz64 data=${value.slice(0, 20)}`);
      }
      await hostile('GET', `/decide?v=${value}`, {}, 'GET /decide');
      await hostile('GET', `/flags?v=${value}&config=${value}`, {}, 'GET /flags');
      await hostile('GET', `/array/${value || 'x'}/config`, {}, 'GET /array/:token/config');
      await hostile('GET', `/array/${value || 'x'}/config.js`, {}, 'GET /array/:token/config.js');
      await hostile('GET', `/array/${K}/config?${value}=${value}`, {}, 'GET /array/:token/config with a hostile query');
      const auth = { authorization: `Bearer ${server.personalKey}`, 'if-none-match': `"${value}", W/${value}, *x` };
      await hostile('GET', `/flags/definitions?token=${value}&send_cohorts=${value}`, { headers: auth }, 'GET /flags/definitions');
      await hostile('GET', `/flags/definitions?token=${value}`, { headers: { authorization: `Bearer ${value}` } }, 'GET /flags/definitions, hostile key');
    }
    await hostile('GET', `/array/${'x'.repeat(600)}/config`, {}, 'GET /array/:token/config, overlong token');
    await hostile('GET', `/array/${encodeAny('\ud800')}/config`, {}, 'GET /array/:token/config, lone surrogate token');
  });

  test('malformed HTTP: bad request line, oversized headers, bad header bytes → spec error shape, server unharmed', async () => {
    const raw = async (text: string, port: number): Promise<string> =>
      new Promise((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1');
        let data = '';
        socket.setEncoding('latin1');
        socket.on('data', (chunk) => (data += chunk));
        socket.on('error', () => resolve(data));
        socket.on('close', () => resolve(data));
        socket.setTimeout(10_000, () => reject(new Error(`no answer to ${JSON.stringify(text.slice(0, 60))}`)));
        socket.write(text);
      });
    const cases: [string, number][] = [
      ['GARBAGE\r\n\r\n', 400],
      ['GET / HTTP/9.9\r\n\r\n', 400],
      [`GET /capture/?${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431],
      [`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(70_000)}\r\n\r\n`, 431],
      ['GET / HTTP/1.1\r\nHost: x\r\nBad\u0001Header: y\r\n\r\n', 400],
      ['POST /capture/ HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400],
      ['POST /capture/ HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n', 400],
    ];
    for (const [text, status] of cases) for (const nodeUrl of server.nodeUrls) {
      const answer = await raw(text, Number(new URL(nodeUrl).port));
      const [head, body] = answer.split('\r\n\r\n');
      assert.match(head, new RegExp(`^HTTP/1\\.1 ${status} `), `raw ${JSON.stringify(text.slice(0, 40))} → ${head}`);
      assertSpecReply({ status, headers: new Headers(), text: body, json: JSON.parse(body) }, `raw ${JSON.stringify(text.slice(0, 40))}`);
      await canary();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// properties

/** fc.assert, with the failure's own message next to the shrunk counterexample and the seed. */
async function holds<T>(property: fc.IAsyncProperty<T>, options: { numRuns: number }): Promise<void> {
  const details = await fc.check(property, { ...options, seed: SEED });
  if (!details.failed) return;
  const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  throw new Error(`property failed (seed ${details.seed}, path ${details.counterexamplePath}) on ${fc.stringify(details.counterexample)}:\n${cause}`);
}

/** JSON text with what JSON.stringify cannot write: NaN, 1e400, duplicate keys. */
class Raw {
  constructor(readonly text: string) {}
}
class Obj {
  constructor(readonly entries: [string, Value][]) {}
}
type Value = null | boolean | number | string | Raw | Obj | Value[];

function toText(value: Value): string {
  if (value instanceof Raw) return value.text;
  if (value instanceof Obj) return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${toText(v)}`).join(',')}}`;
  if (Array.isArray(value)) return `[${value.map(toText).join(',')}]`;
  return JSON.stringify(value) ?? 'null';
}

const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 20 }),
  fc.constantFrom('\ud800', 'a\udc00', '\u0000', '__proto__', 'constructor', 'prototype', '$set', '$groups', '$group_0', 'toString', '', ' ', '\u202e', 'null', '1e400'),
);
const hostileNumber = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(new Raw('NaN'), new Raw('Infinity'), new Raw('-Infinity'), new Raw('1e400'), new Raw('-1e400'), new Raw('123456789012345678901234567890'), new Raw('-0'), new Raw('1E-400')),
).map((n) => (typeof n === 'number' && !Number.isFinite(n) ? new Raw(String(n)) : n));

const { value: hostileValue } = fc.letrec<{ value: Value }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    hostileNumber,
    hostileString,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.array(fc.tuple(hostileString, tie('value')), { maxLength: 5 }).map((entries) => new Obj(entries)),
  ),
}));

const field = (name: string, known: fc.Arbitrary<Value>): fc.Arbitrary<[string, Value] | null> =>
  fc.option(fc.oneof(known, hostileValue), { nil: null }).map((value) => (value === null ? null : [name, value]));

const hostileProperties = fc
  .array(fc.tuple(fc.oneof(hostileString, fc.constantFrom('$set', '$set_once', '$groups', '$group_type', '$group_key', '$group_set', 'alias', '$elements', 'distinct_id')), hostileValue), { maxLength: 8 })
  .map((entries) => new Obj(entries));

/** An event with every known field present or not, well typed or not, plus random extra keys. */
const hostileEvent = fc
  .record({
    known: fc.tuple(
      field('api_key', fc.constant(null).map(() => K)),
      field('event', fc.constantFrom('$pageview', '$identify', '$groupidentify', '$create_alias', '$autocapture', 'custom', '$feature_flag_called')),
      field('distinct_id', fc.string({ maxLength: 8 })),
      field('timestamp', fc.date({ noInvalidDate: true }).map((d) => d.toISOString())),
      field('uuid', fc.uuid()),
      field('properties', hostileProperties),
    ),
    extra: fc.array(fc.tuple(hostileString, hostileValue), { maxLength: 3 }),
  })
  .map(({ known, extra }) => new Obj([...known.filter((entry): entry is [string, Value] => entry !== null), ...extra]));

/** Single event, bare array, or batch envelope, encoded as plain JSON, gzip, base64, lz64 or a form. */
const hostileRequest = fc.record({
  route: fc.constantFrom(...BODY_ROUTES),
  shape: fc.constantFrom('single', 'array', 'batch'),
  events: fc.array(hostileEvent, { minLength: 0, maxLength: 4 }),
  encoding: fc.constantFrom('json', 'gzip', 'base64', 'form', 'lz64-form'),
  contentType: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', '', 'application/json; charset=latin1'),
});

async function encode(events: Obj[], shape: string, encoding: string): Promise<{ body: string | Uint8Array; query: string }> {
  const text =
    shape === 'single' ? toText(events[0] ?? new Obj([])) : shape === 'array' ? toText(events) : toText(new Obj([['api_key', K], ['batch', events]]));
  switch (encoding) {
    case 'gzip':
      return { body: gzipSync(text), query: 'compression=gzip-js' };
    case 'base64':
      return { body: Buffer.from(text).toString('base64'), query: 'compression=base64' };
    case 'form':
      return { body: `data=${encodeAny(Buffer.from(text).toString('base64'))}`, query: '' };
    case 'lz64-form': {
      const { default: LZString } = await import('lz-string');
      return { body: `data=${encodeURIComponent(LZString.compressToBase64(text))}&compression=lz64`, query: '' };
    }
    default:
      return { body: text, query: '' };
  }
}

describe('property-based', () => {
  test('random events (any field, any type, any encoding) on every public POST route', async () => {
    await holds(
      fc.asyncProperty(hostileRequest, async ({ route, shape, events, encoding, contentType }) => {
        const { body, query } = await encode(events, shape, encoding);
        const path = query ? `${route}${route.includes('?') ? '&' : '?'}${query}` : route;
        await hostile('POST', path, { body, headers: contentType ? { 'content-type': contentType } : {} }, `fc ${shape}/${encoding}`);
      }),
      { numRuns: 150 * FC_RUNS },
    );
  });

  test('random bytes with random content types, encodings and compression hints', async () => {
    await holds(
      fc.asyncProperty(
        fc.constantFrom(...BODY_ROUTES),
        fc.uint8Array({ maxLength: 2048 }),
        fc.constantFrom('', 'gzip', 'gzip-js', 'lz64', 'base64', 'deflate', 'br', '%ff'),
        fc.constantFrom('', 'gzip', 'deflate', 'identity', 'gzip, br'),
        fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', '', '*/*'),
        async (route, bytes, compression, contentEncoding, contentType) => {
          const headers: Record<string, string> = {};
          if (contentEncoding) headers['content-encoding'] = contentEncoding;
          if (contentType) headers['content-type'] = contentType;
          const path = compression ? `${route}${route.includes('?') ? '&' : '?'}compression=${compression}` : route;
          await hostile('POST', path, { body: bytes, headers }, 'fc bytes');
        },
      ),
      { numRuns: 100 * FC_RUNS },
    );
  });

  /** Real ids of this organization for path parameters, else hostile text. */
  const pathValues = (op: ApiOperation, hostileText: string | null): Record<string, string> =>
    Object.fromEntries(op.pathParams.map((name) => [name, hostileText ?? ids[collectionOf(op.path, name)] ?? '1']));

  test('every /api/ GET with hostile query values and path ids', async () => {
    const gets = operations.filter((op) => op.method === 'GET');
    assert.ok(gets.length >= 10, `only ${gets.length} GET operations in /api/schema/`);
    const rawFragments = fc.constantFrom('%', '%ZZ', '%ED%A0%80', '%00', '%FF', '[', '["\\ud800"]', '{"a":', '%5B%5B%5B%5B', 'a=b=c', '&&&', '==');
    for (const op of gets) {
      await holds(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.oneof(fc.constantFrom(...op.queryParams, 'limit', 'offset'), hostileString), fc.oneof(hostileString.map(encodeAny), rawFragments, hostileValue.map((v) => encodeAny(toText(v))))), { maxLength: 5 }),
          fc.option(hostileString, { nil: null }),
          fc.constantFrom('key', 'key', 'key', 'none', 'garbage', 'project-key'),
          async (query, pathText, auth) => {
            // A dot segment is resolved away by the client (RFC 3986), so the request names another path.
            const segment = pathText === null ? null : encodeAny(pathText);
            const path = fillPath(op.path, pathValues(op, segment === null ? null : /^\.{0,2}$/.test(segment) ? 'x' : segment), pathText !== null);
            const qs = query.map(([k, v]) => `${encodeAny(k)}=${v}`).join('&');
            const authorization = { key: `Bearer ${server.personalKey}`, garbage: 'Bearer phx_\u00ffgarbage%00', 'project-key': `Bearer ${K}`, none: '' }[auth]!;
            const reply = await hostile('GET', `${path}?${qs}`, { headers: authorization ? { authorization } : {} }, `fc ${op.method} ${op.path} ?${qs.slice(0, 200)}`);
            // Authentication comes first, except for a URL the router cannot even decode.
            if (auth !== 'key' && !op.public && reply.json?.code !== 'invalid_url') {
              assert.equal(reply.status, 401, `${op.path} without a valid key → ${reply.status}`);
            }
          },
        ),
        { numRuns: 12 * FC_RUNS },
      );
    }
  });

  test('every /api/ POST/PATCH with hostile JSON bodies; DELETE with hostile ids', async () => {
    const writes = operations.filter((op) => op.method === 'POST' || op.method === 'PATCH' || op.method === 'PUT');
    assert.ok(writes.length >= 5, `only ${writes.length} write operations in /api/schema/`);
    const deep = [deepArrays(100_000), deepObjects(100_000), `{"filters":${deepObjects(100_000)}}`, `{"tags":${deepArrays(100_000)}}`];
    for (const op of writes) {
      const names = Object.keys(op.bodySchema?.properties ?? {});
      const path = fillPath(op.path, pathValues(op, null));
      const send = (body: string | Uint8Array, label: string, contentType = 'application/json') =>
        hostile(op.method, path, { body, headers: { authorization: `Bearer ${server.personalKey}`, 'content-type': contentType } }, `${label} ${op.method} ${op.path}`);
      for (const text of deep) await send(text, '100,000 levels');
      await send(`{"${names[0] ?? 'name'}":"${'x'.repeat(MB)}"}`, '1 MB string');
      await send(JSON.stringify(Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`f${i}`, i]))), '10,000 fields');
      await send(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), 'invalid UTF-8');
      await send('', 'empty body');
      await send('{"a":1', 'truncated JSON');
      await send(gzipSync('{"name":"x"}'), 'gzip body');
      await send('name=x', 'form body', 'application/x-www-form-urlencoded');
      await send('{"name":"x"}', 'text body', 'text/plain');
      await holds(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.oneof(fc.constantFrom(...names, 'id', 'organization', 'filters'), hostileString), hostileValue), { maxLength: 6 }),
          async (entries) => {
            await send(toText(new Obj(entries)), 'fc body');
          },
        ),
        { numRuns: 12 * FC_RUNS },
      );
      // A valid body with one field replaced by each hostile value in turn.
      for (const name of names) {
        for (const value of [null, 1e308, -1, '', '\ud800', [], {}, [{}], 'x'.repeat(5000)]) {
          await send(JSON.stringify(minimalBody(op.bodySchema, { [name]: value })), `${name}=${JSON.stringify(value).slice(0, 20)}`);
        }
      }
    }
    for (const op of operations.filter((o) => o.method === 'DELETE')) {
      for (const text of ['%ZZ', '%ED%A0%80', 'x'.repeat(600), '-1', '1e400', '..%2F..%2F', '00000000-0000-0000-0000-000000000000', "1'; DROP TABLE events; --"]) {
        const values = Object.fromEntries(op.pathParams.map((name, i) => [name, i === op.pathParams.length - 1 ? text : ids[collectionOf(op.path, name)] ?? '1']));
        await hostile('DELETE', fillPath(op.path, values, true), { headers: { authorization: `Bearer ${server.personalKey}` } }, `DELETE ${op.path} id=${text.slice(0, 20)}`);
      }
    }
  });
});

test('afterwards: every normal event was stored exactly once and ingestion never degraded', async () => {
  const health = await request(server, 'GET', '/_health');
  assert.equal(health.status, 200);
  const { status, ingestion, event_store_writes } = health.json as Record<string, unknown>;
  assert.deepEqual({ status, ingestion, event_store_writes }, { status: 'ok', ingestion: 'ok', event_store_writes: 'ok' }, 'a hostile request failed a flush');
  const select = encodeURIComponent(JSON.stringify(['count()']));
  const counted = await api('GET', `/api/projects/@current/events/?event=canary&select=${select}`);
  // uuids are unique per canary and deduplicated by ingestion: equal counts mean each stored once.
  assert.deepEqual(counted.results[0], [canaries.length]);
  const metrics = await request(server, 'GET', '/metrics');
  assert.doesNotMatch(metrics.text, /sightline_flush_failures_total [1-9]/);
  assert.doesNotMatch(metrics.text, /status="5\d\d"/, 'no request was answered with a 5xx');
});
