/** The time span a HogQL statement's bounds on `timestamp` give its calendar functions. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { parseSelect, StatementCompiler } from '../../../src/hogql/index.js';
import { statementTimeSpan } from '../../../src/insights/hogql/time-span.js';

const NOW = new Date('2026-11-28T12:00:00Z');
const span = (text: string) => {
  const compiled = new StatementCompiler({ propertyType: () => null, now: NOW, timeZone: 'Europe/Paris' }, 1, { values: {}, filters: null }).compile(parseSelect(text));
  const { from, to } = statementTimeSpan(compiled.query, NOW);
  return [from.toISOString(), to.toISOString()];
};

describe('statementTimeSpan', () => {
  it('widens the bounds on timestamp (wall dates of the project zone) by a day, up to now at least', () => {
    assert.deepEqual(span("select count() from events where timestamp >= '2026-10-29' and timestamp < toDateTime('2026-11-10') + interval 1 day"), ['2026-10-27T23:00:00.000Z', '2026-11-29T12:00:00.000Z']);
  });
  it('reads bounds inside subqueries, and only those compared with timestamp', () => {
    assert.deepEqual(span("select count() from (select event from events where timestamp > '2026-11-01' and toDateTime('2020-01-01') < now())"), ['2026-10-30T23:00:00.000Z', '2026-11-29T12:00:00.000Z']);
  });
  it('is the year up to now without bounds', () => {
    assert.deepEqual(span('select event, count() from events group by event'), ['2025-11-26T12:00:00.000Z', '2026-11-29T12:00:00.000Z']);
  });
});
