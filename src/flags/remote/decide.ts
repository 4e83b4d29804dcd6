/**
 * `/decide` (PostHog's `posthog/api/decide.py` in github.com/PostHog/posthog): the legacy
 * evaluation endpoint of older SDKs. The answer is built by answer.ts (on a flag thread when
 * configured); GET answers the same shape with no flags.
 */
import type { FastifyInstance } from 'fastify';
import type { FlagRemoteDeps } from './answerer.js';
import { decideBody, decideVersion } from './answer.js';
import { NO_FLAGS } from './wire/format.js';
import { sendAnswer, sendJson } from './send.js';
import { withRawBodies } from '../../http/raw-body.js';
import { flagHttpRequest, queryOf } from './request.js';

export async function registerDecideRoutes(app: FastifyInstance, { answers, geoip, bodyLimitBytes }: FlagRemoteDeps): Promise<void> {
  await withRawBodies(app, bodyLimitBytes, (scope) => {
    scope.post('/decide', async (request, reply) => sendAnswer(reply, await answers.answer('decide', flagHttpRequest(request, geoip))));
    scope.get('/decide', async (request, reply) => sendJson(reply, decideBody(decideVersion(queryOf(request).v), NO_FLAGS)));
  });
}
