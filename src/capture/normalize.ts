/**
 * One raw capture event → one IncomingEvent, or a drop reason. Pure: the caller supplies the
 * clock, the request-level sent_at and the client IP. Follows PostHog's capture and ingestion
 * normalisation (`rust/capture/` and `nodejs/src/utils/event.ts` in github.com/PostHog/posthog).
 */
import type { IncomingEvent, DropReason } from '../ingestion/types.js';
import { isPlainObject, type JsonObject } from '../kernel/json.js';
import { v7 as uuidv7 } from 'uuid';

import { canonicalUuid } from '../util/uuid.js';
import { isBotEvent } from './bots.js';
import type { Outcome } from './types.js';

export interface NormalizeContext {
  /** Request-level sent_at (envelope or query `_`); a per-event `sent_at` overrides it. */
  sentAt: Date | null;
  /** Server receive time. */
  now: Date;
  /** Client IP, stored as `$ip` unless the event sent its own. */
  ip: string | null;
  /** Largest accepted event in bytes of JSON (default 1 MB, PostHog's Kafka message limit). */
  maxEventBytes?: number;
  /** Size of the whole payload the event came in: when within the limit, no event needs measuring. */
  payloadBytes?: number;
  /** Drop events that say they come from a bot (bots.ts). */
  dropBots?: boolean;
}

export const DEFAULT_MAX_EVENT_BYTES = 1_000_000;

const MAX_ID_CHARS = 200;
// Events stamped further ahead than this are treated as clock errors and moved to "now".
const FUTURE_TOLERANCE_MS = 23 * 60 * 60 * 1000;

// Person-changing events make no sense for a personless event, so they are dropped outright.
const PERSON_EVENTS = new Set(['$identify', '$create_alias', '$merge_dangerously', '$groupidentify']);

// Event properties copied onto the person: latest value into $set, first value into $set_once.
const EVENT_TO_PERSON_KEYS = [
  '$app_build', '$app_name', '$app_namespace', '$app_version',
  '$browser', '$browser_version', '$device_type', '$current_url', '$pathname',
  '$os', '$os_name', '$os_version', '$referring_domain', '$referrer',
  '$screen_height', '$screen_width', '$viewport_height', '$viewport_width', '$raw_user_agent',
  'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_name', 'utm_term',
  'gclid', 'gad_source', 'gclsrc', 'dclid', 'gbraid', 'wbraid', 'fbclid', 'msclkid', 'twclid',
  'li_fat_id', 'mc_cid', 'igshid', 'ttclid', 'rdt_cid', 'irclid', '_kx', 'epik', 'qclid', 'sccid',
];
const INITIAL_KEY = new Map(EVENT_TO_PERSON_KEYS.map((key) => [key, `$initial_${key.replace('$', '')}`]));
const NO_LIFT_EVENTS = new Set(['$snapshot', '$performance_event']);

const drop = (reason: DropReason): { ok: false; reason: DropReason } => ({ ok: false, reason });

export function normalizeEvent(raw: JsonObject, ctx: NormalizeContext): Outcome<IncomingEvent> {
  const maxBytes = ctx.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
  const mayBeTooLarge = ctx.payloadBytes === undefined || ctx.payloadBytes > maxBytes;
  if (mayBeTooLarge && Buffer.byteLength(JSON.stringify(raw)) > maxBytes) return drop('event_too_large');

  const event = cleanIdentifier(raw.event);
  if (!event) return drop('missing_event_name');
  if (event === '$performance_event') return drop('performance_event');

  // Property bags are changed in place: they come from our own JSON.parse, so nothing else holds
  // them. A spread copy (`{ ...bag }`) would get a hidden class outside V8's shared transition
  // tree, so every key added later builds a new one (measured: 79 µs per event for 12 GeoIP keys
  // and the stringify, against 12 µs in place).
  const properties: JsonObject = isPlainObject(raw.properties) ? raw.properties : {};
  if (ctx.dropBots && isBotEvent(properties)) return drop('bot');

  const distinctId = cleanIdentifier(firstPresent(raw.distinct_id, raw.$distinct_id, properties.distinct_id));
  if (!distinctId) return drop('missing_distinct_id');

  const uuid = eventUuid(raw.uuid);
  if (uuid === null) return drop('invalid_uuid');

  const processPerson = properties.$process_person_profile !== false;
  if (!processPerson && PERSON_EVENTS.has(event)) return drop('process_person_profile_false_person_event');

  const sentAt = parseTimestamp(raw.sent_at) ?? ctx.sentAt;
  const timestamp = computeTimestamp(raw, properties, sentAt, ctx.now);

  mergeTopLevelPersonProps(raw, properties);
  if ((properties.$ip === undefined || properties.$ip === null) && ctx.ip) properties.$ip = ctx.ip;
  if (sentAt) properties.$sent_at = sentAt.toISOString();

  if (processPerson) {
    if (!NO_LIFT_EVENTS.has(event)) liftPersonProperties(properties);
    // Only an explicit false is kept on the event; anything else means the default (true).
    delete properties.$process_person_profile;
  } else {
    delete properties.$set;
    delete properties.$set_once;
    delete properties.$unset;
  }

  const elementsChain = takeElementsChain(raw, properties);
  return { ok: true, value: { uuid, event, distinctId, properties, timestamp, elementsChain } };
}

