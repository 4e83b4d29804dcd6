/**
 * `/decide` (spec §4.2, §9; semantics §4.5): the legacy evaluation endpoint of older SDKs.
 * `v` picks the shape: 1 a list of enabled keys, 2 enabled flags, 3 every flag plus payloads
 * (the spec's response), 4 and up the `flags` details of `/flags?v=2`. GET answers the same
 * shape with no flags.
 */
import type { FastifyInstance } from 'fastify';
import type { FlagEvaluation } from '../../flags-service/index.js';
import type { AppContext } from '../context.js';
import { legacyFlags, NO_FLAGS, v2Envelope } from './format.js';
import { queryOf, readFlagRequest, withRawBodies } from './request.js';
import { flagServiceFor } from './service.js';

const SUPPORTED_COMPRESSION = ['gzip', 'gzip-js', 'lz64'];

export function decideVersion(raw: string | undefined): number {
  const version = Number.parseInt(raw ?? '', 10);
  return Number.isFinite(version) && version > 0 ? version : 1;
}

export function decideBody(version: number, evaluation: FlagEvaluation): Record<string, unknown> {
  const base = {
    config: { enable_collect_everything: true },
    editorParams: {},
    errorComputingFlags: evaluation.errors,
    errorsWhileComputingFlags: evaluation.errors,
    isAuthenticated: false,
    supportedCompression: SUPPORTED_COMPRESSION,
  };
  if (version >= 4) return { ...base, ...v2Envelope(evaluation) };
  if (version === 3) return { ...base, ...legacyFlags(evaluation, false) };
  const { featureFlags } = legacyFlags(evaluation, true);
  return { ...base, featureFlags: version === 2 ? featureFlags : Object.keys(featureFlags) };
}

export async function registerDecideRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const service = flagServiceFor(ctx);
  await withRawBodies(app, (scope) => {
    scope.post('/decide', async (request) => {
      const { project, flags } = await readFlagRequest(request, ctx);
      return decideBody(decideVersion(queryOf(request).v), await service.evaluate(project.id, flags));
    });
    scope.get('/decide', async (request) => decideBody(decideVersion(queryOf(request).v), NO_FLAGS));
  });
}
