/**
 * Remote config for posthog-js (remote-config.ts): `/array/<token>/config` as JSON and
 * `/array/<token>/config.js` as the script the SDK loads first.
 */
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../kernel/errors.js';
import type { FlagService } from '../evaluation/index.js';
import { hasActiveFlags, remoteConfig } from './remote-config.js';
import type { ProjectLookup } from './request.js';

/** JSON that is also safe inside a script: no `</script>`, no JS-only line terminators. */
const scriptJson = (value: unknown) =>
  JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');

export interface RemoteConfigRouteDeps {
  flags: FlagService;
  projects: ProjectLookup;
}

export async function registerRemoteConfigRoutes(app: FastifyInstance, { flags: service, projects }: RemoteConfigRouteDeps): Promise<void> {
  const configFor = async (token: string) => {
    const project = await projects.byToken(token);
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
