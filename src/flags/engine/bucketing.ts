/** Hash-based assignments that do not depend on properties: variants and holdouts. */
import { holdoutHash, variantHash } from './hash.js';
import type { FlagCondition, FlagFilters, FlagHoldout } from './types.js';

/** A variant's share of the hash: `[min, max)`. */
export interface VariantRange {
  key: string;
  min: number;
  max: number;
}

/**
 * The cumulative ranges `[min, min + pct/100)`, summed in list order, float rounding included,
 * as the SDK does.
 */
export function variantRanges(filters: FlagFilters): VariantRange[] {
  const ranges: VariantRange[] = [];
  let min = 0;
  for (const variant of filters.multivariate?.variants ?? []) {
    const max = min + variant.rollout_percentage / 100;
    ranges.push({ key: variant.key, min, max });
    min = max;
  }
  return ranges;
}

/** The condition's variant override, when it names a real variant. */
export function variantOverride(ranges: readonly VariantRange[], condition: FlagCondition): string | null {
  const variant = condition.variant;
  return variant && ranges.some((range) => range.key === variant) ? variant : null;
}

/**
 * The variant for a matched condition: its override, else the variant whose range holds the
 * variant hash. Null for a boolean flag, or when the percentages leave the hash uncovered.
 */
export function chooseVariant(
  ranges: readonly VariantRange[],
  override: string | null,
  flagKey: string,
  bucketingValue: string,
): string | null {
  if (override !== null) return override;
  if (ranges.length === 0) return null;
  const hash = variantHash(flagKey, bucketingValue);
  for (const range of ranges) {
    if (hash >= range.min && hash < range.max) return range.key;
  }
  return null;
}

/** A holdout reduced to what the hash is compared with. */
export interface Holdout {
  variant: string;
  /** Exclusion percentage clamped to [0, 100]. */
  percentage: number;
}

export function compileHoldout(holdout: FlagHoldout | null | undefined): Holdout | null {
  if (!holdout || holdout.id === null || holdout.id === undefined) return null;
  const percentage = Number(holdout.exclusion_percentage);
  // A malformed percentage would otherwise hold out everyone; PostHog's service rejects it.
  if (holdout.exclusion_percentage === null || !Number.isFinite(percentage)) return null;
  return { variant: `holdout-${holdout.id}`, percentage: Math.min(Math.max(percentage, 0), 100) };
}

/** `holdout-<id>` when the identifier falls inside the holdout's exclusion percentage. */
export function holdoutVariant(holdout: Holdout | null, bucketingValue: string): string | null {
  if (!holdout) return null;
  if (holdout.percentage < 100 && holdoutHash(bucketingValue) > holdout.percentage / 100) return null;
  return holdout.variant;
}
