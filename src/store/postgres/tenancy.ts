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
import { INVITE_COLUMNS, membershipFromRow, projectFromRow, userFromRow } from '../rows.js';
import { changes, isInt4, jsonValue, one, rows, transaction, type PgPool, type Queryable, type Row } from './database.js';

const keyFromRow = (row: Row): PersonalApiKey => ({
  id: row.id as string,
  user_id: row.user_id as number,
  label: row.label as string,
  mask_value: row.mask_value as string,
  scopes: jsonValue<string[] | null>(row.scopes, null),
  created_at: row.created_at as string,
  last_used_at: (row.last_used_at as string | null) ?? null,
});

export class PostgresTenancyStore implements TenancyStore {
  constructor(private readonly pool: PgPool) {}

  /** A new user's uuid and distinct id. */
  static newUserIds(): [string, string] {
    return [uuidv7(), randomUUID()];
  }

  static async insertMembership(db: Queryable, organizationId: string, userId: number, level: MembershipLevel): Promise<Membership> {
    const now = new Date().toISOString();
    const membership: Membership = { id: uuidv7(), organization_id: organizationId, user_id: userId, level, joined_at: now, updated_at: now };
    await db.query('INSERT INTO memberships (id, organization_id, user_id, level, joined_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)', [
      membership.id,
      organizationId,
      userId,
      level,
      now,
      now,
    ]);
    return membership;
  }

  async createOrganization(name: string): Promise<Organization> {
    const org = { id: uuidv7(), name, created_at: new Date().toISOString() };
    await this.pool.query('INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)', [org.id, org.name, org.created_at]);
    return org;
  }

  async createUser(input: { email: string; first_name?: string; last_name?: string }): Promise<User> {
    const row = await one(
      this.pool,
      `INSERT INTO users (uuid, distinct_id, email, first_name, last_name, is_email_verified, created_at)
       VALUES ($1, $2, $3, $4, $5, false, $6) RETURNING *`,
      [...PostgresTenancyStore.newUserIds(), input.email, input.first_name ?? '', input.last_name ?? '', new Date().toISOString()],
    );
    return userFromRow(row!);
  }

  async addMembership(organizationId: string, userId: number, level: MembershipLevel): Promise<Membership> {
    return PostgresTenancyStore.insertMembership(this.pool, organizationId, userId, level);
  }

  async createProject(input: { organizationId: string; name: string; apiToken: string }): Promise<Project> {
    const row = await one(
      this.pool,
      'INSERT INTO projects (uuid, organization_id, name, api_token, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING *',
      [uuidv7(), input.organizationId, input.name, input.apiToken, new Date().toISOString()],
    );
    return projectFromRow(row!);
  }

