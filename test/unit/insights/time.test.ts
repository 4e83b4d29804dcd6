import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { buckets, bucketWallOf, describeRange, resolveDateRange, type Interval, type ResolveOptions } from '../../../src/insights/time/index.js';
import { ApiError } from '../../../src/kernel/errors.js';

const at = (iso: string) => new Date(iso);
const options = (over: Partial<ResolveOptions> = {}): ResolveOptions => ({ interval: 'day', timeZone: 'UTC', weekStartDay: 0, now: at('2025-03-10T15:30:00Z'), ...over });
const iso = (ms: number) => new Date(ms).toISOString();

describe('date ranges', () => {
  test('the default range starts at the start of the day 7 days ago and ends at the end of today', () => {
    const range = resolveDateRange(null, options());
    assert.equal(iso(range.from), '2025-03-03T00:00:00.000Z');
    assert.equal(iso(range.to), '2025-03-11T00:00:00.000Z');
    assert.deepEqual(describeRange(range), { date_from: '2025-03-03T00:00:00+00:00', date_to: '2025-03-10T23:59:59.999999+00:00' });
  });

  test('relative dates count back on the project wall clock and snap to day starts', () => {
    const range = resolveDateRange({ date_from: '-2d' }, options({ timeZone: 'America/New_York' }));
    // 15:30 UTC is 11:30 in New York (EDT since 9 March): two days back is 8 March, 00:00 EST.
    assert.equal(iso(range.from), '2025-03-08T05:00:00.000Z');
    assert.equal(iso(range.to), '2025-03-11T04:00:00.000Z');
    assert.equal(buckets(range).map((b) => b.day).join(','), '2025-03-08,2025-03-09,2025-03-10');
    // 9 March is a 23-hour day there.
    const [, ninth, tenth] = buckets(range);
    assert.equal(tenth.start - ninth.start, 23 * 3_600_000);
  });

  test('an hours-based relative date_from reads from the start of its hour, not of its day', () => {
    const range = resolveDateRange({ date_from: '-48h' }, options());
    assert.equal(iso(range.from), '2025-03-08T15:00:00.000Z');
    assert.equal(iso(range.readFrom), '2025-03-08T15:00:00.000Z');
  });

  test('Start and End snap to the unit', () => {
    assert.equal(iso(resolveDateRange({ date_from: '-1mStart', date_to: '-1mEnd' }, options()).from), '2025-02-01T00:00:00.000Z');
    assert.equal(iso(resolveDateRange({ date_from: '-1mStart', date_to: '-1mEnd' }, options()).to), '2025-03-01T00:00:00.000Z');
    assert.equal(iso(resolveDateRange({ date_from: 'yStart' }, options()).from), '2025-01-01T00:00:00.000Z');
  });

  test('an absolute date_to includes its whole day; explicitDate keeps both bounds verbatim', () => {
    assert.equal(iso(resolveDateRange({ date_from: '2025-01-01', date_to: '2025-01-31' }, options()).to), '2025-02-01T00:00:00.000Z');
    const explicit = resolveDateRange({ date_from: '2025-01-01T10:00:00', date_to: '2025-01-02T10:00:00', explicitDate: true }, options());
    assert.equal(iso(explicit.readFrom), '2025-01-01T10:00:00.000Z');
    assert.equal(iso(explicit.to), '2025-01-02T10:00:00.001Z');
  });

  test('a BoldNumber-style exact range is a rolling window ending now', () => {
    const range = resolveDateRange({ date_from: '-7d' }, options({ exact: true }));
    assert.equal(iso(range.from), '2025-03-03T15:30:00.000Z');
    assert.equal(iso(range.to), '2025-03-10T15:30:00.001Z');
  });

  test('a month interval reads the whole first month (events before date_from in it count)', () => {
    const range = resolveDateRange({ date_from: '2025-03-15', date_to: '2025-04-10' }, options({ interval: 'month' }));
    assert.equal(iso(range.readFrom), '2025-03-01T00:00:00.000Z');
    assert.deepEqual(buckets(range).map((b) => [b.day, b.label]), [['2025-03-01', 'Mar 2025'], ['2025-04-01', 'Apr 2025']]);
  });

  test('weeks start on the project week start day; labels are clipped to the range', () => {
    const range = resolveDateRange({ date_from: '2025-03-05', date_to: '2025-03-20' }, options({ interval: 'week' }));
    assert.equal(bucketWallOf(range, at('2025-03-10T12:00:00Z').getTime()), Date.UTC(2025, 2, 9));
    assert.deepEqual(buckets(range).map((b) => [b.day, b.label]), [['2025-03-02', '5–8 Mar'], ['2025-03-09', '9–15 Mar'], ['2025-03-16', '16–20 Mar']]);
    const monday = resolveDateRange({ date_from: '2025-03-05', date_to: '2025-03-20' }, options({ interval: 'week', weekStartDay: 1 }));
    assert.equal(buckets(monday)[0].day, '2025-03-03');
    const yearEnd = resolveDateRange({ date_from: '2024-12-29', date_to: '2025-01-04' }, options({ interval: 'week' }));
    assert.equal(buckets(yearEnd)[0].label, '29-Dec-2024 – 4-Jan-2025');
  });

  test('labels of day and hour buckets', () => {
    const day = buckets(resolveDateRange({ date_from: '2025-03-05', date_to: '2025-03-05' }, options()));
    assert.deepEqual(day.map((b) => [b.day, b.label, b.iso]), [['2025-03-05', '5-Mar-2025', '2025-03-05T00:00:00+00:00']]);
    const hours = buckets(resolveDateRange({ date_from: '-2h' }, options({ interval: 'hour' })));
    assert.deepEqual(hours.map((b) => b.day), ['2025-03-10 13:00:00', '2025-03-10 14:00:00', '2025-03-10 15:00:00']);
    assert.equal(hours[0].label, '10-Mar 13:00');
  });

  test('a bad date is a 400 naming the field', () => {
    assert.throws(() => resolveDateRange({ date_from: 'yesterday' }, options()), (e: unknown) => e instanceof ApiError && e.attr === 'dateRange.date_from');
    assert.throws(() => resolveDateRange({ date_from: '2025-03-10', date_to: '2025-03-01' }, options()), (e: unknown) => e instanceof ApiError && e.attr === 'dateRange.date_to');
  });

  test('every instant of the range falls in exactly one listed bucket, in any zone and interval', () => {
    const zones = ['UTC', 'Europe/Paris', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'America/Sao_Paulo'];
    const intervals: Interval[] = ['hour', 'day', 'week', 'month'];
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.constantFrom(...intervals),
        fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2026, 0, 1) }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 1 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (timeZone, interval, nowMs, days, weekStartDay, where) => {
          const range = resolveDateRange({ date_from: `-${interval === 'hour' ? Math.min(days, 5) : days}d` }, { interval, timeZone, weekStartDay: weekStartDay as 0 | 1, now: new Date(nowMs) });
          const list = buckets(range);
          const instant = Math.floor(range.readFrom + where * (range.to - 1 - range.readFrom));
          const wall = bucketWallOf(range, instant);
          const holding = list.filter((b) => b.wall === wall);
          assert.equal(holding.length, 1, `${new Date(instant).toISOString()} in ${timeZone}/${interval}`);
          // Buckets are strictly increasing and each starts where the wall clock says.
          for (let i = 1; i < list.length; i++) assert.ok(list[i].start > list[i - 1].start);
        },
      ),
      { numRuns: 300 },
    );
  });
});

test('the hour the clock skips when DST starts has no bucket; the repeated hour in autumn is one bucket (by wall clock, as ClickHouse groups it)', () => {
  // Paris, 30 March 2025: 02:00 CET jumps to 03:00 CEST (01:00 UTC).
  const spring = buckets(resolveDateRange({ date_from: '2025-03-30T00:00:00', date_to: '2025-03-30T04:00:00', explicitDate: true }, options({ interval: 'hour', timeZone: 'Europe/Paris' })));
  assert.deepEqual(spring.map((b) => b.day), ['2025-03-30 00:00:00', '2025-03-30 01:00:00', '2025-03-30 03:00:00', '2025-03-30 04:00:00']);
  assert.deepEqual(spring.map((b) => iso(b.start)), ['2025-03-29T23:00:00.000Z', '2025-03-30T00:00:00.000Z', '2025-03-30T01:00:00.000Z', '2025-03-30T02:00:00.000Z']);
});
