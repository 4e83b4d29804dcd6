/**
 * Authentication and access scoping for every /api/ route: a personal API key, or else the web
 * app's browser session, leads to a user. Keys are looked up by their sha256; a user sees only
 * the organizations they belong to, and anything else is reported as 404 so that other
 * organizations' objects cannot even be probed.
 */
import type { FastifyRequest } from 'fastify';
import type { Membership, Organization, PersonalApiKey, Project, TenancyStore, User } from '../store/types.js';
import { hasPersonalKeyShape, sha256Hex } from '../util/keys.js';
import { numericId } from '../util/numeric-id.js';
import { invalidPersonalKey, notFound, permissionDenied } from '../kernel/errors.js';

export interface Principal {
  user: User;
  /** Null when signed in with a browser session, which may do whatever its user may. */
  key: PersonalApiKey | null;
}

export type KeyPrincipal = Principal & { key: PersonalApiKey };

/**
 * The second way in: a browser session (src/sessions/ implements it). Asked only when a
 * request presents no personal API key.
 */
export interface SessionAuthenticator {
  /** The session token a request carries, or null. */
  tokenOf(request: FastifyRequest): string | null;
  /** The signed-in user, or null without a usable session; throws when a change lacks its CSRF token. */
  userOf(request: FastifyRequest): Promise<User | null>;
}

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

/** Who a request is, and what it may see: every /api/ route asks here. */
export class ApiAccess {
  /** When each key's last use was recorded (ms). */
  private readonly touched = new Map<string, number>();

  constructor(
    private readonly tenancy: TenancyStore,
    private readonly sessions: SessionAuthenticator | null = null,
  ) {}

  /** What a request authenticates with, key or session token (the rate limit counts requests under it). */
  credentialOf(request: FastifyRequest): string | null {
    return presentedKey(request) ?? this.sessions?.tokenOf(request) ?? null;
  }

  /** The user and key a personal API key value belongs to, or null. */
  async personalKeyOwner(value: string | null): Promise<KeyPrincipal | null> {
    // Project keys (phc_) are never accepted, even if someone stored one as a personal key.
    if (!value || !hasPersonalKeyShape(value)) return null;
    return this.tenancy.findPersonalApiKeyByHash(sha256Hex(value));
  }

  async authenticate(request: FastifyRequest): Promise<Principal> {
    const value = presentedKey(request);
    if (value === null && this.sessions) {
      const user = await this.sessions.userOf(request);
      if (user) return { user, key: null };
    }
    const found = await this.personalKeyOwner(value);
    if (!found) throw invalidPersonalKey();
    // Record last use at most once a minute per key: a write per request would be wasteful.
    const now = Date.now();
    if ((this.touched.get(found.key.id) ?? 0) < now - 60_000) {
      this.touched.set(found.key.id, now);
      await this.tenancy.touchPersonalApiKey(found.key.id, new Date(now).toISOString());
    }
    return found;
  }

  /** The user's membership in an organization, or 404 when the organization is not theirs. */
  async organizationFor(principal: Principal, idOrAlias: string): Promise<{ organization: Organization; membership: Membership }> {
    const memberships = await this.tenancy.listMembershipsOfUser(principal.user.id);
    const membership = idOrAlias === '@current' ? memberships[0] : memberships.find((m) => m.organization_id === idOrAlias);
    if (!membership) throw notFound();
    const organization = await this.tenancy.getOrganization(membership.organization_id);
    if (!organization) throw notFound();
    return { organization, membership };
  }

  /** A project the user may see (through an organization membership), or 404. */
  async projectFor(principal: Principal, idOrAlias: string): Promise<{ project: Project; membership: Membership }> {
    const memberships = await this.tenancy.listMembershipsOfUser(principal.user.id);
    if (idOrAlias === '@current') {
      for (const membership of memberships) {
        const [project] = await this.tenancy.listProjectsOfOrganization(membership.organization_id);
        if (project) return { project, membership };
      }
      throw notFound('Project not found.');
    }
    const projectId = numericId(idOrAlias);
    if (projectId === null) throw notFound('Project not found.');
    const project = await this.tenancy.getProject(projectId);
    const membership = project && memberships.find((m) => m.organization_id === project.organization_id);
    if (!project || !membership) throw notFound('Project not found.');
    return { project, membership };
  }
}

/** What every /api/ route module is given to declare its routes and build its answers. */
export interface ApiKit {
  access: ApiAccess;
  /** Base URL of pagination links; null takes it from the request. */
  publicUrl: string | null;
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
