import type { IncomingEvent, DropReason } from '../../../src/ingestion/types.js';
import type { JsonObject } from '../../../src/kernel/json.js';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  computeTimestamp,
  elementsToChain,
  normalizeEvent,
  parseTimestamp,
  type NormalizeContext,
} from '../../../src/capture/normalize.js';

const NOW = new Date('2026-03-10T12:00:00.000Z');
const ctx = (overrides: Partial<NormalizeContext> = {}): NormalizeContext => ({ sentAt: null, now: NOW, ip: null, ...overrides });

function ok(raw: JsonObject, context: NormalizeContext = ctx()): IncomingEvent {
  const outcome = normalizeEvent(raw, context);
  assert.ok(outcome.ok, `expected ok, got ${outcome.ok ? '' : outcome.reason}`);
  return outcome.value;
}

function dropped(raw: JsonObject, context: NormalizeContext = ctx()): DropReason {
  const outcome = normalizeEvent(raw, context);
  assert.ok(!outcome.ok, 'expected a drop');
  return outcome.reason;
}

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('normalizeEvent: identity fields', () => {
  test('a posthog-js style event', () => {
    const raw = { event: '$pageview', properties: { distinct_id: 'u1', token: 'phc', a: 1 } };
    const event = ok(raw);
    assert.equal(event.event, '$pageview');
    assert.equal(event.distinctId, 'u1');
    assert.match(event.uuid, UUID_V7);
    assert.deepEqual(event.timestamp, NOW);
    assert.equal(event.elementsChain, '');
    assert.deepEqual(event.properties, { distinct_id: 'u1', token: 'phc', a: 1 });
    assert.deepEqual(raw.properties, { distinct_id: 'u1', token: 'phc', a: 1 }, 'input untouched');
  });

  test('event name: missing/empty dropped, non-strings stringified, NUL replaced, 200 chars', () => {
    assert.equal(dropped({ distinct_id: 'u' }), 'missing_event_name');
    assert.equal(dropped({ event: null, distinct_id: 'u' }), 'missing_event_name');
    assert.equal(dropped({ event: '', distinct_id: 'u' }), 'missing_event_name');
    assert.equal(ok({ event: 42, distinct_id: 'u' }).event, '42');
    assert.equal(ok({ event: { a: 1 }, distinct_id: 'u' }).event, '{"a":1}');
    assert.equal(ok({ event: 'a\u0000b', distinct_id: 'u' }).event, 'a\uFFFDb');
    assert.equal(ok({ event: 'x'.repeat(300), distinct_id: 'u' }).event, 'x'.repeat(200));
    // Truncation counts code points, so an emoji is never split.
    assert.equal(ok({ event: '😀'.repeat(250), distinct_id: 'u' }).event, '😀'.repeat(200));
  });

  test('$performance_event is dropped', () => {
    assert.equal(dropped({ event: '$performance_event', distinct_id: 'u' }), 'performance_event');
  });

  test('distinct_id sources, stringification, NUL, truncation, empties', () => {
    assert.equal(ok({ event: 'e', distinct_id: 'a', $distinct_id: 'b', properties: { distinct_id: 'c' } }).distinctId, 'a');
    assert.equal(ok({ event: 'e', $distinct_id: 'b', properties: { distinct_id: 'c' } }).distinctId, 'b');
    assert.equal(ok({ event: 'e', properties: { distinct_id: 'c' } }).distinctId, 'c');
    assert.equal(ok({ event: 'e', distinct_id: 123 }).distinctId, '123');
    assert.equal(ok({ event: 'e', distinct_id: ['x'] }).distinctId, '["x"]');
    assert.equal(ok({ event: 'e', distinct_id: 'a\u0000' }).distinctId, 'a\uFFFD');
    assert.equal(ok({ event: 'e', distinct_id: 'd'.repeat(250) }).distinctId.length, 200);
    assert.equal(dropped({ event: 'e' }), 'missing_distinct_id');
    assert.equal(dropped({ event: 'e', distinct_id: '' }), 'missing_distinct_id');
    assert.equal(dropped({ event: 'e', distinct_id: null }), 'missing_distinct_id');
  });

  test('uuid: valid kept lower-cased, empty generated, invalid dropped', () => {
    const upper = '0190A0B1-C2D3-7E4F-8A9B-0123456789AB';
    assert.equal(ok({ event: 'e', distinct_id: 'u', uuid: upper }).uuid, upper.toLowerCase());
    assert.equal(ok({ event: 'e', distinct_id: 'u', uuid: `{${upper}}` }).uuid, upper.toLowerCase());
    assert.equal(ok({ event: 'e', distinct_id: 'u', uuid: upper.replace(/-/g, '') }).uuid, upper.toLowerCase());
    assert.match(ok({ event: 'e', distinct_id: 'u', uuid: '' }).uuid, UUID_V7);
    assert.match(ok({ event: 'e', distinct_id: 'u', uuid: null }).uuid, UUID_V7);
    assert.equal(dropped({ event: 'e', distinct_id: 'u', uuid: 'not-a-uuid' }), 'invalid_uuid');
    assert.equal(dropped({ event: 'e', distinct_id: 'u', uuid: 12345 }), 'invalid_uuid');
  });

  test('two generated uuids differ', () => {
    assert.notEqual(ok({ event: 'e', distinct_id: 'u' }).uuid, ok({ event: 'e', distinct_id: 'u' }).uuid);
  });

  test('events over the size cap are dropped', () => {
    const raw = { event: 'e', distinct_id: 'u', properties: { blob: 'x'.repeat(2000) } };
    assert.equal(dropped(raw, ctx({ maxEventBytes: 1000 })), 'event_too_large');
    assert.ok(ok(raw, ctx({ maxEventBytes: 5000 })));
    assert.equal(dropped({ event: 'e', distinct_id: 'u', properties: { blob: 'x'.repeat(1_000_001) } }), 'event_too_large');
  });
});

