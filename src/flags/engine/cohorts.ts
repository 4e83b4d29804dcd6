/**
 * Cohort definitions (PostHog's `filters.properties`: AND/OR groups, nested, of person-property,
 * behavioural and cohort filters, each optionally negated) compiled into one predicate per
 * cohort. The same predicates serve flag evaluation and cohort calculation, so a property cohort
 * means the same thing in `/flags`, in local evaluation and in the materialised membership.
 *
 * What a predicate cannot read from a person's properties it asks its scope: behavioural
 * filters (`behavioral`, answered by a calculation from event counts) and cohorts held as
 * stored membership (`stored`: static cohorts, and in flag evaluation the dynamic cohorts that
 * are not property-only).
 */
import { UncomputableFilterError } from './errors.js';
import { compilePropertyFilter, type MatchScope } from './operators.js';
import type { PropertyFilter } from './types.js';

export interface CohortDefinition {
  id: number;
  is_static: boolean;
  /** `{"properties": PropertyGroup}` (empty for static cohorts). */
  filters: Record<string, unknown>;
}

/** "Performed event X (at least / at most / exactly N times) in the last N intervals." */
export interface BehavioralFilter {
  event: string;
  /** Window length in milliseconds, ending now. */
  windowMs: number;
  operator: 'gte' | 'gt' | 'lte' | 'lt' | 'eq';
  times: number;
}

export interface CohortScope extends MatchScope {
  behavioral(filter: BehavioralFilter, properties: Record<string, unknown>): boolean;
  stored(cohortId: number): boolean;
}

export type CohortPredicate = (properties: Record<string, unknown>, scope: CohortScope) => boolean;

export interface CompiledCohort {
  id: number;
  /** Decidable from person properties alone (no behavioural filter, no stored cohort reached). */
  propertyOnly: boolean;
  /** Null for cohorts read from stored membership. */
  predicate: CohortPredicate | null;
  /** Behavioural filters reachable from this cohort (what a calculation must count). */
  behavioral: BehavioralFilter[];
  /** Stored cohorts reachable from this cohort. */
  stored: number[];
}

export class CohortDefinitionError extends Error {
  constructor(
    message: string,
    /** Path of the offending part inside `filters`, e.g. `properties.values.0.values.1.value`. */
    readonly path: string,
  ) {
    super(message);
  }
}

const MAX_DEPTH = 10;
const INTERVAL_MS: Record<string, number> = { hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000, month: 30 * 86_400_000, year: 365 * 86_400_000 };
const BEHAVIORAL_VALUES = new Set(['performed_event', 'performed_event_multiple']);
const COUNT_OPERATORS = new Set(['gte', 'gt', 'lte', 'lt', 'eq', 'exact']);
/** Calculations count events of at most this many years back. */
const MAX_WINDOW_MS = 10 * INTERVAL_MS.year;

