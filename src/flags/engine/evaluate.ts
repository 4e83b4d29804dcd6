/**
 * Flag evaluation for `/flags`: pure, synchronous, no I/O. The caller supplies the flags
 * and the already-merged person/group properties; the result carries value, reason and
 * payload per flag, or `failed: true` for a flag this engine cannot decide.
 */
import { chooseVariant, holdoutVariant } from './bucketing.js';
import { compileFlags, OFF, type CompiledFlag, type CompiledFlags, type ResultVariant } from './compile.js';
import { evaluateCondition, groupKeyFor, type ConditionScope } from './condition.js';
import { dependencyMatches, resolveDependency } from './dependencies.js';
import { UncomputableFilterError } from './errors.js';
import { flagHash } from './hash.js';
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
  const compiled = compileFlags([flag]);
  return new Evaluation(compiled, ctx, options).resultOf(compiled.flags[0]);
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
  const compiled = compileFlags(flags);
  const results: Record<string, FlagResult> = {};
  if (keysToEvaluate) {
    evaluateCompiled(compiled, ctx, keysToEvaluate, options).forEach((result) => {
      if (result) results[result.key] = result;
    });
  } else {
    const evaluation = new Evaluation(compiled, ctx, options);
    for (const flag of compiled.flags) {
      if (!flag.source.deleted) results[flag.key] = evaluation.resultOf(flag);
    }
  }
  return results;
}

/**
 * `evaluateFlags` for flags compiled beforehand (the flag cache compiles once per load): the
 * results in the order of `keys`, undefined for keys that name no (non-deleted) flag.
 */
export function evaluateCompiled(
  flags: CompiledFlags,
  ctx: EvaluationContext,
  keys: readonly string[],
  options: EvaluateOptions = {},
): (FlagResult | undefined)[] {
  return evaluateEach(flags, ctx, keys.map((key) => flags.byKey.get(key)), options);
}

/** `evaluateCompiled` for flags of `flags` already looked up: a result per entry, undefined for undefined. */
export function evaluateEach(
  flags: CompiledFlags,
  ctx: EvaluationContext,
  targets: readonly (CompiledFlag | undefined)[],
  options: EvaluateOptions = {},
): (FlagResult | undefined)[] {
  const evaluation = new Evaluation(flags, ctx, options);
  return targets.map((flag) => flag && evaluation.resultOf(flag));
}

export function flagValue(result: FlagResult): FlagValue {
  return result.enabled ? (result.variant ?? true) : false;
}

/** Marks a flag being computed, so that a dependency cycle back to it is caught. */
const COMPUTING = Symbol('computing');

/** One request's evaluation: memoises results (per key) so dependencies are computed once. */
class Evaluation implements ConditionScope {
  private readonly state: (FlagResult | typeof COMPUTING | undefined)[];
  // The last rollout hash: a flag's conditions usually bucket the same identifier.
  private hashedKey = '';
  private hashedValue: string | null = null;
  private hashed = 0;

  constructor(
    private readonly flags: CompiledFlags,
    readonly ctx: EvaluationContext,
    private readonly options: EvaluateOptions,
  ) {
    this.state = new Array(flags.slots);
  }

  resultOf(flag: CompiledFlag): FlagResult {
    const known = this.state[flag.slot];
    if (known !== undefined && known !== COMPUTING) return known;
    this.state[flag.slot] = COMPUTING;
    let result: FlagResult;
    try {
      result = this.compute(flag);
    } catch (error) {
      if (!(error instanceof UncomputableFilterError)) {
        this.state[flag.slot] = undefined;
        throw error;
      }
      result = failedResult(flag.key, error);
    }
    this.state[flag.slot] = result;
    return result;
  }

  matchDependency(filter: PropertyFilter): boolean {
    if (filter.operator !== 'flag_evaluates_to') {
      throw new UncomputableFilterError(`flag filters need operator "flag_evaluates_to", not "${String(filter.operator)}"`);
    }
    const reference = String(filter.key);
    const target = resolveDependency(this.flags, reference);
    if (!target) throw new UncomputableFilterError(`flag dependency "${reference}" does not exist`, 'missing_dependency');
    if (this.state[target.slot] === COMPUTING) {
      throw new UncomputableFilterError(`circular flag dependency through "${target.key}"`, 'missing_dependency');
    }
    const result = this.resultOf(target);
    if (result.failed) {
      const code = result.reason.code === 'missing_dependency' ? 'missing_dependency' : 'evaluation_error';
      throw new UncomputableFilterError(`flag dependency "${target.key}" could not be computed`, code);
    }
    return dependencyMatches(filter.value, flagValue(result));
  }

  rolloutHash(flagKey: string, bucketingValue: string): number {
    if (flagKey !== this.hashedKey || bucketingValue !== this.hashedValue) {
      this.hashed = flagHash(flagKey, bucketingValue);
      this.hashedKey = flagKey;
      this.hashedValue = bucketingValue;
    }
    return this.hashed;
  }

