/**
 * An in-memory TenancyStore for unit tests of the tenancy services' rules. It keeps the
 * contract of store/sqlite/tenancy.ts where the services depend on it: orderings, key hashing,
 * one pending invite per e-mail, and null/false for what is not there.
 */
import { randomUUID } from 'node:crypto';
import type { Membership, MembershipLevel, Organization, OrganizationInvite, Page, PageOf, PersonalApiKey, Project, ProjectPatch, TenancyStore, User } from '../../src/store/types.js';
import { sha256Hex } from '../../src/util/keys.js';

const now = () => new Date().toISOString();
const page = <T>(items: T[], { limit, offset }: Page): PageOf<T> => ({ count: items.length, results: items.slice(offset, offset + limit) });

export class FakeTenancyStore implements TenancyStore {
  readonly organizations = new Map<string, Organization>();
  readonly users: User[] = [];
  readonly memberships: Membership[] = [];
  readonly projects: Project[] = [];
  readonly keys: { key: PersonalApiKey; hash: string }[] = [];
  readonly invites: OrganizationInvite[] = [];
  /** The token hash of each invite's link, by invite id (never part of the invite itself). */
  readonly inviteTokenHashes = new Map<string, string>();

  async createOrganization(name: string) {
    const organization = { id: randomUUID(), name, created_at: now() };
    this.organizations.set(organization.id, organization);
    return organization;
  }
  async createUser(input: { email: string; first_name?: string; last_name?: string }) {
    const id = this.users.length + 1;
    const user: User = { id, uuid: randomUUID(), distinct_id: randomUUID(), first_name: input.first_name ?? '', last_name: input.last_name ?? '', email: input.email, is_email_verified: false, created_at: now() };
    this.users.push(user);
    return user;
  }
  async addMembership(organizationId: string, userId: number, level: MembershipLevel) {
    const membership: Membership = { id: randomUUID(), organization_id: organizationId, user_id: userId, level, joined_at: now(), updated_at: now() };
    this.memberships.push(membership);
    return membership;
  }
  async createProject(input: { organizationId: string; name: string; apiToken: string }) {
    const project: Project = { id: this.projects.length + 1, uuid: randomUUID(), organization_id: input.organizationId, name: input.name, api_token: input.apiToken, timezone: 'UTC', anonymize_ips: false, week_start_day: null, test_account_filters: [], created_at: now() };
    this.projects.push(project);
    return project;
  }
  async createPersonalApiKey(input: { userId: number; label: string; value: string; scopes: string[] | null }) {
    const key: PersonalApiKey = { id: randomUUID(), user_id: input.userId, label: input.label, mask_value: `${input.value.slice(0, 4)}...${input.value.slice(-4)}`, scopes: input.scopes, created_at: now(), last_used_at: null };
    this.keys.push({ key, hash: sha256Hex(input.value) });
    return key;
  }
  async countOrganizations() {
    return this.organizations.size;
  }
  async getOrganization(id: string) {
    return this.organizations.get(id) ?? null;
  }
  async getUser(id: number) {
    return this.users.find((u) => u.id === id) ?? null;
  }
  async getUserByEmail(email: string) {
    return this.users.find((u) => u.email.toLowerCase() === email.toLowerCase()) ?? null;
  }
  async getUserByUuid(uuid: string) {
    return this.users.find((u) => u.uuid === uuid) ?? null;
  }
  async getProject(id: number) {
    return this.projects.find((p) => p.id === id) ?? null;
  }
  async getProjectByToken(token: string) {
    return this.projects.find((p) => p.api_token === token) ?? null;
  }
  async findPersonalApiKeyByHash(hash: string) {
    const found = this.keys.find((k) => k.hash === hash);
    const user = found && (await this.getUser(found.key.user_id));
    return found && user ? { key: found.key, user } : null;
  }
  async listProjects() {
    return [...this.projects];
  }
  async listMembershipsOfUser(userId: number) {
    return this.memberships.filter((m) => m.user_id === userId);
  }
  async getMembership(organizationId: string, userId: number) {
    return this.memberships.find((m) => m.organization_id === organizationId && m.user_id === userId) ?? null;
  }
  async listProjectsOfOrganization(organizationId: string) {
    return this.projects.filter((p) => p.organization_id === organizationId);
  }
  async touchPersonalApiKey(id: string, at: string) {
    const found = this.keys.find((k) => k.key.id === id);
    if (found) found.key.last_used_at = at;
  }
  async listPersonalApiKeys(userId: number) {
    return this.keys.filter((k) => k.key.user_id === userId).map((k) => k.key).reverse();
  }
  async deletePersonalApiKey(userId: number, id: string) {
    const index = this.keys.findIndex((k) => k.key.id === id && k.key.user_id === userId);
    if (index < 0) return false;
    this.keys.splice(index, 1);
    return true;
  }
  async listMembers(organizationId: string, p: Page) {
    const members = this.memberships
      .filter((m) => m.organization_id === organizationId)
      .reverse()
      .map((membership) => ({ membership, user: this.users.find((u) => u.id === membership.user_id)! }));
    return page(members, p);
  }
  async setMembershipLevel(organizationId: string, userId: number, level: MembershipLevel) {
    const membership = await this.getMembership(organizationId, userId);
    if (!membership) return null;
    membership.level = level;
    membership.updated_at = now();
    return membership;
  }
  async removeMembership(organizationId: string, userId: number) {
    const index = this.memberships.findIndex((m) => m.organization_id === organizationId && m.user_id === userId);
    if (index < 0) return false;
    this.memberships.splice(index, 1);
    return true;
  }
  async createInvite(input: { organizationId: string; email: string; level: MembershipLevel; createdBy: number; tokenHash: string }) {
    const existing = this.invites.findIndex((i) => i.organization_id === input.organizationId && i.target_email === input.email);
    if (existing >= 0) this.invites.splice(existing, 1);
    const invite: OrganizationInvite = { id: randomUUID(), organization_id: input.organizationId, target_email: input.email, level: input.level, created_by: input.createdBy, created_at: now() };
    this.invites.push(invite);
    this.inviteTokenHashes.set(invite.id, input.tokenHash);
    return invite;
  }
  async listInvites(organizationId: string, p: Page) {
    return page(this.invites.filter((i) => i.organization_id === organizationId).reverse(), p);
  }
  async deleteInvite(organizationId: string, id: string) {
    const index = this.invites.findIndex((i) => i.organization_id === organizationId && i.id === id);
    if (index < 0) return false;
    this.invites.splice(index, 1);
    return true;
  }
  async findInvite(organizationId: string, email: string) {
    return this.invites.find((i) => i.organization_id === organizationId && i.target_email === email) ?? null;
  }
  async updateProject(id: number, patch: ProjectPatch) {
    const project = await this.getProject(id);
    if (!project) return null;
    for (const [key, value] of Object.entries(patch)) if (value !== undefined) Object.assign(project, { [key]: value });
    return project;
  }
}
