import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resultCsv } from '../../../src/insights/query/csv.js';

test('a table keeps its columns; text that a spreadsheet would evaluate is defused', () => {
  const csv = resultCsv({ columns: ['event', 'c'], results: [['$pageview', 3], ['=cmd()', -5], ['a,"b"', null]] });
  assert.equal(csv, 'event,c\r\n$pageview,3\r\n\'=cmd(),-5\r\n"a,""b""",\r\n');
});

test('series are a row each with a column per bucket, with the breakdown when there is one', () => {
  const csv = resultCsv({
    results: [
      { label: '$pageview', labels: ['1-Mar-2025', '2-Mar-2025'], days: ['2025-03-01', '2025-03-02'], data: [1, 2], breakdown_value: 'Chrome' },
      { label: '$pageview', labels: ['1-Mar-2025', '2-Mar-2025'], days: ['2025-03-01', '2025-03-02'], data: [0, 4], breakdown_value: '$$_posthog_breakdown_null_$$' },
    ],
  });
  assert.equal(csv, 'series,breakdown_value,1-Mar-2025,2-Mar-2025\r\n$pageview,Chrome,1,2\r\n$pageview,$$_posthog_breakdown_null_$$,0,4\r\n');
});

test('retention cohorts are a row each with a column per period', () => {
  const csv = resultCsv({ results: [{ label: 'Day 0', date: '2025-03-01', values: [{ count: 3 }, { count: 1 }] }, { label: 'Day 1', date: '2025-03-02', values: [{ count: 2 }] }] });
  assert.equal(csv, 'cohort,period 0,period 1\r\nDay 0,3,1\r\nDay 1,2\r\n');
});

test('funnel steps (and step lists per breakdown) are a row each with their scalar fields', () => {
  const steps = [
    { order: 0, name: 'a', count: 10, nested: { x: 1 } },
    { order: 1, name: 'b', count: 4 },
  ];
  assert.equal(resultCsv({ results: steps }), 'order,name,count\r\n0,a,10\r\n1,b,4\r\n');
  assert.equal(resultCsv({ results: [steps, steps] }), 'order,name,count\r\n0,a,10\r\n1,b,4\r\n0,a,10\r\n1,b,4\r\n');
});
