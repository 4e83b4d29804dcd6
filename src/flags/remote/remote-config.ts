/**
 * Remote config for posthog-js (the keys its `packages/browser/src/remote-config.ts` reads, in
 * github.com/PostHog/posthog-js): what `/array/<token>/config` answers (config-routes.ts), and what
 * rides along on `/flags` answers that ask for config.
 */
import type { FlagService } from '../evaluation/index.js';

/** What the browser SDK reads: gzip bodies, the batched endpoint, and every optional feature off. */
export function remoteConfig(hasFeatureFlags: boolean) {
  return {
    supportedCompression: ['gzip', 'gzip-js'],
    analytics: { endpoint: '/i/v0/e/' },
    hasFeatureFlags,
    sessionRecording: false,
    elementsChainAsString: true,
    autocapture_opt_out: false,
    heatmaps: false,
    surveys: false,
    captureDeadClicks: false,
    capturePerformance: false,
    autocaptureExceptions: false,
    defaultIdentifiedOnly: true,
    siteApps: [] as unknown[],
  };
}

/** On a store failure say "yes": the SDK then asks /flags, which reports the error itself. */
export async function hasActiveFlags(service: FlagService, projectId: number): Promise<boolean> {
  try {
    return (await service.activeFlags(projectId)).length > 0;
  } catch {
    return true;
  }
}
