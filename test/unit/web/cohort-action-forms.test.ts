/**
 * The cohort and action editors' forms (web/src/pages/cohorts/cohort-form.ts,
 * web/src/pages/actions/action-form.ts, web/src/pages/cohorts/csv-errors.ts): a stored definition
 * the editor can show reopens as the form that made it and saves back unchanged (fast-check);
 * anything else is kept whole; the API's CSV refusal splits into its rows.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { ActionStep, Cohort } from '../../../web/src/api/types.js';
import { OPERATORS } from '../../../web/src/pages/activity/filters.js';
import { draftOf, filtersOf, INTERVALS, TIMES_OPERATORS } from '../../../web/src/pages/cohorts/cohort-form.js';
import { csvRefusal } from '../../../web/src/pages/cohorts/csv-errors.js';
import { MATCHING, stepDraftOf, stepOf } from '../../../web/src/pages/actions/action-form.js';

/** fast-check's records have no prototype; the API's JSON objects do. */
const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value));

const name = fc.string({ minLength: 1, maxLength: 12 }).filter((s) => s.trim() === s && s !== '');

const personFilter = fc.oneof(
  fc.record({ key: name, value: fc.oneof(name, fc.integer()), operator: fc.constantFrom(...OPERATORS.filter((o) => o.needsValue).map((o) => o.value)), type: fc.constant('person') }),
  fc.record({ key: name, operator: fc.constantFrom(...OPERATORS.filter((o) => !o.needsValue).map((o) => o.value)), type: fc.constant('person') }),
).map(plain);

const behaviouralFilter = fc.record({
  key: name,
  type: fc.constant('behavioral'),
  value: fc.constant('performed_event_multiple'),
  operator: fc.constantFrom(...TIMES_OPERATORS.map((o) => o.value)),
  operator_value: fc.nat(1000),
  time_value: fc.integer({ min: 1, max: 365 }),
  time_interval: fc.constantFrom(...INTERVALS.map((i) => i.value)),
  negation: fc.constant(true),
}, { requiredKeys: ['key', 'type', 'value', 'operator', 'operator_value', 'time_value', 'time_interval'] }).map(plain);

const match = fc.constantFrom('AND' as const, 'OR' as const);

/** A group as the editor writes it: persons first, then behaviours. */
const flatGroup = fc
  .record({ type: match, persons: fc.array(personFilter, { maxLength: 4 }), behaviours: fc.array(behaviouralFilter, { maxLength: 4 }) })
  .map(({ type, persons, behaviours }) => ({ type, values: [...persons, ...behaviours] as unknown[] }));

/** What the editor writes: the top group's own conditions, then its groups (one level deep). */
const editable = fc
  .record({ top: flatGroup, groups: fc.array(flatGroup, { maxLength: 3 }) })
  .map(({ top, groups }) => ({ type: top.type, values: [...top.values, ...groups] }));

const cohortWith = (properties: unknown): Cohort => ({
  id: 1,
  name: 'c',
  description: '',
  filters: { properties },
  is_static: false,
  deleted: false,
  count: null,
  is_calculating: false,
  last_calculation: null,
  errors_calculating: 0,
  last_error: null,
  created_at: '2026-01-01T00:00:00Z',
});

test('an editable cohort definition reopens in the form and saves back unchanged', () => {
  fc.assert(
    fc.property(editable, (properties) => {
      const draft = draftOf(cohortWith(properties));
      assert.equal(draft.unsupported, null);
      assert.equal(draft.groups.length, properties.values.filter((v) => 'values' in (v as object)).length);
      assert.deepEqual(filtersOf(draft), { properties });
    }),
  );
});

test('"performed at least once" opens as at least 1 time, which means the same', () => {
  const draft = draftOf(cohortWith({ type: 'AND', values: [{ key: 'signed up', type: 'behavioral', value: 'performed_event', time_value: 7, time_interval: 'day' }] }));
  assert.deepEqual(draft.behaviours, [{ negated: false, event: 'signed up', operator: 'gte', times: '1', within: '7', interval: 'day' }]);
});