describe('timestamps', () => {
  const at = (iso: string) => new Date(iso);

  test('no timestamp → now; timestamp without sent_at → as sent', () => {
    assert.deepEqual(ok({ event: 'e', distinct_id: 'u' }).timestamp, NOW);
    assert.deepEqual(ok({ event: 'e', distinct_id: 'u', timestamp: '2026-03-01T00:00:00Z' }).timestamp, at('2026-03-01T00:00:00Z'));
  });

  test('clock skew is corrected with the request sent_at', () => {
    // Client clock is 1 h fast: it says it sent at 13:00 an event made at 12:30.
    const event = ok(
      { event: 'e', distinct_id: 'u', timestamp: '2026-03-10T12:30:00Z' },
      ctx({ sentAt: at('2026-03-10T13:00:00Z') }),
    );
    assert.deepEqual(event.timestamp, at('2026-03-10T11:30:00Z'));
    assert.equal(event.properties.$sent_at, '2026-03-10T13:00:00.000Z');
  });

  test('a per-event sent_at overrides the request one', () => {
    const event = ok(
      { event: 'e', distinct_id: 'u', timestamp: '2026-03-10T12:30:00Z', sent_at: '2026-03-10T12:40:00Z' },
      ctx({ sentAt: at('2026-03-10T13:00:00Z') }),
    );
    assert.deepEqual(event.timestamp, at('2026-03-10T11:50:00Z'));
  });

  test('$ignore_sent_at: true skips skew correction', () => {
    const event = ok(
      { event: 'e', distinct_id: 'u', timestamp: '2026-03-01T00:00:00Z', properties: { $ignore_sent_at: true } },
      ctx({ sentAt: at('2026-03-10T13:00:00Z') }),
    );
    assert.deepEqual(event.timestamp, at('2026-03-01T00:00:00Z'));
  });

  test('offset (ms before now) overrides everything', () => {
    const event = ok(
      { event: 'e', distinct_id: 'u', timestamp: '2020-01-01T00:00:00Z', offset: 5000 },
      ctx({ sentAt: at('2026-03-10T13:00:00Z') }),
    );
    assert.deepEqual(event.timestamp, new Date(NOW.getTime() - 5000));
  });

  test('more than 23 h in the future → now; less is kept', () => {
    assert.deepEqual(ok({ event: 'e', distinct_id: 'u', timestamp: '2026-03-11T12:00:00Z' }).timestamp, NOW);
    assert.deepEqual(ok({ event: 'e', distinct_id: 'u', timestamp: '2026-03-11T10:00:00Z' }).timestamp, at('2026-03-11T10:00:00Z'));
  });

  test('results outside years 0–9999 → Unix epoch', () => {
    const props = {};
    assert.deepEqual(computeTimestamp({ timestamp: '0001-01-01T00:00:00Z' }, props, at('9000-01-01T00:00:00Z'), NOW), new Date(0));
    assert.deepEqual(computeTimestamp({ offset: 1e15 }, props, null, NOW), new Date(0));
  });

  test('unparsable timestamps fall back to now', () => {
    for (const timestamp of ['yesterday', '2026-13-01T00:00:00Z', '2026-02-30', {}, true]) {
      assert.deepEqual(ok({ event: 'e', distinct_id: 'u', timestamp }).timestamp, NOW, String(timestamp));
    }
  });

  test('formats', () => {
    const cases: [unknown, string][] = [
      ['2026-03-01T10:00:00.123Z', '2026-03-01T10:00:00.123Z'],
      ['2026-03-01T10:00:00.123456+00:00', '2026-03-01T10:00:00.123Z'],
      ['2026-03-01T10:00:00+02', '2026-03-01T08:00:00.000Z'],
      ['2026-03-01T10:00:00-0530', '2026-03-01T15:30:00.000Z'],
      ['2026-03-01T10:00:00', '2026-03-01T10:00:00.000Z'],
      ['2026-03-01 10:00:00', '2026-03-01T10:00:00.000Z'],
      ['2026-03-01', '2026-03-01T00:00:00.000Z'],
      ['Sun, 01 Mar 2026 10:00:00 +0100', '2026-03-01T09:00:00.000Z'],
      [1772359200, '2026-03-01T10:00:00.000Z'],
      [1772359200123, '2026-03-01T10:00:00.123Z'],
      ['1772359200', '2026-03-01T10:00:00.000Z'],
      ['1772359200123', '2026-03-01T10:00:00.123Z'],
      ['0099-01-01T00:00:00Z', '0099-01-01T00:00:00.000Z'],
    ];
    for (const [input, expected] of cases) {
      assert.equal(parseTimestamp(input)?.toISOString(), expected, String(input));
    }
  });
});

