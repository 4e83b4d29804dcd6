/**
 * `/decide` (spec §4.2, §9; semantics §4.5): the legacy evaluation endpoint of older SDKs.
 * `v` picks the shape: 1 a list of enabled keys, 2 enabled flags, 3 every flag plus payloads
 * (the spec's response), 4 and up the `flags` details of `/flags?v=2`. GET answers the same
 * shape with no flags.
 */
import type { FastifyInstance } from 'fastify';
import type { FlagEvaluation } from '../../flags-service/index.js';
import type { AppContext } from '../context.js';
import { enabledFlagKeys, legacyFlags, NO_FLAGS, v2Envelope } from './format.js';
import { constantJson, sendJson } from './json-text.js';
import { queryOf, readFlagRequest, withRawBodies } from './request.js';
import { flagServiceFor } from './service.js';

// Constant members, serialised once.
const CONFIG = constantJson({ enable_collect_everything: true });
const EDITOR_PARAMS = constantJson({});
const SUPPORTED_COMPRESSION = constantJson(['gzip', 'gzip-js', 'lz64']);

export function decideVersion(raw: string | undefined): number {
  const version = Number.parseInt(raw ?? '', 10);
  return Number.isFinite(version) && version > 0 ? version : 1;
}

/** The members every version starts with, in the order the SDKs saw them. */
function head(errors: boolean): Record<string, unknown> {
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
 * The answer's body, for `sendJson`. The flag members are added by name after the head (a
 * spread would take V8's slow path on every request).
 */
export function decideBody(version: number, evaluation: FlagEvaluation): Record<string, unknown> {
  const body = head(evaluation.errors);
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

export async function registerDecideRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const service = flagServiceFor(ctx);
  await withRawBodies(app, (scope) => {
    scope.post('/decide', async (request, reply) => {
      const { project, flags } = await readFlagRequest(request, ctx);
      return sendJson(reply, decideBody(decideVersion(queryOf(request).v), await service.evaluate(project.id, flags)));
    });
    scope.get('/decide', async (request, reply) => sendJson(reply, decideBody(decideVersion(queryOf(request).v), NO_FLAGS)));
  });
}