function firstPresent(...values: unknown[]): unknown {
  return values.find((value) => value !== undefined && value !== null);
}

/** Event names and distinct ids: any JSON value, stringified; NUL → U+FFFD; at most 200 chars. */
function cleanIdentifier(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return truncateChars(text.replace(/\u0000/g, '\uFFFD'), MAX_ID_CHARS);
}

function truncateChars(text: string, max: number): string {
  if (text.length <= max) return text;
  // Count code points so a surrogate pair is never cut in half.
  return Array.from(text).slice(0, max).join('');
}

/** Absent/empty → a fresh UUIDv7; any spelling the `uuid` crate accepts → canonical; else null. */
function eventUuid(value: unknown): string | null {
  if (value === undefined || value === null || value === '') return uuidv7();
  return typeof value === 'string' ? canonicalUuid(value) : null;
}

// ---------------------------------------------------------------------------------------------
// Timestamps

const ISO_LIKE =
  /^(\d{4})[-/](\d{2})[-/](\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(?:([Zz]|UTC|GMT)|([+-])(\d{2})(?::?(\d{2}))?)?$/;
const RFC2822 =
  /^(?:[A-Za-z]{3},\s*)?\d{1,2}\s+[A-Za-z]{3}\s+\d{4}\s+\d{2}:\d{2}(?::\d{2})?\s+(?:[+-]\d{4}|UT|UTC|GMT|[ECMP][SD]T)$/;
const EPOCH = /^-?\d+(?:\.\d+)?$/;

/**
 * Parses what SDKs put in `timestamp`/`sent_at`: RFC 3339 / ISO 8601 (naive → UTC, `+HH` offsets,
 * date-only, space separator), RFC 2822, and epoch numbers (seconds, or ms beyond 11 digits).
 */
export function parseTimestamp(value: unknown): Date | null {
  if (typeof value === 'number') return fromEpoch(value);
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (!text) return null;
  if (EPOCH.test(text)) return fromEpoch(Number(text));
  const iso = ISO_LIKE.exec(text);
  if (iso) return fromIsoParts(iso);
  if (RFC2822.test(text)) {
    const ms = Date.parse(text);
    return Number.isNaN(ms) ? null : new Date(ms);
  }
  return null;
}

function fromEpoch(value: number): Date | null {
  if (!Number.isFinite(value)) return null;
  const digits = String(Math.trunc(Math.abs(value))).length;
  const ms = digits > 11 ? value : value * 1000;
  const date = new Date(Math.round(ms));
  return Number.isNaN(date.getTime()) ? null : date;
}

function fromIsoParts(m: RegExpExecArray): Date | null {
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [hour, minute] = [Number(m[4] ?? 0), Number(m[5] ?? 0)];
  // A leap second (":60") is folded into the last second of the minute.
  const second = Math.min(Number(m[6] ?? 0), 59);
  const millis = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || Number(m[6] ?? 0) > 60) return null;
  let offsetMinutes = 0;
  if (m[9]) {
    const [offH, offM] = [Number(m[10]), Number(m[11] ?? 0)];
    if (offH > 23 || offM > 59) return null;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (offH * 60 + offM);
  }
  // setUTCFullYear: Date.UTC would map years 0–99 to 1900–1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  return new Date(date.getTime() - offsetMinutes * 60_000);
}

function daysInMonth(year: number, month: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month, 0);
  return date.getUTCDate();
}

/** PostHog's event time: skew-corrected by sent_at, `offset` wins, future clamp, year range. */
export function computeTimestamp(raw: JsonObject, properties: JsonObject, sentAt: Date | null, now: Date): Date {
  const nowMs = now.getTime();
  const effectiveSentAt = properties.$ignore_sent_at === true ? null : sentAt;
  let result = nowMs;
  const sent = parseTimestamp(raw.timestamp);
  if (sent) {
    // The client's clock may be wrong; sent_at (same clock) tells us by how much.
    result = effectiveSentAt ? nowMs + (sent.getTime() - effectiveSentAt.getTime()) : sent.getTime();
  }
  if (typeof raw.offset === 'number' && Number.isFinite(raw.offset)) result = nowMs - Math.trunc(raw.offset);
  if (result - nowMs > FUTURE_TOLERANCE_MS) result = nowMs;
  const date = new Date(result);
  const year = date.getUTCFullYear();
  if (Number.isNaN(date.getTime()) || year < 0 || year > 9999) return new Date(0);
  return date;
}