describe('properties', () => {
  test('top-level $set/$set_once merge into properties; top level wins', () => {
    const event = ok({
      event: '$identify',
      distinct_id: 'u',
      $set: { a: 'top', b: 2 },
      $set_once: { first: 'x' },
      properties: { $set: { a: 'inner', c: 3 } },
    });
    assert.deepEqual(event.properties.$set, { a: 'top', b: 2, c: 3 });
    assert.deepEqual(event.properties.$set_once, { first: 'x' });
  });

  test('$ip from the request unless the event sent one', () => {
    assert.equal(ok({ event: 'e', distinct_id: 'u' }, ctx({ ip: '1.2.3.4' })).properties.$ip, '1.2.3.4');
    assert.equal(ok({ event: 'e', distinct_id: 'u', properties: { $ip: '5.6.7.8' } }, ctx({ ip: '1.2.3.4' })).properties.$ip, '5.6.7.8');
    assert.equal('$ip' in ok({ event: 'e', distinct_id: 'u' }).properties, false);
  });

  test('event properties lift into $set and $set_once.$initial_*', () => {
    const event = ok({
      event: '$pageview',
      distinct_id: 'u',
      properties: {
        $browser: 'Chrome',
        $current_url: 'https://x.test/a',
        utm_source: 'news',
        gclid: null,
        $screen_width: 1920,
        other: 'not lifted',
        $set: { $browser: 'Firefox' },
        $set_once: { $initial_utm_source: 'older' },
      },
    });
    assert.deepEqual(event.properties.$set, {
      $browser: 'Firefox',
      $current_url: 'https://x.test/a',
      utm_source: 'news',
      gclid: null,
      $screen_width: 1920,
    });
    assert.deepEqual(event.properties.$set_once, {
      $initial_utm_source: 'older',
      $initial_browser: 'Chrome',
      $initial_current_url: 'https://x.test/a',
      $initial_screen_width: 1920,
    });
  });

  test('$os_name is an alias for $initial_os only', () => {
    const event = ok({ event: 'e', distinct_id: 'u', properties: { $os_name: 'iOS' } });
    assert.deepEqual(event.properties.$set, {});
    assert.deepEqual(event.properties.$set_once, { $initial_os: 'iOS' });
    const both = ok({ event: 'e', distinct_id: 'u', properties: { $os: 'Android', $os_name: 'iOS' } });
    assert.deepEqual(both.properties.$set, { $os: 'Android' });
    assert.deepEqual(both.properties.$set_once, { $initial_os: 'Android' });
  });

  test('$is_server: true does not lift $os/$os_version', () => {
    const event = ok({ event: 'e', distinct_id: 'u', properties: { $is_server: true, $os: 'Linux', $os_version: '6', $browser: 'x' } });
    assert.deepEqual(event.properties.$set, { $browser: 'x' });
    assert.deepEqual(event.properties.$set_once, { $initial_browser: 'x' });
  });

  test('nothing to lift → no $set added; $snapshot never lifts', () => {
    assert.equal('$set' in ok({ event: 'e', distinct_id: 'u', properties: { a: 1 } }).properties, false);
    assert.equal('$set' in ok({ event: '$snapshot', distinct_id: 'u', properties: { $browser: 'x' } }).properties, false);
  });

  test('$process_person_profile: false drops person events', () => {
    for (const name of ['$identify', '$create_alias', '$merge_dangerously', '$groupidentify']) {
      assert.equal(
        dropped({ event: name, distinct_id: 'u', properties: { $process_person_profile: false } }),
        'process_person_profile_false_person_event',
      );
    }
  });

  test('$process_person_profile: false strips person updates and keeps the flag', () => {
    const event = ok({
      event: 'e',
      distinct_id: 'u',
      $set: { a: 1 },
      properties: { $process_person_profile: false, $set_once: { b: 1 }, $unset: ['c'], $browser: 'x' },
    });
    assert.deepEqual(event.properties, { $process_person_profile: false, $browser: 'x' });
  });

  test('$process_person_profile: true (or a non-boolean) is removed and processing goes on', () => {
    for (const value of [true, 'false', 0]) {
      const event = ok({ event: '$identify', distinct_id: 'u', properties: { $process_person_profile: value, $browser: 'x' } });
      assert.equal('$process_person_profile' in event.properties, false);
      assert.deepEqual(event.properties.$set, { $browser: 'x' });
    }
  });
});

