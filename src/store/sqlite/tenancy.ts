import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type {
  Membership,
  MembershipLevel,
  Organization,
  OrganizationInvite,
  Page,
  PageOf,
  PersonalApiKey,
  Project,
  ProjectPatch,
  TenancyStore,
  User,
} from '../types.js';
import { maskKey, sha256Hex } from '../../util/keys.js';
import { parseJson, type Sqlite } from './database.js';
import { INVITE_COLUMNS, membershipFromRow, projectFromRow, userFromRow } from '../rows.js';

type Row = Record<string, unknown>;

export const keyFromRow = (row: Row): PersonalApiKey => ({
  id: row.id as string,
  user_id: row.user_id as number,
  label: row.label as string,
  mask_value: row.mask_value as string,
  scopes: parseJson<string[] | null>(row.scopes, null),
  created_at: row.created_at as string,
  last_used_at: (row.last_used_at as string | null) ?? null,
});

export class SqliteTenancyStore implements TenancyStore {
  constructor(private readonly db: Sqlite) {}

  /** A new user's uuid and distinct id. */
  static newUserIds(): [string, string] {
    return [uuidv7(), randomUUID()];
  }

  static insertMembership(db: Sqlite, organizationId: string, userId: number, level: MembershipLevel): Membership {
    const now = new Date().toISOString();
    const membership: Membership = { id: uuidv7(), organization_id: organizationId, user_id: userId, level, joined_at: now, updated_at: now };
    db.prepare('INSERT INTO memberships (id, organization_id, user_id, level, joined_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(membership.id, organizationId, userId, level, now, now);
    return membership;
  }

  async createOrganization(name: string): Promise<Organization> {
    const org = { id: uuidv7(), name, created_at: new Date().toISOString() };
    this.db.prepare('INSERT INTO organizations (id, name, created_at) VALUES (?, ?, ?)').run(org.id, org.name, org.created_at);
    return org;
  }

  async createUser(input: { email: string; first_name?: string; last_name?: string }): Promise<User> {
    const now = new Date().toISOString();
    const info = this.db
      .prepare(
        'INSERT INTO users (uuid, distinct_id, email, first_name, last_name, is_email_verified, created_at) VALUES (?, ?, ?, ?, ?, 0, ?)',
      )
      .run(...SqliteTenancyStore.newUserIds(), input.email, input.first_name ?? '', input.last_name ?? '', now);
    return (await this.getUser(Number(info.lastInsertRowid)))!;
  }

  async addMembership(organizationId: string, userId: number, level: MembershipLevel): Promise<Membership> {
    return SqliteTenancyStore.insertMembership(this.db, organizationId, userId, level);
  }

  async createProject(input: { organizationId: string; name: string; apiToken: string }): Promise<Project> {
    const info = this.db
      .prepare('INSERT INTO projects (uuid, organization_id, name, api_token, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(uuidv7(), input.organizationId, input.name, input.apiToken, new Date().toISOString());
    return (await this.getProject(Number(info.lastInsertRowid)))!;
  }

  async createPersonalApiKey(input: { userId: number; label: string; value: string; scopes: string[] | null }): Promise<PersonalApiKey> {
    const id = uuidv7();
    this.db
      .prepare(
        'INSERT INTO personal_api_keys (id, user_id, label, secure_value, mask_value, scopes, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        id,
        input.userId,
        input.label,
        `sha256$${sha256Hex(input.value)}`,
        maskKey(input.value),
        input.scopes === null ? null : JSON.stringify(input.scopes),
        new Date().toISOString(),
      );
    return keyFromRow(this.db.prepare('SELECT * FROM personal_api_keys WHERE id = ?').get(id) as Row);
  }

  async countOrganizations(): Promise<number> {
    return (this.db.prepare('SELECT count(*) AS n FROM organizations').get() as { n: number }).n;
  }

  async getOrganization(id: string): Promise<Organization | null> {
    return (this.db.prepare('SELECT id, name, created_at FROM organizations WHERE id = ?').get(id) as Organization | undefined) ?? null;
  }

  async getUser(id: number): Promise<User | null> {
    const row = this.db.prepare('SELECT * FROM users WHERE id = ?').get(id) as Row | undefined;
    return row ? userFromRow(row) : null;
  }

  async getUserByEmail(email: string): Promise<User | null> {
    const row = this.db.prepare('SELECT * FROM users WHERE email = ?').get(email) as Row | undefined;
    return row ? userFromRow(row) : null;
  }

  async getProject(id: number): Promise<Project | null> {
    const row = this.db.prepare('SELECT * FROM projects WHERE id = ?').get(id) as Row | undefined;
    return row ? projectFromRow(row) : null;
  }

  async getProjectByToken(token: string): Promise<Project | null> {
    const row = this.db.prepare('SELECT * FROM projects WHERE api_token = ?').get(token) as Row | undefined;
    return row ? projectFromRow(row) : null;
  }

  async findPersonalApiKeyByHash(sha256: string): Promise<{ key: PersonalApiKey; user: User } | null> {
    const row = this.db.prepare('SELECT * FROM personal_api_keys WHERE secure_value = ?').get(`sha256$${sha256}`) as Row | undefined;
    if (!row) return null;
    const user = await this.getUser(row.user_id as number);
    return user ? { key: keyFromRow(row), user } : null;
  }

  async listProjects(): Promise<Project[]> {
    return (this.db.prepare('SELECT * FROM projects ORDER BY id').all() as Row[]).map(projectFromRow);
  }

  async listMembershipsOfUser(userId: number): Promise<Membership[]> {
    return (this.db.prepare('SELECT * FROM memberships WHERE user_id = ? ORDER BY joined_at, id').all(userId) as Row[]).map(membershipFromRow);
  }

  async getMembership(organizationId: string, userId: number): Promise<Membership | null> {
    const row = this.db.prepare('SELECT * FROM memberships WHERE organization_id = ? AND user_id = ?').get(organizationId, userId) as Row | undefined;
    return row ? membershipFromRow(row) : null;
  }

  async listProjectsOfOrganization(organizationId: string): Promise<Project[]> {
    return (this.db.prepare('SELECT * FROM projects WHERE organization_id = ? ORDER BY id').all(organizationId) as Row[]).map(projectFromRow);
  }

  async touchPersonalApiKey(id: string, at: string): Promise<void> {
    this.db.prepare('UPDATE personal_api_keys SET last_used_at = ? WHERE id = ?').run(at, id);
  }

  async getUserByUuid(uuid: string): Promise<User | null> {
    const row = this.db.prepare('SELECT * FROM users WHERE uuid = ?').get(uuid) as Row | undefined;
    return row ? userFromRow(row) : null;
  }

  async listPersonalApiKeys(userId: number): Promise<PersonalApiKey[]> {
    // Ids are UUIDv7: ordering by id breaks ties between keys created in the same millisecond.
    const rows = this.db.prepare('SELECT * FROM personal_api_keys WHERE user_id = ? ORDER BY created_at DESC, id DESC').all(userId) as Row[];
    return rows.map(keyFromRow);
  }

  async deletePersonalApiKey(userId: number, id: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM personal_api_keys WHERE id = ? AND user_id = ?').run(id, userId).changes > 0;
  }

  async listMembers(organizationId: string, page: Page): Promise<PageOf<{ membership: Membership; user: User }>> {
    const count = (this.db.prepare('SELECT count(*) AS n FROM memberships WHERE organization_id = ?').get(organizationId) as { n: number }).n;
    const rows = this.db
      .prepare(
        `SELECT m.id AS m_id, m.organization_id, m.user_id, m.level, m.joined_at, m.updated_at, u.*
         FROM memberships m JOIN users u ON u.id = m.user_id
         WHERE m.organization_id = ? ORDER BY m.joined_at DESC, m.id DESC LIMIT ? OFFSET ?`,
      )
      .all(organizationId, page.limit, page.offset) as Row[];
    return { count, results: rows.map((row) => ({ membership: membershipFromRow({ ...row, id: row.m_id }), user: userFromRow(row) })) };
  }

  async setMembershipLevel(organizationId: string, userId: number, level: MembershipLevel): Promise<Membership | null> {
    this.db
      .prepare('UPDATE memberships SET level = ?, updated_at = ? WHERE organization_id = ? AND user_id = ?')
      .run(level, new Date().toISOString(), organizationId, userId);
    return this.getMembership(organizationId, userId);
  }

  async removeMembership(organizationId: string, userId: number): Promise<boolean> {
    return this.db.prepare('DELETE FROM memberships WHERE organization_id = ? AND user_id = ?').run(organizationId, userId).changes > 0;
  }

  async createInvite(input: { organizationId: string; email: string; level: MembershipLevel; createdBy: number; tokenHash: string }): Promise<OrganizationInvite> {
    const invite: OrganizationInvite = {
      id: uuidv7(),
      organization_id: input.organizationId,
      target_email: input.email,
      level: input.level,
      created_by: input.createdBy,
      created_at: new Date().toISOString(),
    };
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM organization_invites WHERE organization_id = ? AND target_email = ?').run(input.organizationId, input.email);
      this.db
        .prepare('INSERT INTO organization_invites (id, organization_id, target_email, level, created_by, created_at, token_hash) VALUES (?, ?, ?, ?, ?, ?, ?)')
        .run(invite.id, invite.organization_id, invite.target_email, invite.level, invite.created_by, invite.created_at, input.tokenHash);
    })();
    return invite;
  }

