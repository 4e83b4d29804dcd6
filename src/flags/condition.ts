/**
 * One release condition: every property filter must hold (AND), then the rollout hash
 * must fall inside the percentage.
 */
import { UncomputableFilterError } from './errors.js';
import { flagHash } from './hash.js';
import { matchProperty } from './operators.js';
import type { EvaluationContext, FlagCondition, PropertyFilter } from './types.js';

export type ConditionOutcome =
  | { kind: 'match' }
  | { kind: 'no_match'; code: 'no_condition_match' | 'out_of_rollout_bound' }
  | { kind: 'unknown'; error: UncomputableFilterError };

export interface ConditionScope {
  flagKey: string;
  /** Distinct id / hash key / device id, or the group key for group-aggregated conditions. */
  bucketingValue: string;
  /** Group type index this condition aggregates on, or null for persons. */
  aggregation: number | null;
  ctx: EvaluationContext;
  /** Decides a `type: "flag"` filter from the other flags of the same evaluation. */
  matchDependency: (filter: PropertyFilter) => boolean;
}

const NO_PROPERTIES: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

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
export function propertiesFor(
  filter: PropertyFilter,
  aggregation: number | null,
  ctx: EvaluationContext,
): Record<string, unknown> {
  if (filter.type === 'person') return ctx.personProperties;
  const index = filter.type === 'group' ? (filter.group_type_index ?? aggregation) : aggregation;
  if (index === null || index === undefined) return filter.type === 'group' ? NO_PROPERTIES : ctx.personProperties;
  const name = groupTypeName(ctx, index);
  return (name !== undefined && ctx.groupProperties[name]) || NO_PROPERTIES;
}

export function evaluateCondition(condition: FlagCondition, scope: ConditionScope): ConditionOutcome {
  // An undecidable filter does not settle the condition: a later filter can still rule it out.
  let undecided: UncomputableFilterError | undefined;
  for (const filter of condition.properties ?? []) {
    let holds: boolean;
    try {
      holds =
        filter.type === 'flag'
          ? scope.matchDependency(filter)
          : matchProperty(filter, propertiesFor(filter, scope.aggregation, scope.ctx), scope.ctx.now);
    } catch (error) {
      if (!(error instanceof UncomputableFilterError)) throw error;
      undecided ??= error;
      continue;
    }
    if (!holds) return { kind: 'no_match', code: 'no_condition_match' };
  }
  if (undecided) return { kind: 'unknown', error: undecided };

  const rollout = condition.rollout_percentage;
  if (rollout !== null && rollout !== undefined && flagHash(scope.flagKey, scope.bucketingValue) > rollout / 100) {
    return { kind: 'no_match', code: 'out_of_rollout_bound' };
  }
  return { kind: 'match' };
}
