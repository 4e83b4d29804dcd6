/**
 * The shapes flag results take on the wire: v2 flag details (`/flags?v=2`, `/decide?v=4`) and
 * the legacy `featureFlags` / `featureFlagPayloads` maps.
 */
import { v7 as uuidv7 } from 'uuid';
import { flagValue } from '../../flags/index.js';
import type { FlagValue } from '../../flags/types.js';
import type { FlagEvaluation } from '../../flags-service/index.js';

/** SDKs parse payloads from JSON text, so a payload stored as a JSON value is encoded once. */
export function encodePayload(payload: unknown): string | undefined {
  if (payload === null || payload === undefined) return undefined;
  return typeof payload === 'string' ? payload : JSON.stringify(payload);
}

/** `{key: {key, enabled, variant, reason, metadata}}`; failed flags say so (posthog-js keeps its old value). */
export function flagDetails(evaluation: FlagEvaluation): Record<string, unknown> {
  const flags: Record<string, unknown> = {};
  for (const { flag, result } of evaluation.results) {
    const payload = result.enabled ? encodePayload(result.payload) : undefined;
    flags[flag.key] = {
      key: flag.key,
      enabled: result.enabled,
      variant: result.variant,
      ...(result.failed && { failed: true }),
      reason: result.reason,
      metadata: {
        id: flag.id,
        version: flag.version,
        ...(payload !== undefined && { payload }),
        description: flag.name || null,
        has_experiment: flag.has_experiment ?? false,
      },
    };
  }
  return flags;
}

/**
 * `featureFlags` (all evaluated flags, or only enabled ones) and `featureFlagPayloads` (enabled
 * flags with a payload). Failed flags are left out so clients keep their previous values.
 */
export function legacyFlags(evaluation: FlagEvaluation, enabledOnly: boolean) {
  const featureFlags: Record<string, FlagValue> = {};
  const featureFlagPayloads: Record<string, string> = {};
  for (const { flag, result } of evaluation.results) {
    if (result.failed || (enabledOnly && !result.enabled)) continue;
    featureFlags[flag.key] = flagValue(result);
    const payload = result.enabled ? encodePayload(result.payload) : undefined;
    if (payload !== undefined) featureFlagPayloads[flag.key] = payload;
  }
  return { featureFlags, featureFlagPayloads };
}

/** What every `/flags` answer carries next to its flags. */
export const responseMeta = (evaluation: FlagEvaluation) => ({
  errorsWhileComputingFlags: evaluation.errors,
  quotaLimited: [] as string[],
  requestId: uuidv7(),
  evaluatedAt: Date.now(),
});

export const v2Envelope = (evaluation: FlagEvaluation) => ({ flags: flagDetails(evaluation), ...responseMeta(evaluation) });

export const NO_FLAGS: FlagEvaluation = { results: [], errors: false };
