/**
 * A cohort's definition as the editor shows it, and back: person property conditions and
 * "performed (or did not perform) event X at least N times in the last N days" conditions, all or any of them,
 * plus groups of such conditions inside the top group (one level: PostHog's editor nests no deeper).
 * A stored definition the editor cannot show (deeper nesting, negated person conditions, cohort references,
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

/** One group's conditions: persons must match all (AND) or any (OR) of them. */
export interface Criteria {
  match: 'AND' | 'OR';
  persons: PropertyFilter[];
  behaviours: Behaviour[];
}

/** The top group's own conditions, then its groups (each one more condition of the top group). */
export interface CohortDraft extends Criteria {
  name: string;
  description: string;
  isStatic: boolean;
  groups: Criteria[];
  /** The stored definition, when the editor cannot show it: kept as it is. */
  unsupported: unknown;
}

export const NEW_BEHAVIOUR: Behaviour = { negated: false, event: '', operator: 'gte', times: '1', within: '30', interval: 'day' };

export const NEW_CRITERIA: Criteria = { match: 'AND', persons: [], behaviours: [] };

export const NEW_COHORT: CohortDraft = { name: '', description: '', isStatic: false, ...NEW_CRITERIA, groups: [], unsupported: null };

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

/** A group's conditions as the API's filters: persons first, then behaviours. */
function leavesOf(criteria: Criteria): Json[] {
  const persons = completeProperties(criteria.persons).map((p) => ({ ...p, type: 'person' }));
  return [...persons, ...criteria.behaviours.map(behaviourFilter)];
}

/** The request body's `filters` for a dynamic cohort. */
export function filtersOf(draft: CohortDraft): { properties: unknown } {
  if (draft.unsupported !== null) return { properties: draft.unsupported };
  const groups = draft.groups.map((g) => ({ type: g.match, values: leavesOf(g) }));
  return { properties: { type: draft.match, values: [...leavesOf(draft), ...groups] } };
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

const isGroup = (value: unknown): value is Json & { values: unknown[] } => isObject(value) && Array.isArray(value.values);

/** A group's own conditions and its subgroups; null when a part cannot be shown (or a subgroup nests deeper than `depth` allows). */
function criteriaOf(group: Json & { values: unknown[] }, depth: number): (Criteria & { groups: Criteria[] }) | null {
  if (group.type !== 'AND' && group.type !== 'OR') return null;
  const criteria: Criteria & { groups: Criteria[] } = { match: group.type, persons: [], behaviours: [], groups: [] };
  for (const value of group.values) {
    if (!isObject(value)) return null;
    if (isGroup(value)) {
      const inner = depth > 0 ? criteriaOf(value, depth - 1) : null;
      if (!inner) return null;
      criteria.groups.push({ match: inner.match, persons: inner.persons, behaviours: inner.behaviours });
      continue;
    }
    const person = value.type === 'person' ? personOf(value) : null;
    const behaviour = value.type === 'behavioral' ? behaviourOf(value) : null;
    if (person) criteria.persons.push(person);
    else if (behaviour) criteria.behaviours.push(behaviour);
    else return null;
  }
  return criteria;
}

/** The top group's conditions and its groups of conditions (no deeper). */
function conditionsOf(properties: unknown): Pick<CohortDraft, 'match' | 'persons' | 'behaviours' | 'groups'> | null {
  if (properties === undefined || properties === null) return { ...NEW_CRITERIA, groups: [] };
  return isGroup(properties) ? criteriaOf(properties, 1) : null;
}

export function draftOf(cohort: Cohort): CohortDraft {
  const base = { name: cohort.name, description: cohort.description ?? '', isStatic: cohort.is_static };
  if (cohort.is_static) return { ...NEW_COHORT, ...base };
  const properties = cohort.filters?.properties;
  const conditions = conditionsOf(properties);
  return conditions ? { ...base, ...conditions, unsupported: null } : { ...NEW_COHORT, ...base, unsupported: properties };
}