  private compute(flag: CompiledFlag): FlagResult {
    if (flag.disabled) return offResult(flag, makeReason('disabled'));
    if (flag.broken !== undefined) throw flag.broken;
    const ctx = this.ctx;
    const flagAggregation = flag.aggregation;

    // Person conditions bucket on the device id (device_id flags), else the continuity hash key
    // or the distinct id. Without a device id PostHog skips person conditions but still holds
    // out on the id below.
    const device = flag.deviceBucketing ? deviceIdOf(ctx) : undefined;
    const deviceMissing = device === null;
    const personValue =
      device ?? (flag.continuity ? ctx.hashKeyOverrides?.[flag.key] : undefined) ?? ctx.distinctId;

    let flagBucketing = personValue;
    if (flagAggregation !== null) {
      const groupKey = groupKeyFor(ctx, flagAggregation);
      if (groupKey === undefined) return offResult(flag, makeReason('no_group_type'));
      flagBucketing = groupKey;
    }

    const earlyAccess = this.earlyAccess(flag, personValue);
    if (earlyAccess) return earlyAccess;

    const holdout = holdoutVariant(flag.holdout, flagBucketing);
    if (holdout) return matchedResult(flag, holdout, makeReason('holdout_condition_value'));

    let bestCode: ReasonCode = 'no_condition_match';
    let bestIndex: number | null = null;
    for (const condition of this.options.variantOverridesFirst ? flag.overridesFirst : flag.conditions) {
      const aggregation = condition.aggregation;
      let code: ReasonCode;
      if (aggregation === null && deviceMissing) {
        code = 'out_of_rollout_bound';
      } else {
        const bucketingValue =
          aggregation === null ? personValue : aggregation === flagAggregation ? flagBucketing : groupKeyFor(ctx, aggregation);
        if (bucketingValue === undefined) {
          code = 'no_group_type';
        } else {
          const outcome = evaluateCondition(condition, flag.key, bucketingValue, this);
          // An undecidable condition before any match could have been the match: give up on the flag.
          if (outcome.kind === 'unknown') throw outcome.error;
          if (outcome.kind === 'match') {
            const variant = chooseVariant(flag.variants, condition.variant, flag.key, bucketingValue);
            return matchedResult(flag, variant, makeReason('condition_match', condition.index));
          }
          if (flag.earlyExit && outcome.code === 'out_of_rollout_bound') {
            return offResult(flag, makeReason('out_of_rollout_bound', condition.index));
          }
          code = outcome.code;
        }
      }
      if (outranks(code, bestCode)) {
        bestCode = code;
        bestIndex = condition.index;
      }
    }
    return offResult(flag, makeReason(bestCode, bestIndex));
  }

  /** Early-access enrollment decides the flag outright once the person has opted in or out. */
  private earlyAccess(flag: CompiledFlag, personValue: string): FlagResult | null {
    const properties = this.ctx.personProperties;
    if (flag.enrollmentProperty !== null) {
      const enrolled = ownValue(properties, flag.enrollmentProperty);
      if (enrolled === undefined) return null;
      const enabled = enrolled === true || enrolled === 'true';
      return enabled
        ? matchedResult(flag, null, makeReason('super_condition_value', 0))
        : offResult(flag, makeReason('super_condition_value', 0));
    }
    const superCondition = flag.superCondition;
    if (!superCondition) return null;
    if (!superCondition.filters.some((filter) => ownValue(properties, filter.source.key) !== undefined)) return null;
    const outcome = evaluateCondition(superCondition, flag.key, personValue, this);
    if (outcome.kind === 'unknown') throw outcome.error;
    return outcome.kind === 'match'
      ? matchedResult(flag, null, makeReason('super_condition_value', 0))
      : offResult(flag, makeReason('super_condition_value', 0));
  }
}

function deviceIdOf(ctx: EvaluationContext): string | null {
  const device = ctx.deviceId ?? ctx.personProperties.$device_id;
  return (typeof device === 'string' && device !== '') || typeof device === 'number' ? String(device) : null;
}

function ownValue(record: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(record, key) ? record[key] : undefined;
}

/** A definition yields few distinct results; anything past this many is made, not kept. */
const MAX_KEPT_RESULTS = 256;

function keptResult(flag: CompiledFlag, reason: FlagReason, variant: ResultVariant): FlagResult | undefined {
  return flag.results.get(reason)?.get(variant);
}

/** Shares `result` with every later evaluation of the compiled flag that gets the same answer. */
function keep(flag: CompiledFlag, reason: FlagReason, variant: ResultVariant, result: FlagResult): FlagResult {
  Object.freeze(result);
  let byVariant = flag.results.get(reason);
  if (!byVariant && flag.results.size < MAX_KEPT_RESULTS) flag.results.set(reason, (byVariant = new Map()));
  if (byVariant && byVariant.size < MAX_KEPT_RESULTS) byVariant.set(variant, result);
  return result;
}

function matchedResult(flag: CompiledFlag, variant: string | null, reason: FlagReason): FlagResult {
  const kept = keptResult(flag, reason, variant);
  if (kept) return kept;
  const payloads = flag.payloads;
  const payloadKey = variant ?? 'true';
  const payload = payloads && Object.prototype.hasOwnProperty.call(payloads, payloadKey) ? payloads[payloadKey] : null;
  return keep(flag, reason, variant, { key: flag.key, enabled: true, variant, reason, payload: payload ?? null });
}

function offResult(flag: CompiledFlag, reason: FlagReason): FlagResult {
  return keptResult(flag, reason, OFF) ?? keep(flag, reason, OFF, { key: flag.key, enabled: false, variant: null, reason, payload: null });
}

function failedResult(key: string, error: UncomputableFilterError): FlagResult {
  return { key, enabled: false, variant: null, reason: makeReason(error.code), payload: null, failed: true, error: error.message };
}
