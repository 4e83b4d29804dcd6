import assert from 'node:assert/strict';
import { test } from 'node:test';

import { inferPropertyType, isLikelyDateString } from '../../../src/ingestion/plan/infer-type.js';

const NOW = new Date('2026-03-10T12:00:00.000Z');
const nowSeconds = Math.floor(NOW.getTime() / 1000);
const SIX_MONTHS = 15_768_000;

test('property type inference table (PostHog property-defs-rs rules)', () => {
  const table: [string, unknown, ReturnType<typeof inferPropertyType>][] = [
    // Pinned to String whatever the value.
    ['utm_source', 123, 'String'],
    ['UTM_campaign', true, 'String'],
    ['$feature/beta', true, 'String'],
    ['$feature_flag_response', false, 'String'],
    ['$survey_response', 5, 'String'],
    ['$survey_response_2', '2026-01-01', 'String'],
    // Date-ish keys with epoch numbers: recent (≥ now − 6 months) unsigned integers only.
    ['created_at', nowSeconds, 'DateTime'],
    ['created_at', nowSeconds - SIX_MONTHS, 'DateTime'],
    ['created_at', nowSeconds - SIX_MONTHS - 1, 'Numeric'],
    ['signup_time', nowSeconds * 1000, 'DateTime'],
    ['updatedAt', nowSeconds, 'DateTime'],
    ['last-at', nowSeconds, 'DateTime'],
    ['Timestamp', nowSeconds, 'DateTime'],
    ['birth_date', nowSeconds + 0.5, 'Numeric'],
    ['birth_date', -5, 'Numeric'],
    ['count', nowSeconds, 'Numeric'],
    // Date-ish keys with date strings.
    ['signup_date', '2024-01-05', 'DateTime'],
    ['signup_date', 'soon', 'String'],
    // Values alone.
    ['anything', '2024-01-05T10:00:00Z', 'DateTime'],
    ['anything', '2024/01/05 10:00:00', 'DateTime'],
    ['anything', '05-01-2024', 'DateTime'],
    ['anything', 'Tue, 1 Jul 2003 10:52:37 +0200', 'DateTime'],
    ['anything', 'true', 'Boolean'],
    ['anything', ' FALSE ', 'Boolean'],
    ['anything', 'True', 'String'],
    ['anything', 'hello', 'String'],
    ['anything', '123', 'String'],
    ['anything', 42, 'Numeric'],
    ['anything', 4.2, 'Numeric'],
    ['anything', true, 'Boolean'],
    ['anything', null, null],
    ['anything', { a: 1 }, null],
    ['anything', [1], null],
  ];
  for (const [key, value, expected] of table) {
    assert.equal(inferPropertyType(key, value, NOW), expected, `${key} = ${JSON.stringify(value)}`);
  }
});

test('likely date strings', () => {
  for (const text of ['2024-01-05', '2024-01-05T10:00:00.123+02:00', '2024-01-05 10:00:00', '12/31/2024', 'Tue, 1 Jul 2003 10:52:37 GMT']) {
    assert.ok(isLikelyDateString(text), text);
  }
  for (const text of ['2024', '10:00:00', 'Jan 5', '2024-01-05X', '1 Jul 2003']) {
    assert.ok(!isLikelyDateString(text), text);
  }
});
