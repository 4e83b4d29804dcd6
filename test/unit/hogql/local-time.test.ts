/**
 * The printer's time-zone conversions inside a statement's time span (integer arithmetic on the
 * offset segments) against DuckDB's ICU, on every quarter hour around DST changes — gaps,
 * overlaps, half-hour shifts, zones whose clocks change at midnight — in an in-memory DuckDB.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';

import { Printer } from '../../../src/hogql/duckdb/printer.js';
import { timestampText } from '../../../src/hogql/dates.js';

const QUARTER_HOUR = 15 * 60_000;

/** [zone, span start, span end]: each span holds at least one change of offset. */
const SPANS: Array<[string, string, string]> = [
  ['Europe/Paris', '2026-03-27T00:00:00Z', '2026-04-01T00:00:00Z'],
  ['Europe/Paris', '2026-10-22T22:00:00Z', '2026-10-27T00:00:00Z'],
  ['America/New_York', '2026-10-30T00:00:00Z', '2026-11-03T00:00:00Z'],
  ['Australia/Lord_Howe', '2026-04-03T00:00:00Z', '2026-04-07T00:00:00Z'],
  ['America/Havana', '2026-03-06T00:00:00Z', '2026-03-10T00:00:00Z'],
  ['Asia/Kolkata', '2026-01-01T00:00:00Z', '2026-01-03T00:00:00Z'],
  // Spans that end just before, or start just after, a change (01:00 and 06:00 UTC).
  ['Europe/Paris', '2026-10-24T12:00:00Z', '2026-10-25T00:30:00Z'],
  ['America/New_York', '2026-11-01T06:10:00Z', '2026-11-02T00:00:00Z'],
];

describe('LocalTime inside a time span agrees with ICU', () => {
  let instance: DuckDBInstance;
  let db: DuckDBConnection;
  before(async () => {
    instance = await DuckDBInstance.create(':memory:');
    db = await instance.connect();
  });
  after(() => {
    db.closeSync();
    instance.closeSync();
  });

  for (const [zone, from, to] of SPANS) {
    it(`${zone} ${from.slice(0, 10)} – ${to.slice(0, 10)}: wall clock, and minute, hour and day starts back to UTC`, async () => {
      const span = { from: new Date(from), to: new Date(to) };
      const fast = new Printer({ timeSpan: span });
      const icu = new Printer();
      const column = (p: Printer) => {
        const wall = p.local.wall('ts', zone);
        return `${wall} AS wall, ${p.local.instant(`date_trunc('hour', ${wall})`, zone)} AS hour_start, ${p.local.instant(`date_trunc('minute', ${wall})`, zone)} AS minute_start, ${p.local.instant(`date_trunc('day', ${wall})`, zone)} AS day_start`;
      };
      const times = `FROM (SELECT unnest(range(CAST('${timestampText(span.from)}' AS TIMESTAMP), CAST('${timestampText(span.to)}' AS TIMESTAMP), INTERVAL ${QUARTER_HOUR / 60_000} MINUTE)) AS ts)`;
      const read = async (p: Printer) => {
        const printed = p.printed(`SELECT ts, ${column(p)} ${times} ORDER BY ts`);
        return (await db.runAndReadAll(printed.sql, printed.params as never)).getRowsJson();
      };
      const [expected, actual] = [await read(icu), await read(fast)];
      assert.ok(expected.length > 40);
      assert.deepEqual(actual, expected);
    });
  }
});
