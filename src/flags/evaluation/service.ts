/**
 * Evaluating a project's flags for one request: cached flags, one store call for the stored
 * properties and continuity overrides, then the pure engine. Whatever fails is reported per
 * flag (`failed`), so callers answer with partial results instead of an error.
 */
import { propertiesFor } from '../engine/condition.js';
import { evaluateEach, type CompiledFlag, type CompiledFlags } from '../engine/index.js';
import { makeReason } from '../engine/reasons.js';
import type { EvaluateOptions, EvaluationContext, FeatureFlag, FlagResult } from '../engine/types.js';
import type { Logger } from '../../kernel/logger.js';
import type { FlagEvaluationInputs, FlagStore, StoredFlag } from '../../store/types.js';
import { buildContext } from './context.js';
import { FlagCache, type ProjectFlags } from './flag-cache.js';
import type { FlagEvaluation, FlagRequest } from './types.js';

/**
 * Conditions are walked in stored order: posthog-node 5.70's local evaluator does so
 * (`matchFeatureFlagProperties` loops over `filters.groups` as stored), and so does PostHog's
 * current Rust service. Sorting variant overrides first, as the legacy Python server did, would
 * make `/flags` disagree with local evaluation for flags whose earlier condition also matches.
 */
const EVALUATE_OPTIONS: EvaluateOptions = { variantOverridesFirst: false };

const failed = (key: string): FlagResult => ({
  key,
  enabled: false,
  variant: null,
  reason: makeReason('evaluation_error'),
  payload: null,
  failed: true,
});

export class FlagService {
  readonly cache: FlagCache;

  constructor(
    private readonly store: FlagStore,
    private readonly log: Logger,
  ) {
    this.cache = new FlagCache(store);
  }

  /** Active non-deleted flags of a project. */
  async activeFlags(projectId: number): Promise<StoredFlag[]> {
    return (await this.cache.get(projectId)).active;
  }

  async evaluate(projectId: number, request: FlagRequest): Promise<FlagEvaluation> {
    if (request.disableFlags) return { results: [], errors: false };
    let flags: ProjectFlags;
    try {
      flags = await this.cache.get(projectId);
    } catch (error) {
      this.log.error({ err: error, projectId }, 'could not load feature flags');
      return { results: [], errors: true };
    }
    // Each flag once, however often the request names it.
    const targets = request.flagKeys
      ? [...new Set(request.flagKeys)].map((key) => flags.byKey.get(key)).filter((flag): flag is StoredFlag => flag?.active === true)
      : flags.active;
    if (targets.length === 0) return { results: [], errors: false };

    let inputs: FlagEvaluationInputs | null = null;
    try {
      inputs = await this.store.prepareEvaluation({
        projectId,
        distinctId: request.distinctId,
        groups: request.groups,
        continuity: flags.continuityKeys.length > 0 ? { flagKeys: flags.continuityKeys, anonDistinctId: request.anonDistinctId } : null,
        cohortMembership: flags.cohorts?.needsMembership ?? false,
      });
    } catch (error) {
      this.log.error({ err: error, projectId }, 'could not read stored properties for flags; answering from the request alone');
    }
    const ctx = buildContext(request, inputs);
    if (flags.cohorts) ctx.cohorts = flags.cohorts.lookup(inputs?.cohortIds ?? null);
    const compiledTargets = request.flagKeys ? targets.map((flag) => flags.compiled.byKey.get(flag.key)) : flags.activeCompiled;
    const computed = this.evaluateSafely(flags.compiled, ctx, compiledTargets);
    const results = targets.map((flag, index) => {
      const result = computed[index];
      const usable = result && (inputs !== null || !needsStoredData(flag, ctx));
      return { flag, result: usable ? result : failed(flag.key) };
    });
    return { results, errors: results.some(({ result }) => result.failed) };
  }

  /**
   * Results in the order of `targets`. One engine bug must not cost the other flags: on a throw,
   * retry flag by flag.
   */
  private evaluateSafely(
    flags: CompiledFlags,
    ctx: EvaluationContext,
    targets: readonly (CompiledFlag | undefined)[],
  ): (FlagResult | undefined)[] {
    try {
      return evaluateEach(flags, ctx, targets, EVALUATE_OPTIONS);
    } catch (error) {
      this.log.error({ err: error }, 'flag evaluation failed; evaluating flags one by one');
    }
    return targets.map((target) => {
      try {
        return evaluateEach(flags, ctx, [target], EVALUATE_OPTIONS)[0];
      } catch {
        return undefined; // reported as failed
      }
    });
  }
}

/**
 * Whether a flag's answer could depend on stored data that was not read: group types, a
 * property the request did not send, another flag, an enrollment it did not send.
 */
function needsStoredData(flag: FeatureFlag, ctx: EvaluationContext): boolean {
  const filters = flag.filters;
  if (filters.aggregation_group_type_index !== null && filters.aggregation_group_type_index !== undefined) return true;
  if (filters.feature_enrollment && !(`$feature_enrollment/${flag.key}` in ctx.personProperties)) return true;
  for (const condition of [...(filters.groups ?? []), ...(filters.super_groups ?? [])]) {
    if (condition.aggregation_group_type_index !== null && condition.aggregation_group_type_index !== undefined) return true;
    for (const filter of condition.properties ?? []) {
      if (filter.type === 'flag') return true;
      if (filter.type !== 'cohort' && !(filter.key in propertiesFor(filter, null, ctx))) return true;
    }
  }
  return false;
}
