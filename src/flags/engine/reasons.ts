import type { FlagReason, ReasonCode } from './types.js';

/**
 * When no condition matches, the reported reason is the strongest one any condition gave
 * (PostHog's ranking); ties go to the later condition, as in PostHog.
 */
const PRIORITY: Partial<Record<ReasonCode, number>> = {
  super_condition_value: 4,
  holdout_condition_value: 3.5,
  condition_match: 3,
  no_group_type: 2,
  out_of_rollout_bound: 1,
  no_condition_match: 0,
};

export function outranks(candidate: ReasonCode, current: ReasonCode): boolean {
  return (PRIORITY[candidate] ?? -1) >= (PRIORITY[current] ?? -1);
}

function describe(code: ReasonCode, conditionIndex: number | null): string {
  switch (code) {
    case 'condition_match':
      return `Matched condition set ${(conditionIndex ?? 0) + 1}`;
    case 'no_condition_match':
      return 'No matching condition set';
    case 'out_of_rollout_bound':
      return 'Out of rollout bound';
    case 'no_group_type':
      return 'No group type';
    case 'super_condition_value':
      return 'Super condition value';
    case 'holdout_condition_value':
      return 'Holdout condition value';
    case 'disabled':
      return 'Feature flag is disabled';
    case 'missing_dependency':
      return 'Missing flag dependency';
    case 'evaluation_error':
      return 'Error while evaluating flag';
  }
}

// Reasons are immutable and few (code × condition index): one shared object each, so results
// cost no allocation and serialisers can memoise per reason. Slot 0 holds the null index.
const reasons = new Map<ReasonCode, FlagReason[]>();

export function makeReason(code: ReasonCode, conditionIndex: number | null = null): FlagReason {
  let byIndex = reasons.get(code);
  if (!byIndex) reasons.set(code, (byIndex = []));
  const slot = conditionIndex === null ? 0 : conditionIndex + 1;
  let reason = byIndex[slot];
  if (!reason) {
    reason = Object.freeze({ code, condition_index: conditionIndex, description: describe(code, conditionIndex) });
    // Indexes come from stored condition lists, so the arrays stay small; others are not kept.
    if (Number.isInteger(slot) && slot >= 0 && slot <= 1000) byIndex[slot] = reason;
  }
  return reason;
}