test('a definition the editor cannot show is kept whole', () => {
  const nested = { type: 'AND', values: [{ type: 'OR', values: [{ type: 'AND', values: [{ key: 'a', value: 'b', type: 'person' }] }] }, { key: 'c', value: 'd', type: 'person' }] };
  for (const properties of [
    nested,
    { type: 'AND', values: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person', negation: true }] },
    { type: 'AND', values: [{ key: 'id', value: 3, type: 'cohort' }] },
    { type: 'AND', values: [{ key: 'plan', value: ['pro', 'team'], operator: 'exact', type: 'person' }] },
    { type: 'AND', values: [{ key: 'plan', value: 'x', operator: 'is_date_before', type: 'person' }] },
  ]) {
    const draft = draftOf(cohortWith(properties));
    assert.deepEqual(draft.unsupported, properties);
    assert.deepEqual(filtersOf({ ...draft, name: 'renamed' }), { properties });
  }
});

test('numbers the API would refuse are sent as typed, for its words', () => {
  const draft = { ...draftOf(cohortWith(null)), behaviours: [{ negated: false, event: 'x', operator: 'gte' as const, times: 'many', within: '', interval: 'day' as const }] };
  const [behaviour] = (filtersOf(draft).properties as { values: Record<string, unknown>[] }).values;
  assert.equal(behaviour!.operator_value, 'many');
  assert.equal(behaviour!.time_value, '');
});

const text = fc.string({ maxLength: 10 });
const stepArb: fc.Arbitrary<ActionStep> = fc
  .record({
    event: text,
    url: text,
    url_matching: fc.constantFrom(...MATCHING.map((m) => m.value)),
    text: text,
    text_matching: fc.constantFrom(...MATCHING.map((m) => m.value)),
    href: text,
    href_matching: fc.constantFrom(...MATCHING.map((m) => m.value)),
    selector: text,
    tag_name: text,
    properties: fc.array(fc.record({ key: name, value: name, operator: fc.constant('exact'), type: fc.constantFrom('event', 'person') }), { maxLength: 2 }),
  })
  // The API's answer: fields not checked are null, and a matching mode only beside its pattern.
  .map((s) => {
    const step: ActionStep = {};
    for (const [key, value] of Object.entries(s)) (step as Record<string, unknown>)[key] = value === '' || (Array.isArray(value) && value.length === 0) ? null : value;
    for (const field of ['url', 'text', 'href'] as const) if (step[field] === null) step[`${field}_matching`] = null;
    return plain(step);
  });

test('an action step reopens in the form and saves back with the same fields', () => {
  fc.assert(
    fc.property(stepArb, (step) => {
      const given = Object.fromEntries(Object.entries(step).filter(([, v]) => v !== null));
      assert.deepEqual(stepOf(stepDraftOf(step)), given);
    }),
  );
});

test("the API's CSV refusal is split into its rows, quoted values with ; and quotes included", () => {
  const detail = '3 row(s) name no person (by email); nothing was added. row 2 ("a;b@x"): no person has this email; row 4 ("say \\"hi\\""): no person has this email; row 7: no email.';
  assert.deepEqual(csvRefusal(detail), {
    summary: '3 row(s) name no person (by email); nothing was added.',
    rows: ['row 2 ("a;b@x"): no person has this email', 'row 4 ("say \\"hi\\""): no person has this email', 'row 7: no email'],
  });
  assert.deepEqual(csvRefusal('25 row(s) name no person (by distinct_id); nothing was added. row 2 ("x"): no person has this distinct_id; and 24 more.').rows, [
    'row 2 ("x"): no person has this distinct_id',
    'and 24 more rows',
  ]);
  assert.deepEqual(csvRefusal('The CSV could not be read: unclosed quote.'), { summary: 'The CSV could not be read: unclosed quote.', rows: [] });
});