describe('elements chain', () => {
  test('taken from top-level elements_chain or properties.$elements_chain', () => {
    const top = ok({ event: '$autocapture', distinct_id: 'u', elements_chain: 'a:nth-child="1"', properties: { $elements_chain: 'b' } });
    assert.equal(top.elementsChain, 'a:nth-child="1"');
    assert.equal('$elements_chain' in top.properties, false);
    const inner = ok({ event: '$autocapture', distinct_id: 'u', properties: { $elements_chain: 'button:text="Go"' } });
    assert.equal(inner.elementsChain, 'button:text="Go"');
  });

  test('built from legacy $elements', () => {
    const elements = [
      { tag_name: 'a', $el_text: 'Say "hi"', attr__class: 'primary btn', attr__href: '/x', nth_child: 1, nth_of_type: 2 },
      { tag_name: 'div', attr__id: 'main', attr__class: ['z', 'a'] },
    ];
    const expected =
      'a.btn.primary:attr__class="primary btn"attr__href="/x"href="/x"nth-child="1"nth-of-type="2"text="Say \\"hi\\""' +
      ';div.a.z:attr__class="z,a"attr__id="main"attr_id="main"nth-child="0"nth-of-type="0"';
    assert.equal(elementsToChain(elements), expected);
    const event = ok({ event: '$autocapture', distinct_id: 'u', properties: { $elements: elements } });
    assert.equal(event.elementsChain, expected);
    assert.equal('$elements' in event.properties, false);
  });
});

describe('bot events (SIGHTLINE_DROP_BOT_EVENTS)', () => {
  const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
  const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
  const HEADLESS = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36';
  const event = (properties: JsonObject): JsonObject => ({ event: '$pageview', distinct_id: 'd', properties });
  const on = ctx({ dropBots: true });

  test('dropped when on: a crawler or headless agent in $raw_user_agent or $user_agent, or posthog-js\'s $browser_type "bot"', () => {
    assert.equal(dropped(event({ $raw_user_agent: GOOGLEBOT }), on), 'bot');
    assert.equal(dropped(event({ $user_agent: HEADLESS }), on), 'bot');
    assert.equal(dropped(event({ $browser_type: 'bot', $raw_user_agent: CHROME }), on), 'bot');
  });

  test('kept when on: a browser agent, no agent at all (server SDKs), or a non-string agent', () => {
    assert.equal(ok(event({ $raw_user_agent: CHROME }), on).event, '$pageview');
    assert.equal(ok(event({ $lib: 'posthog-node' }), on).event, '$pageview');
    assert.equal(ok(event({ $raw_user_agent: 42, $browser_type: 'browser' }), on).event, '$pageview');
  });

  test('kept when off (the default)', () => {
    assert.equal(ok(event({ $raw_user_agent: GOOGLEBOT, $browser_type: 'bot' })).event, '$pageview');
  });
});
