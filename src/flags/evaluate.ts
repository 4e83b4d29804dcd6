/**
 * Flag evaluation for `/flags`: pure, synchronous, no I/O. The caller supplies the flags
 * and the already-merged person/group properties; the result carries value, reason and
 * payload per flag, or `failed: true` for a flag this engine cannot decide.
 */
import { chooseVariant, holdoutVariant } from './bucketing.js';
import { evaluateCondition, groupKeyFor, type ConditionScope } from './condition.js';
import { dependencyMatches, indexFlags, resolveDependency, type FlagIndex } from './dependencies.js';
import { UncomputableFilterError } from './errors.js';
import { makeReason, outranks } from './reasons.js';
import type {
  EvaluateOptions,
  EvaluationContext,
  FeatureFlag,
  FlagReason,
  FlagResult,
  FlagValue,
  PropertyFilter,
  ReasonCode,
} from './types.js';

/** Evaluates one flag on its own; a flag that depends on other flags comes back failed. */
export function evaluateFlag(flag: FeatureFlag, ctx: EvaluationContext, options: EvaluateOptions = {}): FlagResult {
  return new Evaluation([flag], ctx, options).resultOf(flag);
}

/**
 * Evaluates `flags` (or only `keysToEvaluate`, plus whatever they depend on) for one
 * request. Deleted flags and unknown keys are left out of the result.
 */
export function evaluateFlags(
  flags: readonly FeatureFlag[],
  ctx: EvaluationContext,
  keysToEvaluate?: readonly string[],
  options: EvaluateOptions = {},
): Record<string, FlagResult> {
  const evaluation = new Evaluation(flags, ctx, options);
  const targets = keysToEvaluate
    ? keysToEvaluate.map((key) => evaluation.index.byKey.get(key))
    : flags.filter((flag) => !flag.deleted);
  const results: Record<string, FlagResult> = {};
  for (const flag of targets) {
    if (flag) results[flag.key] = evaluation.resultOf(flag);
  }
  return results;
}

export function flagValue(result: FlagResult): FlagValue {
  return result.enabled ? (result.variant ?? true) : false;
}

interface PersonBucketing {
  value: string;
  /** A `device_id` flag without a device id: its person conditions cannot be bucketed. */
  deviceMissing: boolean;
}

/** One request's evaluation: memoises results so dependencies are computed once. */
class Evaluation {
  readonly index: FlagIndex;
  private readonly results = new Map<string, FlagResult>();
  private readonly inProgress = new Set<string>();

  constructor(
    flags: readonly FeatureFlag[],
    private readonly ctx: EvaluationContext,
    private readonly options: EvaluateOptions,
  ) {
    this.index = indexFlags(flags);
  }

  resultOf(flag: FeatureFlag): FlagResult {
    const cached = this.results.get(flag.key);
    if (cached) return cached;
    this.inProgress.add(flag.key);
    let result: FlagResult;
    try {
      result = this.compute(flag);
    } catch (error) {
      if (!(error instanceof UncomputableFilterError)) throw error;
      result = failedResult(flag.key, error);
    } finally {
      this.inProgress.delete(flag.key);
    }
    this.results.set(flag.key, result);
    return result;
  }

  private readonly matchDependency = (filter: PropertyFilter): boolean => {
    if (filter.operator !== 'flag_evaluates_to') {
      throw new UncomputableFilterError(`flag filters need operator "flag_evaluates_to", not "${String(filter.operator)}"`);
    }
    const reference = String(filter.key);
    const target = resolveDependency(this.index, reference);
    if (!target) throw new UncomputableFilterError(`flag dependency "${reference}" does not exist`, 'missing_dependency');
    if (this.inProgress.has(target.key)) {
      throw new UncomputableFilterError(`circular flag dependency through "${target.key}"`, 'missing_dependency');
    }
    const result = this.resultOf(target);
    if (result.failed) {
      const code = result.reason.code === 'missing_dependency' ? 'missing_dependency' : 'evaluation_error';
      throw new UncomputableFilterError(`flag dependency "${target.key}" could not be computed`, code);
    }
    return dependencyMatches(filter.value, flagValue(result));
  };

