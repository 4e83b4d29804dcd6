/**
 * `/flags` (https://posthog.com/docs/api/flags), what current SDKs call. The answer is
 * built by answer.ts (on a flag thread when configured); GET answers the same shape with no flags.
 */
import type { FastifyInstance } from 'fastify';
import type { FlagRemoteDeps } from './answerer.js';
import { flagsBody, flagsShape } from './answer.js';
import { NO_FLAGS } from './wire/format.js';
import { sendAnswer, sendJson } from './send.js';
import { withRawBodies } from '../../http/raw-body.js';
import { flagHttpRequest, queryOf } from './request.js';

export async function registerFlagsRoutes(app: FastifyInstance, { answers, geoip, bodyLimitBytes }: FlagRemoteDeps): Promise<void> {
  await withRawBodies(app, bodyLimitBytes, (scope) => {
    scope.post('/flags', async (request, reply) => sendAnswer(reply, await answers.answer('flags', flagHttpRequest(request, geoip))));
    scope.get('/flags', async (request, reply) => sendJson(reply, flagsBody(flagsShape(queryOf(request)), NO_FLAGS, false)));
  });
}
