/**
 * `/flags` (wire protocol §1.3, §2.5; semantics §4.6), what current SDKs call. `v >= 2` answers
 * the v2 `flags` details, lower versions the legacy maps; with neither `v` nor `config` it is
 * v2 with config, as PostHog's service does. GET answers the same shape with no flags.
 */
import type { FastifyInstance } from 'fastify';
import type { FlagEvaluation } from '../../flags-service/index.js';
import type { AppContext } from '../context.js';
import { legacyFlags, NO_FLAGS, responseMeta, v2Envelope } from './format.js';
import { hasActiveFlags, remoteConfig } from './remote-config.js';
import { sendJson } from './json-text.js';
import { queryOf, readFlagRequest, withRawBodies } from './request.js';
import { flagServiceFor } from './service.js';

interface FlagsShape {
  version: number;
  withConfig: boolean;
}

export function flagsShape(query: Record<string, string | undefined>): FlagsShape {
  if (query.v === undefined && query.config === undefined) return { version: 2, withConfig: true };
  const version = Number.parseInt(query.v ?? '', 10);
  return { version: Number.isFinite(version) ? version : 1, withConfig: query.config === 'true' || query.config === '1' };
}

function flagsBody(shape: FlagsShape, evaluation: FlagEvaluation): Record<string, unknown> {
  if (shape.version >= 2) return v2Envelope(evaluation);
  const { featureFlags, featureFlagPayloads } = legacyFlags(evaluation, false);
  return { featureFlags, featureFlagPayloads, ...responseMeta(evaluation) };
}

export async function registerFlagsRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const service = flagServiceFor(ctx);
  const configFields = (hasFeatureFlags: boolean) => ({
    config: { enable_collect_everything: true },
    toolbarParams: {},
    isAuthenticated: false,
    ...remoteConfig(hasFeatureFlags),
  });

  await withRawBodies(app, (scope) => {
    scope.post('/flags', async (request, reply) => {
      const shape = flagsShape(queryOf(request));
      const { project, flags } = await readFlagRequest(request, ctx);
      const body = flagsBody(shape, await service.evaluate(project.id, flags));
      return sendJson(reply, shape.withConfig ? { ...configFields(await hasActiveFlags(service, project.id)), ...body } : body);
    });
    scope.get('/flags', async (request, reply) => {
      const shape = flagsShape(queryOf(request));
      const body = flagsBody(shape, NO_FLAGS);
      return sendJson(reply, shape.withConfig ? { ...configFields(false), ...body } : body);
    });
  });
}
