/**
 * Capture request → events. Handles every encoding the PostHog SDKs (current and legacy) use:
 * plain JSON, gzip (by header, by hint, or sniffed), base64, lz-string, form `data=` bodies and
 * GET `?data=`; then the three body shapes and the token / sent_at rules, as PostHog's capture
 * service has them (`rust/capture/src/payload/` in github.com/PostHog/posthog).
 */
import { isPlainObject } from '../kernel/json.js';
import type { JsonObject } from '../kernel/json.js';
import { gunzipSync } from 'node:zlib';

import { ApiError, invalidPayload, payloadTooLarge } from '../kernel/errors.js';
import { guardJson, JsonTooDeepError, mayHoldSurrogates } from '../util/json-guard.js';
import { decompressLz64, Lz64TooLargeError } from './lz64.js';
import { parseTimestamp } from './normalize.js';
import type { CaptureInput, DecodedCapture } from './types.js';

type Compression = 'gzip' | 'lz64' | 'base64' | 'none';

const FORM_PREFIXES = ['data=', 'ver=', '_=', 'ip=', 'compression='];
// Paths of the legacy endpoints whose old clients double-base64 their payloads.
const LEGACY_PATH = /^\/(?:e|capture|engage|track)(?:\/|$)/;
const ENGAGE_PATH = /^\/engage(?:\/|$)/;

export function decodeCapture(input: CaptureInput): DecodedCapture {
  const raw = readRawPayload(input);
  const hint = compressionHint(firstNonEmpty(input.query.compression, raw.formCompression, input.contentEncoding));
  const text = decodeToText(raw.bytes, hint, LEGACY_PATH.test(input.path), input.maxDecodedBytes);
  const parsed = parseJson(text);
  return interpretPayload(parsed, input, raw.fromQuery, Buffer.byteLength(text));
}

// ---------------------------------------------------------------------------------------------
// Bytes: where the payload is and how it is wrapped

interface RawPayload {
  bytes: Buffer;
  formCompression: string | undefined;
  fromQuery: boolean;
}

