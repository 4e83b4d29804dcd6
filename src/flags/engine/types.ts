/**
 * The stored feature-flag model, in the JSON shape the management API and
 * `/flags/definitions` expose (PostHog's own field names, so SDKs can read it as is).
 */

export type PropertyOperator =
  | 'exact'
  | 'is_not'
  | 'icontains'
  | 'not_icontains'
  | 'regex'
  | 'not_regex'
  | 'gt'
  | 'gte'
  | 'lt'
  | 'lte'
  | 'is_set'
  | 'is_not_set'
  | 'is_date_before'
  | 'is_date_after'
  | 'is_date_exact'
  | 'semver_eq'
  | 'semver_neq'
  | 'semver_gt'
  | 'semver_gte'
  | 'semver_lt'
  | 'semver_lte'
  | 'semver_tilde'
  | 'semver_caret'
  | 'semver_wildcard'
  | 'starts_with'
  | 'not_starts_with'
  | 'ends_with'
  | 'not_ends_with'
  | 'icontains_multi'
  | 'not_icontains_multi';

/** Operators that only make sense on cohort (`in`, `not_in`) or flag (`flag_evaluates_to`) filters. */
export type SpecialOperator = 'in' | 'not_in' | 'flag_evaluates_to';

export interface PropertyFilter {
  key: string;
  value?: unknown;
  /** Defaults to `exact`. Kept as a plain string: stored flags may carry operators we do not know. */
  operator?: PropertyOperator | SpecialOperator | (string & {}) | null;
  /** `person`, `group`, `cohort`, `flag`; absent on some legacy filters. */
  type?: string;
  group_type_index?: number | null;
  negation?: boolean;
  /** Only on flag filters served to SDKs: the keys to evaluate first, ending with the target. */
  dependency_chain?: string[];
}

export interface FlagCondition {
  properties?: PropertyFilter[];
  /** `null` or absent means 100 %. */
  rollout_percentage?: number | null;
  /** Variant forced when this condition matches (must be a key of `multivariate.variants`). */
  variant?: string | null;
  /** Mixed targeting: bucket and match this condition on a group type instead of the flag's. */
  aggregation_group_type_index?: number | null;
}

export interface FlagVariant {
  key: string;
  name?: string | null;
  rollout_percentage: number;
}

export interface FlagMultivariate {
  variants: FlagVariant[];
}

export interface FlagHoldout {
  id: number;
  exclusion_percentage: number;
}

export interface FlagFilters {
  groups: FlagCondition[];
  multivariate?: FlagMultivariate | null;
  /** Keyed by `"true"` or a variant key; values are usually JSON-encoded strings. */
  payloads?: Record<string, unknown>;
  aggregation_group_type_index?: number | null;
  holdout?: FlagHoldout | null;
  /** Legacy early-access gate: only the first entry is used. */
  super_groups?: FlagCondition[] | null;
  /** Newer early-access gate: reads the person property `$feature_enrollment/<flag key>`. */
  feature_enrollment?: boolean | null;
  /** Stop at the first condition whose properties matched but whose rollout excluded the user. */
  early_exit?: boolean | null;
  /** Stored filters are free-form JSON; unknown keys are kept. */
  [extra: string]: unknown;
}

export interface FeatureFlag {
  id: number;
  key: string;
  name: string;
  filters: FlagFilters;
  active: boolean;
  deleted: boolean;
  ensure_experience_continuity: boolean;
  version: number;
  /** `device_id` buckets person conditions on `$device_id` instead of the distinct id. */
  bucketing_identifier?: 'distinct_id' | 'device_id' | null;
  evaluation_runtime?: 'server' | 'client' | 'all' | null;
  has_experiment?: boolean;
}

/** The value a flag evaluates to, as SDKs see it. */
export type FlagValue = boolean | string;

export interface EvaluationContext {
  distinctId: string;
  /** Group type name → group key. */
  groups: Record<string, string>;
  /** Already merged: stored person + request overrides + GeoIP + `distinct_id`. */
  personProperties: Record<string, unknown>;
  /** Group type name → merged properties (with `$group_key`). */
  groupProperties: Record<string, Record<string, unknown>>;
  /** Group type index (as a string or number key) → group type name. */
  groupTypeMapping: Record<string, string>;
  now: Date;
  /** Experience continuity: flag key → stored hash key. */
  hashKeyOverrides?: Record<string, string>;
  /** For `bucketing_identifier: "device_id"` flags; falls back to the `$device_id` person property. */
  deviceId?: string | null;
  /** Decides cohort filters; without it they cannot be evaluated (the flag fails). */
  cohorts?: CohortLookup;
}

/** Cohort membership as one evaluation sees it (evaluation/cohort-lookup.ts). */
export interface CohortLookup {
  /** Throws `UncomputableFilterError` when membership is unknown. */
  contains(cohortId: number, personProperties: Record<string, unknown>, scope: MatchScopeLike): boolean;
}

/** The clock and regex budget of an evaluation (operators.ts `MatchScope`). */
export interface MatchScopeLike {
  now: Date;
  regexBudget: { remaining: number };
}

export type ReasonCode =
  | 'condition_match'
  | 'no_condition_match'
  | 'out_of_rollout_bound'
  | 'no_group_type'
  | 'holdout_condition_value'
  | 'super_condition_value'
  | 'disabled'
  | 'missing_dependency'
  | 'evaluation_error';

export interface FlagReason {
  code: ReasonCode;
  condition_index: number | null;
  description: string;
}

export interface FlagResult {
  key: string;
  enabled: boolean;
  variant: string | null;
  reason: FlagReason;
  /** The stored payload for the matched variant (or `"true"`), unparsed; null when disabled. */
  payload: unknown;
  /** Set when the flag could not be computed (cohort, unknown operator, missing dependency). */
  failed?: true;
  /** Why it failed, for logs. */
  error?: string;
}

export interface EvaluateOptions {
  /**
   * Evaluate conditions that force a variant before the others (legacy PostHog order:
   * posthog-node ≤ 4 and the Python server). Off by default because posthog-node 5 and
   * PostHog's current Rust service walk conditions in stored order.
   */
  variantOverridesFirst?: boolean;
}
