/**
 * One release condition: every property filter must hold (AND), then the rollout hash
 * must fall inside the percentage. Conditions are compiled once per flag set; evaluating one
 * only reads the request's properties and, if they match, hashes.
 */
import { cohortIdOf } from './cohorts.js';
import { UncomputableFilterError } from './errors.js';
import { flagHash } from './hash.js';
import { compilePropertyFilter, type MatchScope, type PropertyMatcher } from './operators.js';
import type { EvaluationContext, FlagCondition, PropertyFilter } from './types.js';

export type ConditionOutcome =
  | { kind: 'match' }
  | { kind: 'no_match'; code: 'no_condition_match' | 'out_of_rollout_bound' }
  | { kind: 'unknown'; error: UncomputableFilterError };

const MATCH: ConditionOutcome = Object.freeze({ kind: 'match' });
const NO_CONDITION_MATCH: ConditionOutcome = Object.freeze({ kind: 'no_match', code: 'no_condition_match' });
const OUT_OF_ROLLOUT: ConditionOutcome = Object.freeze({ kind: 'no_match', code: 'out_of_rollout_bound' });

/** What a condition needs from the evaluation it runs in. */
export interface ConditionScope extends MatchScope {
  ctx: EvaluationContext;
  /** Decides a `type: "flag"` filter from the other flags of the same evaluation. */
  matchDependency(filter: PropertyFilter): boolean;
  /** The rollout hash of `flagKey` for `bucketingValue` (memoised by the caller). */
  rolloutHash(flagKey: string, bucketingValue: string): number;
}

/** Where a filter reads its properties: the person, no one, or a group type (index as a mapping key). */
type PropertySource = { kind: 'person' } | { kind: 'none' } | { kind: 'group'; index: string };

interface CompiledFilter {
  source: PropertyFilter;
  /** Null for flag and cohort filters: decided by the other flags, or by the context's cohorts. */
  match: PropertyMatcher | null;
  /** A cohort filter's cohort, and whether it is `not_in`. */
  cohort: { id: number | null; negated: boolean } | null;
  reads: PropertySource;
}

export interface CompiledCondition {
  /** Position in the stored list (what reasons report). */
  index: number;
  source: FlagCondition;
  /** Group type index this condition aggregates on, or null for persons. */
  aggregation: number | null;
  filters: CompiledFilter[];
  /**
   * `rollout_percentage / 100` when the rollout hash can exclude anyone, else null: no rollout,
   * or one of 100 % (the hash never exceeds 1), or a non-number (NaN never compares greater).
   */
  rolloutBound: number | null;
  /** The variant this condition forces when it matches (an existing variant), else null. */
  variant: string | null;
}

const NO_PROPERTIES: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;
const PERSON: PropertySource = Object.freeze({ kind: 'person' });
const NOBODY: PropertySource = Object.freeze({ kind: 'none' });

export function groupTypeName(ctx: EvaluationContext, index: number | null | undefined): string | undefined {
  return index === null || index === undefined ? undefined : ctx.groupTypeMapping[String(index)];
}

/** The group key the request passed for a group type index, if any. */
export function groupKeyFor(ctx: EvaluationContext, index: number): string | undefined {
  const name = groupTypeName(ctx, index);
  const key = name === undefined ? undefined : (ctx.groups[name] as unknown);
  if (typeof key === 'number') return String(key);
  return typeof key === 'string' && key !== '' ? key : undefined;
}

/**
 * Which properties a filter reads: person filters the person, group filters their group
 * type (or the condition's), untyped legacy filters whatever the condition aggregates on.
 */
function sourceOf(filter: PropertyFilter, aggregation: number | null): PropertySource {
  if (filter.type === 'person') return PERSON;
  const index = filter.type === 'group' ? (filter.group_type_index ?? aggregation) : aggregation;
  if (index === null || index === undefined) return filter.type === 'group' ? NOBODY : PERSON;
  return { kind: 'group', index: String(index) };
}

function read(source: PropertySource, ctx: EvaluationContext): Record<string, unknown> {
  if (source.kind === 'person') return ctx.personProperties;
  if (source.kind === 'none') return NO_PROPERTIES;
  const name = ctx.groupTypeMapping[source.index];
  return (name !== undefined && ctx.groupProperties[name]) || NO_PROPERTIES;
}

/** The properties `filter` reads in a condition aggregated on `aggregation`. */
export function propertiesFor(
  filter: PropertyFilter,
  aggregation: number | null,
  ctx: EvaluationContext,
): Record<string, unknown> {
  return read(sourceOf(filter, aggregation), ctx);
}

export function compileCondition(
  condition: FlagCondition,
  index: number,
  aggregation: number | null,
  variant: string | null = null,
): CompiledCondition {
  const filters = (condition.properties ?? []).map(
    (filter): CompiledFilter => ({
      source: filter,
      match: filter.type === 'flag' || filter.type === 'cohort' ? null : compilePropertyFilter(filter),
      cohort: filter.type === 'cohort' ? { id: cohortIdOf(filter.value), negated: filter.operator === 'not_in' } : null,
      reads: sourceOf(filter, aggregation),
    }),
  );
  const rollout = condition.rollout_percentage;
  const bound = rollout === null || rollout === undefined ? null : rollout / 100;
  return { index, source: condition, aggregation, filters, rolloutBound: bound !== null && bound < 1 ? bound : null, variant };
}

function inCohort(cohort: { id: number | null }, ctx: EvaluationContext, scope: MatchScope): boolean {
  if (!ctx.cohorts) throw new UncomputableFilterError(`cohort filters cannot be evaluated here (cohort ${String(cohort.id)})`);
  // A filter naming no valid cohort holds nobody, as a deleted cohort.
  return cohort.id !== null && ctx.cohorts.contains(cohort.id, ctx.personProperties, scope);
}

export function evaluateCondition(
  condition: CompiledCondition,
  flagKey: string,
  bucketingValue: string,
  scope: ConditionScope,
): ConditionOutcome {
  const ctx = scope.ctx;
  // An undecidable filter does not settle the condition: a later filter can still rule it out.
  let undecided: UncomputableFilterError | undefined;
  for (const filter of condition.filters) {
    let holds: boolean;
    try {
      if (filter.match !== null) holds = filter.match(read(filter.reads, ctx), scope);
      else if (filter.cohort !== null) holds = inCohort(filter.cohort, ctx, scope) !== filter.cohort.negated;
      else holds = scope.matchDependency(filter.source);
    } catch (error) {
      if (!(error instanceof UncomputableFilterError)) throw error;
      undecided ??= error;
      continue;
    }
    if (!holds) return NO_CONDITION_MATCH;
  }
  if (undecided) return { kind: 'unknown', error: undecided };

  const bound = condition.rolloutBound;
  if (bound !== null && scope.rolloutHash(flagKey, bucketingValue) > bound) return OUT_OF_ROLLOUT;
  return MATCH;
}
