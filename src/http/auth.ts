/**
 * Authentication and access scoping for every /api/ route: a personal API key, or else the web
 * app's session cookie, leads to a user. Keys are looked up by their sha256; a user sees only
 * the organizations they belong to, and anything else is reported as 404 so that other
 * organizations' objects cannot even be probed.
 */
import type { FastifyRequest } from 'fastify';
import type { Membership, Organization, PersonalApiKey, Project, User } from '../store/types.js';
import { sessionUser } from '../sessions/session-auth.js';
import { hasPersonalKeyShape, sha256Hex } from '../util/keys.js';
import { numericId } from '../util/numeric-id.js';
import type { AppContext } from './context.js';
import { invalidPersonalKey, notFound, permissionDenied } from './errors.js';

export interface Principal {
  user: User;
  /** Null when signed in with a browser session, which may do whatever its user may. */
  key: PersonalApiKey | null;
}

export type KeyPrincipal = Principal & { key: PersonalApiKey };

export type ScopeAction = 'read' | 'write';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The key from `Authorization: Bearer`, else the `personal_api_key` query parameter. */
export function presentedKey(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header === 'string') return BEARER.exec(header)?.[1] ?? null;
  const query = request.query as Record<string, unknown> | undefined;
  const fromQuery = query?.personal_api_key;
  return typeof fromQuery === 'string' && fromQuery !== '' ? fromQuery : null;
}

const touched = new Map<string, number>();

/** The user and key a personal API key value belongs to, or null. */
export async function personalKeyOwner(ctx: AppContext, value: string | null): Promise<KeyPrincipal | null> {
  // Project keys (phc_) are never accepted, even if someone stored one as a personal key.
  if (!value || !hasPersonalKeyShape(value)) return null;
  return ctx.stores.meta.tenancy.findPersonalApiKeyByHash(sha256Hex(value));
}

export async function authenticate(request: FastifyRequest, ctx: AppContext): Promise<Principal> {
  const value = presentedKey(request);
  if (value === null) {
    const user = await sessionUser(request, ctx.sessions, ctx.config.publicUrl);
    if (user) return { user, key: null };
  }
  const found = await personalKeyOwner(ctx, value);
  if (!found) throw invalidPersonalKey();
  // Record last use at most once a minute per key: a write per request would be wasteful.
  const now = Date.now();
  if ((touched.get(found.key.id) ?? 0) < now - 60_000) {
    touched.set(found.key.id, now);
    await ctx.stores.meta.tenancy.touchPersonalApiKey(found.key.id, new Date(now).toISOString());
  }
  return found;
}

/** `*`, `<object>:<action>`; write implies read; a key without scopes is unrestricted. */
export function hasScope(scopes: string[] | null, object: string, action: ScopeAction): boolean {
  if (scopes === null || scopes.includes('*')) return true;
  if (scopes.includes(`${object}:${action}`)) return true;
  return action === 'read' && scopes.includes(`${object}:write`);
}

export function requireScope(principal: Principal, object: string, action: ScopeAction): void {
  if (!hasScope(principal.key?.scopes ?? null, object, action)) throw permissionDenied(`API key missing required scope '${object}:${action}'`);
}

/** The user's membership in an organization, or 404 when the organization is not theirs. */
export async function organizationFor(
  ctx: AppContext,
  principal: Principal,
  idOrAlias: string,
): Promise<{ organization: Organization; membership: Membership }> {
  const memberships = await ctx.stores.meta.tenancy.listMembershipsOfUser(principal.user.id);
  const membership = idOrAlias === '@current' ? memberships[0] : memberships.find((m) => m.organization_id === idOrAlias);
  if (!membership) throw notFound();
  const organization = await ctx.stores.meta.tenancy.getOrganization(membership.organization_id);
  if (!organization) throw notFound();
  return { organization, membership };
}

/** A project the user may see (through an organization membership), or 404. */
export async function projectFor(
  ctx: AppContext,
  principal: Principal,
  idOrAlias: string,
): Promise<{ project: Project; membership: Membership }> {
  const tenancy = ctx.stores.meta.tenancy;
  const memberships = await tenancy.listMembershipsOfUser(principal.user.id);
  if (idOrAlias === '@current') {
    for (const membership of memberships) {
      const [project] = await tenancy.listProjectsOfOrganization(membership.organization_id);
      if (project) return { project, membership };
    }
    throw notFound('Project not found.');
  }
  const projectId = numericId(idOrAlias);
  if (projectId === null) throw notFound('Project not found.');
  const project = await tenancy.getProject(projectId);
  const membership = project && memberships.find((m) => m.organization_id === project.organization_id);
  if (!project || !membership) throw notFound('Project not found.');
  return { project, membership };
}
