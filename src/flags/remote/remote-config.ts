/**
 * Remote config for posthog-js (wire protocol §2.4): `/array/<token>/config` as JSON and
 * `/array/<token>/config.js` as the script the SDK loads first. The same fields ride along on
 * `/flags` answers that ask for config.
 */
import type { FastifyInstance } from 'fastify';
import type { FlagService } from '../evaluation/index.js';
import type { AppContext } from '../../app-context.js';
import { notFound } from '../../kernel/errors.js';

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

/** JSON that is also safe inside a script: no `</script>`, no JS-only line terminators. */
const scriptJson = (value: unknown) =>
  JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');

export async function registerRemoteConfigRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const service = ctx.flags;
  const configFor = async (token: string) => {
    const project = await ctx.projects.byToken(token);
    if (!project) throw notFound('Unknown project token.');
    return remoteConfig(await hasActiveFlags(service, project.id));
  };

  app.get<{ Params: { token: string } }>('/array/:token/config', async (request) => configFor(request.params.token));

  app.get<{ Params: { token: string } }>('/array/:token/config.js', async (request, reply) => {
    const config = await configFor(request.params.token);
    const token = scriptJson(request.params.token);
    const script =
      '(function(){ window._POSTHOG_REMOTE_CONFIG = window._POSTHOG_REMOTE_CONFIG || {}; ' +
      `window._POSTHOG_REMOTE_CONFIG[${token}] = ${scriptJson({ config, siteApps: [] })}; })()`;
    return reply.type('application/javascript; charset=utf-8').send(script);
  });
}
