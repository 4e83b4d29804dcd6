/**
 * The answer to a `/decide` or `/flags` POST, from plain request data to JSON bytes: the same
 * code answers on the main thread or on a flag thread (flag-threads.ts).
 */
import { toApiError } from '../../http/error-mapping.js';
import type { FlagEvaluation, FlagService } from '../evaluation/index.js';
import type { Logger } from '../../kernel/logger.js';
import { isStoreUnavailable } from '../../kernel/errors.js';
import { enabledFlagKeys, legacyFlags, responseMeta, v2Envelope } from './wire/format.js';
import { constantJson, toJson } from './wire/json-text.js';
import { hasActiveFlags, remoteConfig } from './remote-config.js';
import { readFlagRequest, type FlagHttpRequest, type ProjectLookup } from './request.js';

export type FlagRoute = 'decide' | 'flags';

export interface FlagAnswer {
  status: number;
  /** JSON. */
  body: Uint8Array;
  /** Gives `body`'s memory back for reuse: called once nothing reads it (its response closed). */
  release?: () => void;
}

export interface FlagAnswerDeps {
  projects: ProjectLookup;
  service: FlagService;
  maxDecodedBytes: number;
  log: Logger;
}

// ---------------------------------------------------------------------------------------------
// /decide (PostHog's `posthog/api/decide.py`): `v` 1 a list of enabled keys, 2 enabled flags, 3
// every flag plus payloads, 4 and up the `flags` details of `/flags?v=2`.

// Constant members, serialised once.
const CONFIG = constantJson({ enable_collect_everything: true });
const EDITOR_PARAMS = constantJson({});
const SUPPORTED_COMPRESSION = constantJson(['gzip', 'gzip-js', 'lz64']);

export function decideVersion(raw: string | undefined): number {
  const version = Number.parseInt(raw ?? '', 10);
  return Number.isFinite(version) && version > 0 ? version : 1;
}

/** The members every version starts with, in the order the SDKs saw them. */
function decideHead(errors: boolean): Record<string, unknown> {
  return {
    config: CONFIG,
    editorParams: EDITOR_PARAMS,
    errorComputingFlags: errors,
    errorsWhileComputingFlags: errors,
    isAuthenticated: false,
    supportedCompression: SUPPORTED_COMPRESSION,
  };
}

/**
 * The answer's body, for `toJson`. The flag members are added by name after the head (a
 * spread would take V8's slow path on every request).
 */
export function decideBody(version: number, evaluation: FlagEvaluation): Record<string, unknown> {
  const body = decideHead(evaluation.errors);
  if (version >= 4) {
    const v2 = v2Envelope(evaluation);
    body.flags = v2.flags;
    body.quotaLimited = v2.quotaLimited;
    body.requestId = v2.requestId;
    body.evaluatedAt = v2.evaluatedAt;
  } else if (version === 3) {
    const { featureFlags, featureFlagPayloads } = legacyFlags(evaluation, false);
    body.featureFlags = featureFlags;
    body.featureFlagPayloads = featureFlagPayloads;
  } else {
    body.featureFlags = version === 2 ? legacyFlags(evaluation, true).featureFlags : enabledFlagKeys(evaluation);
  }
  return body;
}

// ---------------------------------------------------------------------------------------------
// /flags (https://posthog.com/docs/api/flags): `v >= 2` answers the v2 `flags` details,
// lower versions the legacy maps; with neither `v` nor `config` it is v2 with config, as
// PostHog's service does.

interface FlagsShape {
  version: number;
  withConfig: boolean;
}

export function flagsShape(query: Record<string, string | undefined>): FlagsShape {
  if (query.v === undefined && query.config === undefined) return { version: 2, withConfig: true };
  const version = Number.parseInt(query.v ?? '', 10);
  return { version: Number.isFinite(version) ? version : 1, withConfig: query.config === 'true' || query.config === '1' };
}

const configFields = (hasFeatureFlags: boolean) => ({
  config: { enable_collect_everything: true },
  toolbarParams: {},
  isAuthenticated: false,
  ...remoteConfig(hasFeatureFlags),
});

/** The answer's body; `hasFeatureFlags` only matters with config. */
export function flagsBody(shape: FlagsShape, evaluation: FlagEvaluation, hasFeatureFlags: boolean): Record<string, unknown> {
  let body: Record<string, unknown>;
  if (shape.version >= 2) {
    body = v2Envelope(evaluation);
  } else {
    const { featureFlags, featureFlagPayloads } = legacyFlags(evaluation, false);
    body = { featureFlags, featureFlagPayloads, ...responseMeta(evaluation) };
  }
  return shape.withConfig ? { ...configFields(hasFeatureFlags), ...body } : body;
}

// ---------------------------------------------------------------------------------------------

/** No flags, with the error mark: what PostHog's SDKs expect when flags could not be computed (they keep the flags they had). */
const FAILED_EVALUATION: FlagEvaluation = { results: [], errors: true };

async function body(route: FlagRoute, input: FlagHttpRequest, deps: FlagAnswerDeps): Promise<Record<string, unknown>> {
  const request = await readFlagRequest(input, deps.projects, deps.maxDecodedBytes).catch((error: unknown) => {
    // The project's token cannot be checked while the metadata store is unreachable (and the
    // project is not cached): no flags, marked as an error, rather than a 5xx.
    if (isStoreUnavailable(error, 'MetaStoreUnavailableError')) return null;
    throw error;
  });
  const evaluation = request ? await deps.service.evaluate(request.project.id, request.flags) : FAILED_EVALUATION;
  if (route === 'decide') return decideBody(decideVersion(input.query.v), evaluation);
  const shape = flagsShape(input.query);
  return flagsBody(shape, evaluation, shape.withConfig && request !== null && (await hasActiveFlags(deps.service, request.project.id)));
}

/** Never throws: failures are answers in the API's error shape (kernel/errors.ts). */
export async function answerFlagRequest(route: FlagRoute, input: FlagHttpRequest, deps: FlagAnswerDeps): Promise<FlagAnswer> {
  try {
    return { status: 200, body: toJson(await body(route, input, deps)) };
  } catch (error) {
    const api = toApiError(error);
    if (api.status >= 500) deps.log.error({ err: error, url: input.path }, 'request failed');
    return { status: api.status, body: Buffer.from(JSON.stringify(api.toBody())) };
  }
}