  async listInvites(organizationId: string, page: Page): Promise<PageOf<OrganizationInvite>> {
    const count = (this.db.prepare('SELECT count(*) AS n FROM organization_invites WHERE organization_id = ?').get(organizationId) as { n: number }).n;
    const results = this.db
      .prepare(`SELECT ${INVITE_COLUMNS} FROM organization_invites WHERE organization_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`)
      .all(organizationId, page.limit, page.offset) as OrganizationInvite[];
    return { count, results };
  }

  async deleteInvite(organizationId: string, id: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM organization_invites WHERE organization_id = ? AND id = ?').run(organizationId, id).changes > 0;
  }

  async findInvite(organizationId: string, email: string): Promise<OrganizationInvite | null> {
    const row = this.db.prepare(`SELECT ${INVITE_COLUMNS} FROM organization_invites WHERE organization_id = ? AND target_email = ?`).get(organizationId, email);
    return (row as OrganizationInvite | undefined) ?? null;
  }

  async updateProject(id: number, patch: ProjectPatch): Promise<Project | null> {
    const current = await this.getProject(id);
    if (!current) return null;
    // week_start_day may be set back to null, so undefined (not given) and null differ.
    const weekStartDay = patch.week_start_day === undefined ? current.week_start_day : patch.week_start_day;
    this.db
      .prepare('UPDATE projects SET name = ?, timezone = ?, anonymize_ips = ?, week_start_day = ?, test_account_filters = ? WHERE id = ?')
      .run(
        patch.name ?? current.name,
        patch.timezone ?? current.timezone,
        (patch.anonymize_ips ?? current.anonymize_ips) ? 1 : 0,
        weekStartDay,
        JSON.stringify(patch.test_account_filters ?? current.test_account_filters),
        id,
      );
    return this.getProject(id);
  }
}