/** The cohort ids a definition names directly (for existence and cycle checks). */
export function referencedCohorts(filters: Record<string, unknown>): number[] {
  const ids: number[] = [];
  const walk = (node: unknown, depth: number) => {
    if (depth > MAX_DEPTH || node === null || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    if (Array.isArray(record.values) && (record.type === 'AND' || record.type === 'OR')) {
      for (const child of record.values) walk(child, depth + 1);
    } else if (record.type === 'cohort') {
      const id = cohortIdOf(record.value);
      if (id !== null) ids.push(id);
    }
  };
  walk(filters.properties, 0);
  return ids;
}

export function cohortIdOf(value: unknown): number | null {
  const id = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  return typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? id : null;
}

/**
 * Throws `CohortDefinitionError` for a definition that is not a valid property group. Cohort
 * references are only checked for shape here (their existence and cycles need the store).
 */
export function validateCohortFilters(filters: unknown): void {
  if (filters === null || typeof filters !== 'object' || Array.isArray(filters)) throw new CohortDefinitionError('filters must be an object with a "properties" group', '');
  const properties = (filters as Record<string, unknown>).properties;
  if (properties === undefined) throw new CohortDefinitionError('filters.properties is required for a dynamic cohort', 'properties');
  compileNode(properties, 'properties', 0, { lookupCohort: () => null });
}

interface Compilation {
  /** A referenced cohort's predicate (compiled on demand), or null to read it as stored. */
  lookupCohort(id: number): { predicate: CohortPredicate | null } | null;
  behavioral?: BehavioralFilter[];
  stored?: Set<number>;
}

function compileNode(node: unknown, path: string, depth: number, c: Compilation): CohortPredicate {
  if (depth > MAX_DEPTH) throw new CohortDefinitionError(`property groups are nested too deeply (limit ${MAX_DEPTH})`, path);
  if (node === null || typeof node !== 'object' || Array.isArray(node)) throw new CohortDefinitionError('expected a property group or a filter object', path);
  const record = node as Record<string, unknown>;
  if (record.type === 'AND' || record.type === 'OR') {
    if (!Array.isArray(record.values)) throw new CohortDefinitionError('a property group needs a "values" list', `${path}.values`);
    const parts = record.values.map((child, i) => compileNode(child, `${path}.values.${i}`, depth + 1, c));
    // An empty group matches everyone, as PostHog reads it.
    if (record.type === 'AND') return (p, s) => parts.every((part) => part(p, s));
    return parts.length === 0 ? () => true : (p, s) => parts.some((part) => part(p, s));
  }
  const negated = record.negation === true;
  const leaf = compileLeaf(record, path, c);
  return negated ? (p, s) => !leaf(p, s) : leaf;
}

function compileLeaf(record: Record<string, unknown>, path: string, c: Compilation): CohortPredicate {
  const type = record.type ?? 'person';
  if (type === 'person') {
    if (typeof record.key !== 'string' || record.key === '') throw new CohortDefinitionError('a person filter needs a non-empty "key"', `${path}.key`);
    const operator = record.operator ?? 'exact';
    const matcher = compilePropertyFilter({ key: record.key, value: record.value, operator: operator as PropertyFilter['operator'], type: 'person' });
    // An unknown operator compiles to a matcher that throws: refuse it when defining the cohort.
    try {
      matcher({}, { now: new Date(0), regexBudget: { remaining: 1_000 } });
    } catch (error) {
      if (error instanceof UncomputableFilterError) throw new CohortDefinitionError(`unknown operator ${JSON.stringify(operator)}`, `${path}.operator`);
      throw error;
    }
    return matcher;
  }
  if (type === 'behavioral') return compileBehavioral(record, path, c);
  if (type === 'cohort') {
    const id = cohortIdOf(record.value);
    if (id === null) throw new CohortDefinitionError('a cohort filter needs a cohort id as "value"', `${path}.value`);
    const target = c.lookupCohort(id);
    // A cohort that does not exist (any more) holds nobody.
    if (target === null) return () => false;
    if (target.predicate) return target.predicate;
    c.stored?.add(id);
    return (_p, s) => s.stored(id);
  }
  throw new CohortDefinitionError(`filter type ${JSON.stringify(type)} is not supported in cohorts (use person, behavioral or cohort)`, `${path}.type`);
}

function compileBehavioral(record: Record<string, unknown>, path: string, c: Compilation): CohortPredicate {
  if (typeof record.key !== 'string' || record.key === '') throw new CohortDefinitionError('a behavioral filter needs the event name as "key"', `${path}.key`);
  if (typeof record.value !== 'string' || !BEHAVIORAL_VALUES.has(record.value)) {
    throw new CohortDefinitionError('a behavioral filter\'s "value" must be "performed_event" or "performed_event_multiple"', `${path}.value`);
  }
  const interval = record.time_interval ?? 'day';
  const amount = record.time_value ?? 30;
  if (typeof interval !== 'string' || !(interval in INTERVAL_MS)) throw new CohortDefinitionError('time_interval must be one of hour, day, week, month, year', `${path}.time_interval`);
  const count = Number(amount);
  if (!Number.isInteger(count) || count < 1) throw new CohortDefinitionError('time_value must be a positive integer', `${path}.time_value`);
  const windowMs = count * INTERVAL_MS[interval];
  if (windowMs > MAX_WINDOW_MS) throw new CohortDefinitionError('the time window may be at most 10 years', `${path}.time_value`);
  let operator: BehavioralFilter['operator'] = 'gte';
  let times = 1;
  if (record.value === 'performed_event_multiple') {
    const op = record.operator ?? 'gte';
    if (typeof op !== 'string' || !COUNT_OPERATORS.has(op)) throw new CohortDefinitionError('operator must be one of gte, gt, lte, lt, eq', `${path}.operator`);
    operator = op === 'exact' ? 'eq' : (op as BehavioralFilter['operator']);
    times = Number(record.operator_value);
    if (!Number.isInteger(times) || times < 0) throw new CohortDefinitionError('operator_value must be a non-negative integer (how many times)', `${path}.operator_value`);
  }
  const filter: BehavioralFilter = { event: record.key, windowMs, operator, times };
  c.behavioral?.push(filter);
  return (p, s) => s.behavioral(filter, p);
}

/** Does a count of events satisfy a behavioural filter? */
export function countMatches(filter: BehavioralFilter, count: number): boolean {
  switch (filter.operator) {
    case 'gte':
      return count >= filter.times;
    case 'gt':
      return count > filter.times;
    case 'lte':
      return count <= filter.times;
    case 'lt':
      return count < filter.times;
    case 'eq':
      return count === filter.times;
  }
}

/**
 * Compiles every cohort of a project. `inline(cohort)` says which dynamic cohorts are evaluated
 * from their definition (the others are read as stored membership); static cohorts always are
 * stored. A definition that fails to compile (or a reference cycle) is read as stored too.
 */
export function compileCohorts(
  definitions: readonly CohortDefinition[],
  inline: (compiled: { propertyOnly: boolean }) => boolean,
): Map<number, CompiledCohort> {
  const byId = new Map(definitions.map((d) => [d.id, d]));
  const done = new Map<number, CompiledCohort>();
  const visiting = new Set<number>();

  const compile = (definition: CohortDefinition): CompiledCohort => {
    const kept = done.get(definition.id);
    if (kept) return kept;
    const stored: CompiledCohort = { id: definition.id, propertyOnly: false, predicate: null, behavioral: [], stored: [definition.id] };
    // A reference cycle (refused by the API) is read as stored: it never recurses forever.
    if (visiting.has(definition.id)) return stored;
    if (definition.is_static) {
      done.set(definition.id, stored);
      return stored;
    }
    visiting.add(definition.id);
    const behavioral: BehavioralFilter[] = [];
    const storedIds = new Set<number>();
    let result = stored;
    try {
      const predicate = compileNode(definition.filters.properties, 'properties', 0, {
        behavioral,
        stored: storedIds,
        lookupCohort: (id) => {
          const target = byId.get(id);
          if (!target) return null;
          const compiled = compile(target);
          // An inlined cohort brings what it reads; a stored one is added by the leaf itself.
          if (compiled.predicate !== null) {
            behavioral.push(...compiled.behavioral);
            for (const id of compiled.stored) storedIds.add(id);
          }
          return { predicate: compiled.predicate };
        },
      });
      const propertyOnly = behavioral.length === 0 && storedIds.size === 0;
      const candidate: CompiledCohort = { id: definition.id, propertyOnly, predicate, behavioral: [...new Set(behavioral)], stored: [...storedIds] };
      if (inline(candidate)) result = candidate;
    } catch (error) {
      if (!(error instanceof CohortDefinitionError)) throw error;
    } finally {
      visiting.delete(definition.id);
    }
    done.set(definition.id, result);
    return result;
  };
  for (const definition of definitions) compile(definition);
  return done;
}
