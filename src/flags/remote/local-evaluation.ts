/**
 * Flag definitions for server SDKs' local evaluation
 * (https://posthog.com/docs/feature-flags/local-evaluation; PostHog's
 * `posthog/models/feature_flag/local_evaluation.py`): `/flags/definitions` (posthog-node 5) and the
 * older `/api/feature_flag/local_evaluation` routes, with an ETag so that polls of unchanged flags
 * cost a 304. Also the remote-config payload posthog-node's `getRemoteConfigPayload()` reads.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { indexFlags, withDependencyChains } from '../engine/index.js';
import type { FlagStore, Project, StoredFlag, TenancyStore } from '../../store/types.js';
import type { ApiKit, Principal } from '../../http/auth.js';
import type { FlagService } from '../evaluation/index.js';
import { notFound } from '../../kernel/errors.js';
import { apiRoute } from '../../http/route.js';
import { encodePayload } from './wire/format.js';
import { projectForToken, type ProjectLookup } from './request.js';

type TokenQuery = { token?: string; send_cohorts?: string };

const tokenQuery = {
  type: 'object',
  properties: {
    token: { type: 'string', description: "Project API key; default: the key's current project" },
    send_cohorts: { type: 'string', description: 'Accepted; property-only cohorts the flags name are always sent inline' },
  },
};

const definitionsResponse = {
  type: 'object',
  description: '{flags: [...], group_type_mapping: {"<index>": "<type>"}, cohorts: {"<id>": property group}}; 304 when If-None-Match matches the ETag',
  properties: { flags: { type: 'array' }, group_type_mapping: { type: 'object' }, cohorts: { type: 'object' } },
};

export interface LocalEvaluationDeps {
  api: ApiKit;
  flags: FlagService;
  projects: ProjectLookup;
  tenancy: Pick<TenancyStore, 'getMembership'>;
  groupTypes: Pick<FlagStore, 'groupTypeMapping'>;
}

/**
 * The project a token names, provided the key's user belongs to its organization. Any other
 * project is 404, as everywhere in the API (PostHog answers 403 here; one answer for every
 * route that names another tenant's project is simpler to rely on).
 */
async function projectOfToken(deps: LocalEvaluationDeps, principal: Principal, token: string | undefined): Promise<Project> {
  if (!token) return (await deps.api.access.projectFor(principal, '@current')).project;
  const project = await projectForToken(deps.projects, token);
  const membership = await deps.tenancy.getMembership(project.organization_id, principal.user.id);
  if (!membership) throw notFound('Project not found.');
  return project;
}

/** Inactive flags are included (SDKs skip them); flag filters carry their dependency chains. */
function minimalFlag(flag: StoredFlag) {
  return {
    id: flag.id,
    team_id: flag.project_id,
    name: flag.name,
    key: flag.key,
    filters: flag.filters,
    deleted: flag.deleted,
    active: flag.active,
    ensure_experience_continuity: flag.ensure_experience_continuity,
    has_encrypted_payloads: false,
    version: flag.version,
    evaluation_runtime: 'all',
    bucketing_identifier: null,
    has_experiment: false,
  };
}

const etagOf = (body: string) => `"${createHash('sha1').update(body).digest('hex')}"`;

/** `If-None-Match` holds one or more (possibly weak) tags, or `*`. */
function matches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const value = tag.trim().replace(/^W\//, '');
    return value === '*' || value === etag;
  });
}

export async function registerFlagDefinitionRoutes(app: FastifyInstance, deps: LocalEvaluationDeps): Promise<void> {
  const { api, flags: service } = deps;
  const base = { scope: 'feature_flag', tag: 'feature_flags', method: 'GET' as const };

  const send = async (project: Project, request: FastifyRequest, reply: FastifyReply) => {
    const { all: flags, cohorts } = await service.cache.get(project.id);
    const index = indexFlags(flags);
    const body = JSON.stringify({
      flags: flags.map((flag) => minimalFlag(withDependencyChains(flag, index) as StoredFlag)),
      group_type_mapping: await deps.groupTypes.groupTypeMapping(project.id),
      cohorts: cohorts?.inlineDefinitions ?? {},
    });
    const etag = etagOf(body);
    reply.header('etag', etag);
    if (matches(request.headers['if-none-match'], etag)) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(body);
  };

  for (const url of ['/flags/definitions', '/api/feature_flag/local_evaluation']) {
    apiRoute<{ Querystring: TokenQuery }>(app, api, {
      ...base,
      url,
      summary: 'Flag definitions for local evaluation in server SDKs (personal API key; token names the project)',
      querystring: tokenQuery,
      response: { 200: definitionsResponse },
      handler: async (request, principal, reply) => send(await projectOfToken(deps, principal, request.query.token), request, reply),
    });
  }

  apiRoute<{ Params: { project_id: string } }>(app, api, {
    ...base,
    url: '/api/projects/:project_id/feature_flags/local_evaluation',
    summary: 'Flag definitions of a project for local evaluation in server SDKs',
    response: { 200: definitionsResponse },
    handler: async (request, principal, reply) => send((await api.access.projectFor(principal, request.params.project_id)).project, request, reply),
  });

  apiRoute<{ Params: { project_id: string; id: string }; Querystring: TokenQuery }>(app, api, {
    ...base,
    url: '/api/projects/:project_id/feature_flags/:id/remote_config',
    summary: 'The "true" payload of a flag (by key or id), as a JSON-encoded string; null when it has none',
    querystring: tokenQuery,
    response: { 200: { type: ['string', 'null'] } },
    handler: async (request, principal, reply) => {
      const { token } = request.query;
      const project = token ? await projectOfToken(deps, principal, token) : (await api.access.projectFor(principal, request.params.project_id)).project;
      const { all, byKey } = await service.cache.get(project.id);
      const ref = request.params.id;
      const flag = byKey.get(ref) ?? all.find((candidate) => String(candidate.id) === ref);
      if (!flag) throw notFound();
      // posthog-node parses a string answer once more: the payload goes out double-encoded.
      const payload = encodePayload(flag.filters.payloads?.true) ?? null;
      return reply.type('application/json; charset=utf-8').send(JSON.stringify(payload));
    },
  });
}
