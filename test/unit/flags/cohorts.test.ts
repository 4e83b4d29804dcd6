/**
 * Cohort definitions compiled by the flags engine (flags/engine/cohorts.ts), against a plain
 * reference evaluator written from PostHog's description: AND/OR groups, negation, person
 * filters (exact, case-insensitive), behavioural counts, cohort references (inline or stored),
 * and the refusals.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { CohortDefinitionError, compileCohorts, countMatches, validateCohortFilters, type BehavioralFilter, type CohortScope } from '../../../src/flags/engine/cohorts.js';
import { StepBudget } from '../../../src/flags/engine/regex.js';

type Node = { type: 'AND' | 'OR'; values: Node[] } | { key: string; type: 'person'; value: string; operator: 'exact'; negation: boolean } | { key: 'purchase'; type: 'behavioral'; value: 'performed_event_multiple'; operator: 'gte'; operator_value: number; time_value: 30; time_interval: 'day'; negation: boolean };

const KEYS = ['plan', 'country'];
const VALUES = ['pro', 'free', 'PRO', 'de'];

const leaf: fc.Arbitrary<Node> = fc.oneof(
  fc.record({ key: fc.constantFrom(...KEYS), type: fc.constant('person' as const), value: fc.constantFrom(...VALUES), operator: fc.constant('exact' as const), negation: fc.boolean() }),
  fc.record({
    key: fc.constant('purchase' as const),
    type: fc.constant('behavioral' as const),
    value: fc.constant('performed_event_multiple' as const),
    operator: fc.constant('gte' as const),
    operator_value: fc.integer({ min: 0, max: 3 }),
    time_value: fc.constant(30 as const),
    time_interval: fc.constant('day' as const),
    negation: fc.boolean(),
  }),
);
const tree = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, leaf, fc.record({ type: fc.constantFrom('AND' as const, 'OR' as const), values: fc.array(tie('node'), { maxLength: 3 }) })),
})).node;
const person = fc.record({ plan: fc.option(fc.constantFrom(...VALUES), { nil: undefined }), country: fc.option(fc.constantFrom(...VALUES), { nil: undefined }), purchases: fc.integer({ min: 0, max: 4 }) });

/** The reference: a direct reading of the definition. */
function reference(node: Node, p: { plan?: string; country?: string; purchases: number }): boolean {
  if (node.type === 'AND' || node.type === 'OR') {
    return node.type === 'AND' ? node.values.every((v) => reference(v, p)) : node.values.length === 0 || node.values.some((v) => reference(v, p));
  }
  if (node.type === 'person') {
    const actual = node.key === 'plan' ? p.plan : p.country;
    const holds = actual !== undefined && actual.toLowerCase() === node.value.toLowerCase();
    return node.negation ? !holds : holds;
  }
  if (node.type === 'behavioral') {
    const holds = p.purchases >= node.operator_value;
    return node.negation ? !holds : holds;
  }
  throw new Error('unknown node');
}

const scopeFor = (purchases: number): CohortScope => ({
  now: new Date(),
  regexBudget: new StepBudget(),
  stored: () => false,
  behavioral: (filter: BehavioralFilter) => countMatches(filter, purchases),
});

describe('cohort predicates', () => {
  it('agree with the reference on random definitions and persons', () => {
    fc.assert(
      fc.property(tree, fc.array(person, { minLength: 1, maxLength: 10 }), (root, persons) => {
        const properties = root.type === 'AND' || root.type === 'OR' ? root : { type: 'AND' as const, values: [root] };
        const compiled = compileCohorts([{ id: 1, is_static: false, filters: { properties } }], () => true).get(1)!;
        assert.ok(compiled.predicate);
        for (const p of persons) {
          const props: Record<string, unknown> = {};
          if (p.plan !== undefined) props.plan = p.plan;
          if (p.country !== undefined) props.country = p.country;
          assert.equal(compiled.predicate(props, scopeFor(p.purchases)), reference(properties, p));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('references: property-only cohorts inline, static and behavioural ones read as stored', () => {
    const definitions = [
      { id: 1, is_static: false, filters: { properties: { type: 'AND', values: [{ key: 'plan', type: 'person', value: 'pro' }] } } },
      { id: 2, is_static: true, filters: {} },
      { id: 3, is_static: false, filters: { properties: { type: 'AND', values: [{ key: 'id', type: 'cohort', value: 1 }, { key: 'id', type: 'cohort', value: 2, negation: true }] } } },
      { id: 4, is_static: false, filters: { properties: { type: 'OR', values: [{ key: 'id', type: 'cohort', value: 99 }] } } },
    ];
    const flags = compileCohorts(definitions, (c) => c.propertyOnly);
    assert.equal(flags.get(1)!.propertyOnly, true);
    assert.equal(flags.get(2)!.predicate, null, 'static: stored');
    assert.equal(flags.get(3)!.predicate, null, 'names a static cohort: not property-only');
    assert.deepEqual(flags.get(3)!.stored, [3]);
    const all = compileCohorts(definitions, () => true);
    assert.deepEqual(all.get(3)!.stored, [2]);
    const members = new Set([2]);
    const scope = { ...scopeFor(0), stored: (id: number) => members.has(id) };
    assert.equal(all.get(3)!.predicate!({ plan: 'pro' }, scope), false, 'in the static cohort, negated');
    members.clear();
    assert.equal(all.get(3)!.predicate!({ plan: 'Pro' }, scope), true);
    assert.equal(all.get(4)!.predicate!({}, scope), false, 'an unknown cohort holds nobody');
  });

  it('refuses malformed definitions with the path of the bad part', () => {
    const bad: [unknown, string][] = [
      [{ properties: { type: 'AND', values: [{ key: 'x', type: 'event', value: 1 }] } }, 'properties.values.0.type'],
      [{ properties: { type: 'AND', values: [{ key: 'x', type: 'person', operator: 'nope' }] } }, 'properties.values.0.operator'],
      [{ properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'e', type: 'behavioral', value: 'performed_event', time_value: 0 }] }] } }, 'properties.values.0.values.0.time_value'],
      [{ properties: { type: 'AND', values: [{ key: 'id', type: 'cohort', value: 'x' }] } }, 'properties.values.0.value'],
      [{}, 'properties'],
    ];
    for (const [filters, path] of bad) {
      assert.throws(() => validateCohortFilters(filters), (error: unknown) => error instanceof CohortDefinitionError && error.path === path, JSON.stringify(filters));
    }
  });
});