  private compute(flag: FeatureFlag): FlagResult {
    if (!flag.active || flag.deleted) return offResult(flag.key, makeReason('disabled'));
    const filters = flag.filters ?? { groups: [] };
    const flagAggregation = filters.aggregation_group_type_index ?? null;
    const person = this.personBucketing(flag);

    let flagBucketing = person.value;
    if (flagAggregation !== null) {
      const groupKey = groupKeyFor(this.ctx, flagAggregation);
      if (groupKey === undefined) return offResult(flag.key, makeReason('no_group_type'));
      flagBucketing = groupKey;
    }

    const earlyAccess = this.earlyAccess(flag, person);
    if (earlyAccess) return earlyAccess;

    const holdout = holdoutVariant(filters.holdout, flagBucketing);
    if (holdout) return matchedResult(flag, holdout, makeReason('holdout_condition_value'));

    const conditions = (filters.groups ?? []).map((condition, index) => ({ condition, index }));
    if (this.options.variantOverridesFirst) {
      // Array#sort is stable, so conditions keep their order within each half.
      conditions.sort((a, b) => Number(!a.condition.variant) - Number(!b.condition.variant));
    }

    let best: { code: ReasonCode; index: number | null } = { code: 'no_condition_match', index: null };
    const note = (code: ReasonCode, index: number) => {
      if (outranks(code, best.code)) best = { code, index };
    };

    for (const { condition, index } of conditions) {
      const aggregation = condition.aggregation_group_type_index ?? flagAggregation;
      let bucketingValue: string;
      if (aggregation !== null) {
        const groupKey = aggregation === flagAggregation ? flagBucketing : groupKeyFor(this.ctx, aggregation);
        if (groupKey === undefined) {
          note('no_group_type', index);
          continue;
        }
        bucketingValue = groupKey;
      } else if (person.deviceMissing) {
        note('out_of_rollout_bound', index);
        continue;
      } else {
        bucketingValue = person.value;
      }

      const outcome = evaluateCondition(condition, this.scope(flag, bucketingValue, aggregation));
      // An undecidable condition before any match could have been the match: give up on the flag.
      if (outcome.kind === 'unknown') throw outcome.error;
      if (outcome.kind === 'match') {
        const variant = chooseVariant(filters, condition, flag.key, bucketingValue);
        return matchedResult(flag, variant, makeReason('condition_match', index));
      }
      note(outcome.code, index);
      if (filters.early_exit && outcome.code === 'out_of_rollout_bound') {
        return offResult(flag.key, makeReason('out_of_rollout_bound', index));
      }
    }
    return offResult(flag.key, makeReason(best.code, best.index));
  }

  private scope(flag: FeatureFlag, bucketingValue: string, aggregation: number | null): ConditionScope {
    return { flagKey: flag.key, bucketingValue, aggregation, ctx: this.ctx, matchDependency: this.matchDependency };
  }

  private personBucketing(flag: FeatureFlag): PersonBucketing {
    let deviceMissing = false;
    if (flag.bucketing_identifier === 'device_id') {
      const device = this.ctx.deviceId ?? this.ctx.personProperties.$device_id;
      if ((typeof device === 'string' && device !== '') || typeof device === 'number') {
        return { value: String(device), deviceMissing: false };
      }
      // PostHog then skips person conditions but still holds out on the id below.
      deviceMissing = true;
    }
    const override = flag.ensure_experience_continuity ? this.ctx.hashKeyOverrides?.[flag.key] : undefined;
    return { value: override ?? this.ctx.distinctId, deviceMissing };
  }

  /** Early-access enrollment decides the flag outright once the person has opted in or out. */
  private earlyAccess(flag: FeatureFlag, person: PersonBucketing): FlagResult | null {
    const filters = flag.filters;
    const properties = this.ctx.personProperties;
    if (filters.feature_enrollment === true) {
      const enrolled = ownValue(properties, `$feature_enrollment/${flag.key}`);
      if (enrolled === undefined) return null;
      const enabled = enrolled === true || enrolled === 'true';
      return enabled
        ? matchedResult(flag, null, makeReason('super_condition_value', 0))
        : offResult(flag.key, makeReason('super_condition_value', 0));
    }
    const superCondition = filters.super_groups?.[0];
    const superProperties = superCondition?.properties ?? [];
    if (!superCondition || superProperties.length === 0) return null;
    if (!superProperties.some((filter) => ownValue(properties, filter.key) !== undefined)) return null;
    const outcome = evaluateCondition(superCondition, this.scope(flag, person.value, null));
    if (outcome.kind === 'unknown') throw outcome.error;
    return outcome.kind === 'match'
      ? matchedResult(flag, null, makeReason('super_condition_value', 0))
      : offResult(flag.key, makeReason('super_condition_value', 0));
  }
}

function ownValue(record: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(record, key) ? record[key] : undefined;
}

function matchedResult(flag: FeatureFlag, variant: string | null, reason: FlagReason): FlagResult {
  const payloads = flag.filters.payloads;
  const payloadKey = variant ?? 'true';
  const payload = payloads && Object.prototype.hasOwnProperty.call(payloads, payloadKey) ? payloads[payloadKey] : null;
  return { key: flag.key, enabled: true, variant, reason, payload: payload ?? null };
}

function offResult(key: string, reason: FlagReason): FlagResult {
  return { key, enabled: false, variant: null, reason, payload: null };
}

function failedResult(key: string, error: UncomputableFilterError): FlagResult {
  return { ...offResult(key, makeReason(error.code)), failed: true, error: error.message };
}