// ---------------------------------------------------------------------------------------------
// Person properties

/** Top-level `$set`/`$set_once` (posthog-js identify) join the ones inside properties; top level wins. */
function mergeTopLevelPersonProps(raw: JsonObject, properties: JsonObject): void {
  for (const key of ['$set', '$set_once'] as const) {
    const inner = properties[key];
    const top = raw[key];
    if (!isPlainObject(top)) continue;
    if (!isPlainObject(inner)) properties[key] = top;
    else for (const name of Object.keys(top)) inner[name] = top[name];
  }
}

/** Copies event-to-person keys into `$set` and first-touch `$initial_*` into `$set_once`. */
function liftPersonProperties(properties: JsonObject): void {
  // Server SDKs report the host's OS, which says nothing about the person.
  const isServer = properties.$is_server === true;
  let set: JsonObject | undefined;
  let setOnce: JsonObject | undefined;
  for (const key of EVENT_TO_PERSON_KEYS) {
    if (!(key in properties)) continue;
    if (isServer && (key === '$os' || key === '$os_version')) continue;
    if (set === undefined || setOnce === undefined) {
      set = isPlainObject(properties.$set) ? properties.$set : {};
      setOnce = isPlainObject(properties.$set_once) ? properties.$set_once : {};
    }
    const value = properties[key];
    if (!(key in set)) set[key] = value;
    const initialKey = INITIAL_KEY.get(key)!;
    // A null in $set_once would block the real first-touch value forever.
    if (value !== null && value !== undefined && !(initialKey in setOnce)) setOnce[initialKey] = value;
  }
  if (set === undefined || setOnce === undefined) return;

  // Some SDKs send $os_name instead of $os: it only feeds $initial_os, never the person itself.
  const osName = properties.$os_name;
  if (osName !== undefined && !isServer) {
    if (osName !== null && !('$initial_os' in setOnce)) setOnce.$initial_os = osName;
    delete set.$os_name;
    delete setOnce.$initial_os_name;
  }
  properties.$set = set;
  properties.$set_once = setOnce;
}

// ---------------------------------------------------------------------------------------------
// Autocapture elements

/** Takes the elements chain out of the event (string as sent, or built from legacy `$elements`). */
function takeElementsChain(raw: JsonObject, properties: JsonObject): string {
  let chain = '';
  if (typeof raw.elements_chain === 'string' && raw.elements_chain) chain = raw.elements_chain;
  else if (typeof properties.$elements_chain === 'string' && properties.$elements_chain) {
    chain = properties.$elements_chain;
  } else if (Array.isArray(properties.$elements) && properties.$elements.length > 0) {
    chain = elementsToChain(properties.$elements);
  }
  delete properties.$elements_chain;
  delete properties.$elements;
  return chain;
}

const escapeQuotes = (text: string): string => text.replace(/"/g, '\\"');

/**
 * PostHog's elements_chain text for a legacy `$elements` array (innermost element first):
 * `tag.classA.classB:attr__href="/x"href="/x"nth-child="1"nth-of-type="1"text="Hi";parent…`
 * — classes sorted, attributes sorted by key, quotes escaped.
 */
export function elementsToChain(elements: unknown[]): string {
  return elements.map((element) => elementToString(isPlainObject(element) ? element : {})).join(';');
}

function elementToString(el: JsonObject): string {
  let out = el.tag_name ? String(el.tag_name) : '';
  for (const cls of classList(el.attr__class).sort()) out += `.${cls.replace(/"/g, '')}`;

  const attributes = new Map<string, unknown>();
  const text = typeof el.$el_text === 'string' ? el.$el_text.slice(0, 400) : '';
  if (text) attributes.set('text', text);
  attributes.set('nth-child', el.nth_child ?? 0);
  attributes.set('nth-of-type', el.nth_of_type ?? 0);
  const href = typeof el.attr__href === 'string' ? el.attr__href.slice(0, 2048) : '';
  if (href) attributes.set('href', href);
  if (el.attr__id) attributes.set('attr_id', el.attr__id);
  for (const [key, value] of Object.entries(el)) {
    if (key.startsWith('attr__')) attributes.set(key, value);
  }
  const pairs = [...attributes.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => `${escapeQuotes(key)}="${escapeQuotes(String(value))}"`);
  return `${out}:${pairs.join('')}`;
}

function classList(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String).filter(Boolean);
  if (typeof value === 'string') return value.split(' ').filter(Boolean);
  return [];
}
