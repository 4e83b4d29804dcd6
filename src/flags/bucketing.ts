/** Hash-based assignments that do not depend on properties: variants and holdouts. */
import { holdoutHash, variantHash } from './hash.js';
import type { FlagCondition, FlagFilters, FlagHoldout } from './types.js';

/**
 * The variant for a matched condition: its override when that names a real variant, else
 * the variant whose cumulative range `[min, min + pct/100)` holds the variant hash (the
 * ranges are summed in list order, float rounding included, as the SDK does). Null for a
 * boolean flag, or when the percentages leave the hash uncovered.
 */
export function chooseVariant(
  filters: FlagFilters,
  condition: FlagCondition,
  flagKey: string,
  bucketingValue: string,
): string | null {
  const variants = filters.multivariate?.variants ?? [];
  if (condition.variant && variants.some((variant) => variant.key === condition.variant)) return condition.variant;
  if (variants.length === 0) return null;
  const hash = variantHash(flagKey, bucketingValue);
  let min = 0;
  for (const variant of variants) {
    const max = min + variant.rollout_percentage / 100;
    if (hash >= min && hash < max) return variant.key;
    min = max;
  }
  return null;
}

/** `holdout-<id>` when the identifier falls inside the holdout's exclusion percentage. */
export function holdoutVariant(holdout: FlagHoldout | null | undefined, bucketingValue: string): string | null {
  if (!holdout || holdout.id === null || holdout.id === undefined) return null;
  const percentage = Number(holdout.exclusion_percentage);
  // A malformed percentage would otherwise hold out everyone; PostHog's service rejects it.
  if (holdout.exclusion_percentage === null || !Number.isFinite(percentage)) return null;
  const clamped = Math.min(Math.max(percentage, 0), 100);
  if (clamped < 100 && holdoutHash(bucketingValue) > clamped / 100) return null;
  return `holdout-${holdout.id}`;
}
