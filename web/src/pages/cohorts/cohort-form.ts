/**
 * A cohort's definition as the editor shows it, and back: person property conditions and
 * "performed (or did not perform) event X at least N times in the last N days" conditions, all or any of them.
 * A stored definition the editor cannot show (nested groups, negated person conditions, cohort references,
 * list values) is kept whole and not offered for editing, so saving never loses part of it.
 */
import type { Cohort, PropertyFilter } from '../../api/types.js';
import { completeProperties, OPERATORS } from '../activity/filters.js';

export type Interval = 'hour' | 'day' | 'week' | 'month' | 'year';
export type TimesOperator = 'gte' | 'lte' | 'eq';

export const INTERVALS: { value: Interval; label: string }[] = [
  { value: 'hour', label: 'hours' },
  { value: 'day', label: 'days' },
  { value: 'week', label: 'weeks' },
  { value: 'month', label: 'months (30 days)' },
  { value: 'year', label: 'years (365 days)' },
];

export const TIMES_OPERATORS: { value: TimesOperator; label: string }[] = [
  { value: 'gte', label: 'at least' },
  { value: 'lte', label: 'at most' },
  { value: 'eq', label: 'exactly' },
];

/** "Performed (or, negated, did not perform) `event` (operator) `times` times in the last `within` `interval`s". Numbers as typed. */
export interface Behaviour {
  negated: boolean;
  event: string;
  operator: TimesOperator;
  times: string;
  within: string;
  interval: Interval;
}

export interface CohortDraft {
  name: string;
  description: string;
  isStatic: boolean;
  match: 'AND' | 'OR';
  persons: PropertyFilter[];
  behaviours: Behaviour[];
  /** The stored definition, when the editor cannot show it: kept as it is. */
  unsupported: unknown;
}

export const NEW_BEHAVIOUR: Behaviour = { negated: false, event: '', operator: 'gte', times: '1', within: '30', interval: 'day' };

export const NEW_COHORT: CohortDraft = { name: '', description: '', isStatic: false, match: 'AND', persons: [], behaviours: [], unsupported: null };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const OPERATOR_VALUES = new Set(OPERATORS.map((o) => o.value));
const INTERVAL_VALUES = new Set<unknown>(INTERVALS.map((i) => i.value));
const TIMES_VALUES = new Set<unknown>(TIMES_OPERATORS.map((o) => o.value));

/** A typed number as the API takes it; anything else is sent as typed, for the API to refuse in words. */
function numberOrText(text: string): number | string {
  const n = Number(text);
  return text.trim() !== '' && Number.isFinite(n) ? n : text;
}

export function behaviourFilter(b: Behaviour): Json {
  return {
    key: b.event.trim(),
    type: 'behavioral',
    value: 'performed_event_multiple',
    operator: b.operator,
    operator_value: numberOrText(b.times),
    time_value: numberOrText(b.within),
    time_interval: b.interval,
    ...(b.negated && { negation: true }),
  };
}

/** The request body's `filters` for a dynamic cohort. */
export function filtersOf(draft: CohortDraft): { properties: unknown } {
  if (draft.unsupported !== null) return { properties: draft.unsupported };
  const persons = completeProperties(draft.persons).map((p) => ({ ...p, type: 'person' }));
  return { properties: { type: draft.match, values: [...persons, ...draft.behaviours.map(behaviourFilter)] } };
}

function personOf(leaf: Json): PropertyFilter | null {
  if (leaf.negation === true || typeof leaf.key !== 'string') return null;
  const operator = leaf.operator ?? 'exact';
  if (typeof operator !== 'string' || !OPERATOR_VALUES.has(operator)) return null;
  if (leaf.value !== undefined && leaf.value !== null && typeof leaf.value !== 'string' && typeof leaf.value !== 'number') return null;
  const filter: PropertyFilter = { key: leaf.key, operator, type: 'person' };
  if (leaf.value !== undefined && leaf.value !== null) filter.value = leaf.value;
  return filter;
}

function behaviourOf(leaf: Json): Behaviour | null {
  if (typeof leaf.key !== 'string' || (leaf.negation !== undefined && typeof leaf.negation !== 'boolean')) return null;
  if (typeof leaf.time_value !== 'number' || !INTERVAL_VALUES.has(leaf.time_interval)) return null;
  const common = { negated: leaf.negation === true, event: leaf.key, within: String(leaf.time_value), interval: leaf.time_interval as Interval };
  if (leaf.value === 'performed_event') return { ...common, operator: 'gte', times: '1' };
  if (leaf.value !== 'performed_event_multiple' || !TIMES_VALUES.has(leaf.operator) || typeof leaf.operator_value !== 'number') return null;
  return { ...common, operator: leaf.operator as TimesOperator, times: String(leaf.operator_value) };
}

/** The conditions of a flat group (or of a group holding one flat group, as PostHog writes them). */
function conditionsOf(properties: unknown): Pick<CohortDraft, 'match' | 'persons' | 'behaviours'> | null {
  if (properties === undefined || properties === null) return { match: 'AND', persons: [], behaviours: [] };
  if (!isObject(properties) || !Array.isArray(properties.values)) return null;
  const only = properties.values.length === 1 ? properties.values[0] : undefined;
  const group = isObject(only) && Array.isArray(only.values) ? only : properties;
  if (group.type !== 'AND' && group.type !== 'OR') return null;
  const persons: PropertyFilter[] = [];
  const behaviours: Behaviour[] = [];
  for (const leaf of group.values as unknown[]) {
    if (!isObject(leaf)) return null;
    const person = leaf.type === 'person' ? personOf(leaf) : null;
    const behaviour = leaf.type === 'behavioral' ? behaviourOf(leaf) : null;
    if (person) persons.push(person);
    else if (behaviour) behaviours.push(behaviour);
    else return null;
  }
  return { match: group.type, persons, behaviours };
}

export function draftOf(cohort: Cohort): CohortDraft {
  const base = { name: cohort.name, description: cohort.description ?? '', isStatic: cohort.is_static };
  if (cohort.is_static) return { ...NEW_COHORT, ...base };
  const properties = cohort.filters?.properties;
  const conditions = conditionsOf(properties);
  return conditions ? { ...base, ...conditions, unsupported: null } : { ...NEW_COHORT, ...base, unsupported: properties };
}

