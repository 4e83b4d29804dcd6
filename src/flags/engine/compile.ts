/**
 * Flags prepared for evaluation. Everything that depends only on the definitions (filter
 * operands, compiled regexes, where each filter reads, variant ranges, holdouts, the key and id
 * index) is worked out once per flag set, so that a request only does the work that depends
 * on its own ids and properties. The flag cache compiles each project's flags once per load.
 */
import { compileHoldout, variantOverride, variantRanges, type Holdout, type VariantRange } from './bucketing.js';
import { compileCondition, type CompiledCondition } from './condition.js';
import type { FeatureFlag, FlagCondition, FlagReason, FlagResult } from './types.js';

export interface CompiledFlag {
  source: FeatureFlag;
  key: string;
  /** Index of the flag's key among the set's distinct keys: an evaluation memoises per key. */
  slot: number;
  /** Inactive or deleted: evaluates to `disabled` without reading anything. */
  disabled: boolean;
  /**
   * Set when the definition could not be compiled (malformed filters, which validation refuses):
   * evaluating the active flag rethrows it, so it is reported failed as when reading them threw.
   */
  broken: unknown;
  aggregation: number | null;
  /** `bucketing_identifier: "device_id"`: person conditions bucket on the device id. */
  deviceBucketing: boolean;
  /** `ensure_experience_continuity`: person conditions bucket on the stored hash key. */
  continuity: boolean;
  /** Conditions in stored order, and with variant overrides first (legacy option). */
  conditions: CompiledCondition[];
  overridesFirst: CompiledCondition[];
  variants: VariantRange[];
  holdout: Holdout | null;
  /** `$feature_enrollment/<key>` for `feature_enrollment` flags. */
  enrollmentProperty: string | null;
  /** The legacy early-access gate (`super_groups[0]`) when it has properties. */
  superCondition: CompiledCondition | null;
  earlyExit: boolean;
  payloads: Record<string, unknown> | undefined;
  /**
   * The flag's results so far, by reason and variant (`OFF` for disabled ones): those decide a
   * result (the payload follows the variant), so evaluations share frozen result objects.
   */
  results: Map<FlagReason, Map<ResultVariant, FlagResult>>;
}

/** Key of disabled results among a flag's kept results (enabled ones are keyed by variant). */
export const OFF: unique symbol = Symbol('off');
export type ResultVariant = string | null | typeof OFF;

export interface CompiledFlags {
  /** Every flag given, deleted ones included, in order. */
  flags: CompiledFlag[];
  /** Non-deleted flags by key and by id (a later flag wins, as in `indexFlags`). */
  byKey: Map<string, CompiledFlag>;
  byId: Map<string, CompiledFlag>;
  /** How many distinct keys (slots) the flags have. */
  slots: number;
}

export function compileFlags(flags: readonly FeatureFlag[]): CompiledFlags {
  const slots = new Map<string, number>();
  const compiled = flags.map((flag) => {
    let slot = slots.get(flag.key);
    if (slot === undefined) slots.set(flag.key, (slot = slots.size));
    return compileFlag(flag, slot);
  });
  const byKey = new Map<string, CompiledFlag>();
  const byId = new Map<string, CompiledFlag>();
  for (const flag of compiled) {
    if (flag.source.deleted) continue;
    byKey.set(flag.key, flag);
    byId.set(String(flag.source.id), flag);
  }
  return { flags: compiled, byKey, byId, slots: slots.size };
}

function compileFlag(flag: FeatureFlag, slot: number): CompiledFlag {
  const compiled: CompiledFlag = {
    source: flag,
    key: flag.key,
    slot,
    disabled: !flag.active || flag.deleted,
    broken: undefined,
    aggregation: null,
    deviceBucketing: flag.bucketing_identifier === 'device_id',
    continuity: Boolean(flag.ensure_experience_continuity),
    conditions: [],
    overridesFirst: [],
    variants: [],
    holdout: null,
    enrollmentProperty: null,
    superCondition: null,
    earlyExit: false,
    payloads: undefined,
    results: new Map(),
  };
  if (compiled.disabled) return compiled;
  try {
    const filters = flag.filters;
    const aggregation = filters.aggregation_group_type_index ?? null;
    compiled.aggregation = aggregation;
    compiled.variants = variantRanges(filters);
    compiled.conditions = (filters.groups ?? []).map((condition: FlagCondition, index: number) =>
      compileCondition(condition, index, condition.aggregation_group_type_index ?? aggregation, variantOverride(compiled.variants, condition)),
    );
    // Array#sort is stable, so conditions keep their order within each half.
    compiled.overridesFirst = [...compiled.conditions].sort((a, b) => Number(!a.source.variant) - Number(!b.source.variant));
    compiled.holdout = compileHoldout(filters.holdout);
    if (filters.feature_enrollment === true) compiled.enrollmentProperty = `$feature_enrollment/${flag.key}`;
    const superCondition = filters.super_groups?.[0];
    if (superCondition && (superCondition.properties ?? []).length > 0) {
      compiled.superCondition = compileCondition(superCondition, 0, null);
    }
    compiled.earlyExit = Boolean(filters.early_exit);
    compiled.payloads = filters.payloads;
  } catch (error) {
    compiled.broken = error;
  }
  return compiled;
}