function readRawPayload(input: CaptureInput): RawPayload {
  const queryData = input.query.data;
  if (queryData) {
    return { bytes: Buffer.from(restorePlus(queryData)), formCompression: undefined, fromQuery: true };
  }
  const body = input.body;
  if (body.length === 0) throw invalidPayload('empty payload');

  const mime = (input.contentType ?? '').split(';')[0].trim().toLowerCase();
  const declaredForm = mime === 'application/x-www-form-urlencoded';
  // posthog-js legacy sent `data=…` bodies whatever the content type; a gzip or JSON body under
  // a form content type is taken as is rather than rejected.
  const looksLikeForm = startsWithAny(body, FORM_PREFIXES);
  const looksLikeRaw = isGzip(body) || /^\s*[[{]/.test(body.subarray(0, 16).toString('latin1'));
  if (looksLikeForm || (declaredForm && !looksLikeRaw)) {
    const form = new URLSearchParams(body.toString('utf8'));
    const data = form.get('data');
    if (!data) throw invalidPayload('expected form data with a non-empty `data` field');
    return { bytes: Buffer.from(restorePlus(data)), formCompression: form.get('compression') ?? undefined, fromQuery: false };
  }
  return { bytes: body, formCompression: undefined, fromQuery: false };
}

/** URL decoding turned base64 `+` into spaces; put them back (only for base64-looking text). */
function restorePlus(value: string): string {
  return value.includes(' ') && /^[A-Za-z0-9+/= ]+$/.test(value) ? value.replace(/ /g, '+') : value;
}

function firstNonEmpty(...values: (string | undefined)[]): string | undefined {
  return values.find((value) => value !== undefined && value.trim() !== '');
}

function compressionHint(value: string | undefined): Compression {
  switch (value?.trim().toLowerCase()) {
    case 'gzip':
    case 'gzip-js':
      return 'gzip';
    case 'lz64':
    case 'lz-string':
      return 'lz64';
    case 'base64':
    case 'b64':
      return 'base64';
    default:
      return 'none';
  }
}

function decodeToText(bytes: Buffer, hint: Compression, legacyPath: boolean, maxBytes: number): string {
  let text: string;
  if (hint === 'lz64') {
    text = decodeLz64(bytes, maxBytes);
  } else {
    let buf = bytes;
    if (hint === 'base64') {
      const decoded = decodeBase64(buf.toString('latin1'));
      if (!decoded) throw invalidPayload('invalid base64 data');
      buf = decoded;
    } else if (!isGzip(buf) && looksLikeBase64(buf)) {
      // Optimistic: keep the original bytes unless decoding yields something usable.
      const decoded = decodeBase64(buf.toString('latin1'));
      if (decoded && (isGzip(decoded) || utf8OrNull(decoded) !== null)) buf = decoded;
    }
    // posthog-js sends gzip as text/plain without any header, so the magic bytes decide too.
    if (isGzip(buf) || (hint === 'gzip' && !/^\s*[[{]/.test(buf.subarray(0, 16).toString('latin1')))) {
      buf = gunzipBounded(buf, maxBytes);
    }
    if (buf.length > maxBytes) throw tooLarge(maxBytes);
    const decoded = utf8OrNull(buf);
    if (decoded === null) throw invalidPayload('payload is not valid UTF-8');
    text = decoded;
  }
  if (legacyPath) text = unwrapLegacyBase64(text);
  return text;
}

const isGzip = (buf: Buffer): boolean => buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b;

function startsWithAny(buf: Buffer, prefixes: string[]): boolean {
  const head = buf.subarray(0, 16).toString('latin1');
  return prefixes.some((prefix) => head.startsWith(prefix));
}

const tooLarge = (maxBytes: number) => payloadTooLarge(`Decoded payload is larger than the ${maxBytes} byte limit.`);

function gunzipBounded(buf: Buffer, maxBytes: number): Buffer {
  try {
    // maxOutputLength makes zlib give up as soon as the output passes the limit, so a gzip bomb
    // costs at most maxBytes of memory instead of its full inflated size.
    return gunzipSync(buf, { maxOutputLength: Math.max(1, Math.floor(maxBytes)) });
  } catch (err) {
    const error = err as NodeJS.ErrnoException;
    if (error.code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) throw tooLarge(maxBytes);
    throw invalidPayload(`could not gunzip the body (${error.message})`);
  }
}

function decodeLz64(bytes: Buffer, maxBytes: number): string {
  const input = restorePlus(bytes.toString('latin1').trim());
  let output: string | null;
  try {
    // Bounded while decoding: an lz64 bomb would otherwise exhaust the heap (see lz64.ts).
    output = decompressLz64(input, maxBytes);
  } catch (err) {
    // V8 refuses strings past its maximum length: that is an oversized payload, not a bad one.
    if (err instanceof Lz64TooLargeError || err instanceof RangeError) throw tooLarge(maxBytes);
    throw invalidPayload('invalid lz64 data');
  }
  if (!output) throw invalidPayload('invalid lz64 data');
  if (Buffer.byteLength(output) > maxBytes) throw tooLarge(maxBytes);
  return output;
}

/** Strict-ish base64 (standard or URL-safe alphabet, padding optional); null when it is not. */
function decodeBase64(text: string): Buffer | null {
  const compact = text.replace(/\s+/g, '');
  if (!compact || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(compact)) return null;
  const unpadded = compact.replace(/=+$/, '');
  if (unpadded.length % 4 === 1) return null;
  return Buffer.from(unpadded, 'base64');
}

/** Capture's sniff: the first 128 bytes all in the base64 alphabet and a length multiple of 4. */
function looksLikeBase64(buf: Buffer): boolean {
  if (buf.length === 0 || buf.length % 4 !== 0) return false;
  const head = buf.subarray(0, 128);
  for (const byte of head) {
    const ok =
      (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39) ||
      byte === 0x2b || byte === 0x2f || byte === 0x3d;
    if (!ok) return false;
  }
  return true;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function utf8OrNull(buf: Buffer): string | null {
  try {
    return utf8.decode(buf);
  } catch {
    return null;
  }
}

/** Old clients of the legacy endpoints base64'd an already-base64 body; peel one more layer. */
function unwrapLegacyBase64(text: string): string {
  const trimmed = text.trim();
  if (!trimmed || trimmed.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)) return text;
  const decoded = decodeBase64(trimmed);
  const inner = decoded ? utf8OrNull(decoded) : null;
  return inner ?? text;
}

// ---------------------------------------------------------------------------------------------
// JSON

function parseJson(text: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    // Python-era clients emit NaN/Infinity; retry with them as null before giving up.
    const patched = replaceNonFiniteLiterals(text);
    if (patched === text) throw invalidPayload(`invalid JSON (${(err as Error).message})`);
    try {
      parsed = JSON.parse(patched);
    } catch {
      // the original error points at the real problem
      throw invalidPayload(`invalid JSON (${(err as Error).message})`);
    }
  }
  // Too deep → 400 as PostHog's capture does; lone surrogates → U+FFFD so they cannot fail a
  // flush (and with it every other request of that group commit).
  try {
    return guardJson(parsed, { fixStrings: mayHoldSurrogates(text) });
  } catch (err) {
    if (err instanceof JsonTooDeepError) throw invalidPayload(err.message);
    throw err;
  }
}

const NON_FINITE = ['-Infinity', 'Infinity', 'NaN'];

/** Replaces bare NaN / Infinity / -Infinity tokens with null, leaving string contents alone. */
export function replaceNonFiniteLiterals(text: string): string {
  let out = '';
  let copiedUpTo = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') {
      inString = true;
      continue;
    }
    if (ch !== 'N' && ch !== 'I' && ch !== '-') continue;
    const token = NON_FINITE.find((word) => text.startsWith(word, i));
    if (!token || isWordChar(text[i - 1]) || isWordChar(text[i + token.length])) continue;
    out += `${text.slice(copiedUpTo, i)}null`;
    i += token.length - 1;
    copiedUpTo = i + 1;
  }
  return copiedUpTo === 0 ? text : out + text.slice(copiedUpTo);
}

const isWordChar = (ch: string | undefined): boolean => ch !== undefined && /[A-Za-z0-9_$.]/.test(ch);

// ---------------------------------------------------------------------------------------------
// Body shapes, token and sent_at

function interpretPayload(parsed: unknown, input: CaptureInput, fromQuery: boolean, payloadBytes: number): DecodedCapture {
  let items: unknown[];
  let envelope: JsonObject | null = null;
  if (Array.isArray(parsed)) {
    items = parsed;
  } else if (isPlainObject(parsed) && 'batch' in parsed) {
    if (!Array.isArray(parsed.batch)) throw invalidPayload('`batch` must be an array of events');
    envelope = parsed;
    items = parsed.batch;
  } else if (isPlainObject(parsed)) {
    items = [parsed];
  } else {
    throw invalidPayload('expected an event object, an array of events or a {batch: [...]} object');
  }
  if (items.length === 0) throw invalidPayload('empty batch');

  const isEngage = ENGAGE_PATH.test(input.path);
  const objects: JsonObject[] = [];
  let droppedNonObjects = 0;
  for (const item of items) {
    if (!isPlainObject(item)) droppedNonObjects++;
    else objects.push(isEngage && item.event === undefined ? engageToIdentify(item) : item);
  }
  const events = objects.filter((event) => event.event !== '$performance_event');

  let token = envelope ? (tokenValue(envelope.api_key) ?? tokenValue(envelope.token)) : null;
  token ??= consistentEventToken(objects);
  if (!token && (fromQuery || input.method?.toUpperCase() === 'GET')) {
    token = tokenValue(input.query.token) ?? tokenValue(input.query.api_key);
  }

  const result: DecodedCapture = { token, sentAt: requestSentAt(envelope, input.query._), events, payloadBytes };
  if (droppedNonObjects > 0) result.droppedNonObjects = droppedNonObjects;
  if (objects.length > events.length) result.droppedPerformanceEvents = objects.length - events.length;
  if (envelope?.historical_migration === true) result.historicalMigration = true;
  const projectId = input.query.project_id ?? (envelope ?? objects[0])?.project_id;
  if (projectId !== undefined) result.projectId = projectId;
  return result;
}

/** Legacy `/engage` people updates carry no event name: they are identify calls. */
function engageToIdentify(item: JsonObject): JsonObject {
  const { $set: topSet, ...rest } = item;
  const properties = isPlainObject(item.properties) ? { ...item.properties } : {};
  if (isPlainObject(topSet)) {
    properties.$set = { ...(isPlainObject(properties.$set) ? properties.$set : {}), ...topSet };
  }
  return { ...rest, event: '$identify', properties };
}

function tokenValue(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value.replace(/\u0000/g, '\uFFFD') : null;
}

function eventToken(event: JsonObject): string | null {
  const properties = isPlainObject(event.properties) ? event.properties : {};
  return (
    tokenValue(event.token) ?? tokenValue(event.$token) ?? tokenValue(event.api_key) ?? tokenValue(properties.token)
  );
}

function consistentEventToken(events: JsonObject[]): string | null {
  let found: string | null = null;
  for (const event of events) {
    const token = eventToken(event);
    if (token === null) continue;
    if (found !== null && token !== found) {
      throw new ApiError(401, 'authentication_error', 'invalid_api_key', 'batch submitted with inconsistent api_key values', undefined);
    }
    found = token;
  }
  return found;
}

/** Envelope `sent_at`, else query `_` in milliseconds (ignored unless after 2020, as capture does). */
function requestSentAt(envelope: JsonObject | null, underscore: string | undefined): Date | null {
  if (envelope && envelope.sent_at !== undefined && envelope.sent_at !== null) {
    return parseTimestamp(envelope.sent_at);
  }
  if (underscore && /^\d+$/.test(underscore)) {
    const date = new Date(Number(underscore));
    if (!Number.isNaN(date.getTime()) && date.getUTCFullYear() > 2020) return date;
  }
  return null;
}