  async createPersonalApiKey(input: { userId: number; label: string; value: string; scopes: string[] | null }): Promise<PersonalApiKey> {
    const row = await one(
      this.pool,
      `INSERT INTO personal_api_keys (id, user_id, label, secure_value, mask_value, scopes, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [
        uuidv7(),
        input.userId,
        input.label,
        `sha256$${sha256Hex(input.value)}`,
        maskKey(input.value),
        input.scopes === null ? null : JSON.stringify(input.scopes),
        new Date().toISOString(),
      ],
    );
    return keyFromRow(row!);
  }

  async countOrganizations(): Promise<number> {
    return (await one<{ n: number }>(this.pool, 'SELECT count(*)::int AS n FROM organizations'))!.n;
  }

  async getOrganization(id: string): Promise<Organization | null> {
    return (await one<Organization>(this.pool, 'SELECT id, name, created_at FROM organizations WHERE id = $1', [id])) ?? null;
  }

  async getUser(id: number): Promise<User | null> {
    if (!isInt4(id)) return null;
    return this.user('id = $1', id);
  }

  async getUserByEmail(email: string): Promise<User | null> {
    return this.user('lower(email) = lower($1)', email);
  }

  async getUserByUuid(uuid: string): Promise<User | null> {
    return this.user('uuid = $1', uuid);
  }

  private async user(where: string, value: unknown): Promise<User | null> {
    const row = await one(this.pool, `SELECT * FROM users WHERE ${where}`, [value]);
    return row ? userFromRow(row) : null;
  }

  async getProject(id: number): Promise<Project | null> {
    if (!isInt4(id)) return null;
    const row = await one(this.pool, 'SELECT * FROM projects WHERE id = $1', [id]);
    return row ? projectFromRow(row) : null;
  }

  async getProjectByToken(token: string): Promise<Project | null> {
    const row = await one(this.pool, 'SELECT * FROM projects WHERE api_token = $1', [token]);
    return row ? projectFromRow(row) : null;
  }

  async findPersonalApiKeyByHash(sha256: string): Promise<{ key: PersonalApiKey; user: User } | null> {
    const row = await one(this.pool, 'SELECT * FROM personal_api_keys WHERE secure_value = $1', [`sha256$${sha256}`]);
    if (!row) return null;
    const user = await this.getUser(row.user_id as number);
    return user ? { key: keyFromRow(row), user } : null;
  }

  async listProjects(): Promise<Project[]> {
    return (await rows(this.pool, 'SELECT * FROM projects ORDER BY id')).map(projectFromRow);
  }

  async listMembershipsOfUser(userId: number): Promise<Membership[]> {
    return (await rows(this.pool, 'SELECT * FROM memberships WHERE user_id = $1 ORDER BY joined_at, id', [userId])).map(membershipFromRow);
  }

  async getMembership(organizationId: string, userId: number): Promise<Membership | null> {
    const row = await one(this.pool, 'SELECT * FROM memberships WHERE organization_id = $1 AND user_id = $2', [organizationId, userId]);
    return row ? membershipFromRow(row) : null;
  }

  async listProjectsOfOrganization(organizationId: string): Promise<Project[]> {
    return (await rows(this.pool, 'SELECT * FROM projects WHERE organization_id = $1 ORDER BY id', [organizationId])).map(projectFromRow);
  }

  async touchPersonalApiKey(id: string, at: string): Promise<void> {
    await this.pool.query('UPDATE personal_api_keys SET last_used_at = $1 WHERE id = $2', [at, id]);
  }

  async listPersonalApiKeys(userId: number): Promise<PersonalApiKey[]> {
    // Ids are UUIDv7: ordering by id breaks ties between keys created in the same millisecond.
    return (await rows(this.pool, 'SELECT * FROM personal_api_keys WHERE user_id = $1 ORDER BY created_at DESC, id DESC', [userId])).map(keyFromRow);
  }

  async deletePersonalApiKey(userId: number, id: string): Promise<boolean> {
    return (await changes(this.pool, 'DELETE FROM personal_api_keys WHERE id = $1 AND user_id = $2', [id, userId])) > 0;
  }

  async listMembers(organizationId: string, page: Page): Promise<PageOf<{ membership: Membership; user: User }>> {
    const count = (await one<{ n: number }>(this.pool, 'SELECT count(*)::int AS n FROM memberships WHERE organization_id = $1', [organizationId]))!.n;
    const found = await rows(
      this.pool,
      `SELECT m.id AS m_id, m.organization_id, m.user_id, m.level, m.joined_at, m.updated_at, u.*
       FROM memberships m JOIN users u ON u.id = m.user_id
       WHERE m.organization_id = $1 ORDER BY m.joined_at DESC, m.id DESC LIMIT $2 OFFSET $3`,
      [organizationId, page.limit, page.offset],
    );
    return { count, results: found.map((row) => ({ membership: membershipFromRow({ ...row, id: row.m_id }), user: userFromRow(row) })) };
  }

  async setMembershipLevel(organizationId: string, userId: number, level: MembershipLevel): Promise<Membership | null> {
    const row = await one(
      this.pool,
      'UPDATE memberships SET level = $1, updated_at = $2 WHERE organization_id = $3 AND user_id = $4 RETURNING *',
      [level, new Date().toISOString(), organizationId, userId],
    );
    return row ? membershipFromRow(row) : null;
  }

  async removeMembership(organizationId: string, userId: number): Promise<boolean> {
    return (await changes(this.pool, 'DELETE FROM memberships WHERE organization_id = $1 AND user_id = $2', [organizationId, userId])) > 0;
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
    await transaction(this.pool, async (client) => {
      await client.query('DELETE FROM organization_invites WHERE organization_id = $1 AND lower(target_email) = lower($2)', [input.organizationId, input.email]);
      await client.query(
        'INSERT INTO organization_invites (id, organization_id, target_email, level, created_by, created_at, token_hash) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        [invite.id, invite.organization_id, invite.target_email, invite.level, invite.created_by, invite.created_at, input.tokenHash],
      );
    });
    return invite;
  }

  async listInvites(organizationId: string, page: Page): Promise<PageOf<OrganizationInvite>> {
    const count = (await one<{ n: number }>(this.pool, 'SELECT count(*)::int AS n FROM organization_invites WHERE organization_id = $1', [organizationId]))!.n;
    const results = await rows<OrganizationInvite>(
      this.pool,
      `SELECT ${INVITE_COLUMNS} FROM organization_invites WHERE organization_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [organizationId, page.limit, page.offset],
    );
    return { count, results };
  }

  async deleteInvite(organizationId: string, id: string): Promise<boolean> {
    return (await changes(this.pool, 'DELETE FROM organization_invites WHERE organization_id = $1 AND id = $2', [organizationId, id])) > 0;
  }

  async findInvite(organizationId: string, email: string): Promise<OrganizationInvite | null> {
    const sql = `SELECT ${INVITE_COLUMNS} FROM organization_invites WHERE organization_id = $1 AND lower(target_email) = lower($2)`;
    return (await one<OrganizationInvite>(this.pool, sql, [organizationId, email])) ?? null;
  }

  async updateProject(id: number, patch: ProjectPatch): Promise<Project | null> {
    if (!isInt4(id)) return null;
    // week_start_day may be set back to null, so "not given" is its own parameter.
    const row = await one(
      this.pool,
      `UPDATE projects SET name = coalesce($1, name), timezone = coalesce($2, timezone), anonymize_ips = coalesce($3, anonymize_ips),
         week_start_day = CASE WHEN $4 THEN $5::integer ELSE week_start_day END, test_account_filters = coalesce($6::json, test_account_filters)
       WHERE id = $7 RETURNING *`,
      [
        patch.name ?? null,
        patch.timezone ?? null,
        patch.anonymize_ips ?? null,
        patch.week_start_day !== undefined,
        patch.week_start_day ?? null,
        patch.test_account_filters === undefined ? null : JSON.stringify(patch.test_account_filters),
        id,
      ],
    );
    return row ? projectFromRow(row) : null;
  }
}
