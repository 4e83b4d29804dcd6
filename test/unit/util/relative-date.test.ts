import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseFilterDate, parseRelativeDate } from '../../../src/util/relative-date.js';

const now = new Date('2026-03-31T12:00:00Z');

test('relative amounts in hours, days, weeks, months and years', () => {
  assert.equal(parseRelativeDate('-24h', now)?.toISOString(), '2026-03-30T12:00:00.000Z');
  assert.equal(parseRelativeDate('-7d', now)?.toISOString(), '2026-03-24T12:00:00.000Z');
  assert.equal(parseRelativeDate('2w', now)?.toISOString(), '2026-03-17T12:00:00.000Z');
  assert.equal(parseRelativeDate('-1y', now)?.toISOString(), '2025-03-31T12:00:00.000Z');
});

test('months clamp to the last day of a shorter month', () => {
  assert.equal(parseRelativeDate('-1m', now)?.toISOString(), '2026-02-28T12:00:00.000Z');
  assert.equal(parseRelativeDate('-1y', new Date('2028-02-29T00:00:00Z'))?.toISOString(), '2027-02-28T00:00:00.000Z');
});

test('rejects what is not a relative date', () => {
  for (const text of ['7', '-7x', '-10000d', 'd', '', '-7 d']) assert.equal(parseRelativeDate(text, now), null, text);
});

test('absolute dates: naive ISO is UTC, numbers are Unix seconds, garbage is null', () => {
  assert.equal(parseFilterDate('2026-01-02 03:04:05', now)?.toISOString(), '2026-01-02T03:04:05.000Z');
  assert.equal(parseFilterDate('2026-01-02T03:04:05+02:00', now)?.toISOString(), '2026-01-02T01:04:05.000Z');
  assert.equal(parseFilterDate(1_700_000_000, now)?.toISOString(), '2023-11-14T22:13:20.000Z');
  assert.equal(parseFilterDate('not a date', now), null);
  assert.equal(parseFilterDate(Number.NaN, now), null);
});
