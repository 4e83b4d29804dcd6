import type { AccountStore, BrowserSession, InviteJoiner, Membership, Organization, OrganizationInvite, User } from '../types.js';
import type { Sqlite } from './database.js';
import { INVITE_COLUMNS, membershipFromRow, userFromRow } from '../rows.js';
import { SqliteTenancyStore } from './tenancy.js';

type Row = Record<string, unknown>;

/** Passwords, browser sessions and invite links on the metadata database. */
export class SqliteAccountStore implements AccountStore {
  constructor(
    private readonly db: Sqlite,
    private readonly tenancy: SqliteTenancyStore,
  ) {}

  async passwordHashOf(userId: number): Promise<string | null> {
    const row = this.db.prepare('SELECT password_hash FROM users WHERE id = ?').get(userId) as { password_hash: string | null } | undefined;
    return row?.password_hash ?? null;
  }

  async setPasswordHash(userId: number, hash: string): Promise<void> {
    this.db.prepare('UPDATE users SET password_hash = ? WHERE id = ?').run(hash, userId);
  }

  async updateProfile(userId: number, patch: { first_name?: string; last_name?: string }): Promise<User | null> {
    this.db
      .prepare('UPDATE users SET first_name = coalesce(?, first_name), last_name = coalesce(?, last_name) WHERE id = ?')
      .run(patch.first_name ?? null, patch.last_name ?? null, userId);
    return this.tenancy.getUser(userId);
  }

  async createSession(input: { userId: number; tokenHash: string; expiresAt: string }): Promise<BrowserSession> {
    const session = { user_id: input.userId, created_at: new Date().toISOString(), expires_at: input.expiresAt };
    this.db
      .prepare('INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)')
      .run(input.tokenHash, session.user_id, session.created_at, session.expires_at);
    return session;
  }

  async findSession(tokenHash: string, now: string): Promise<{ session: BrowserSession; user: User } | null> {
    const row = this.db
      .prepare(
        `SELECT s.user_id AS s_user_id, s.created_at AS s_created_at, s.expires_at AS s_expires_at, u.*
         FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ? AND s.expires_at > ?`,
      )
      .get(tokenHash, now) as Row | undefined;
    if (!row) return null;
    const session = { user_id: row.s_user_id as number, created_at: row.s_created_at as string, expires_at: row.s_expires_at as string };
    return { session, user: userFromRow(row) };
  }

  async deleteSession(tokenHash: string): Promise<void> {
    this.db.prepare('DELETE FROM sessions WHERE token_hash = ?').run(tokenHash);
  }

  async deleteSessionsOfUser(userId: number, keepTokenHash?: string): Promise<void> {
    this.db.prepare('DELETE FROM sessions WHERE user_id = ? AND token_hash IS NOT ?').run(userId, keepTokenHash ?? null);
  }

  async deleteExpiredSessions(now: string): Promise<number> {
    return this.db.prepare('DELETE FROM sessions WHERE expires_at <= ?').run(now).changes;
  }

  async findInviteByToken(tokenHash: string): Promise<{ invite: OrganizationInvite; organization: Organization } | null> {
    const invite = this.db.prepare(`SELECT ${INVITE_COLUMNS} FROM organization_invites WHERE token_hash = ?`).get(tokenHash) as OrganizationInvite | undefined;
    if (!invite) return null;
    const organization = await this.tenancy.getOrganization(invite.organization_id);
    return organization ? { invite, organization } : null;
  }

  async redeemInvite(tokenHash: string, joiner: InviteJoiner): Promise<{ user: User; membership: Membership; organization: Organization } | null> {
    const now = new Date().toISOString();
    const taken = this.db.transaction(() => {
      const invite = this.db.prepare(`DELETE FROM organization_invites WHERE token_hash = ? RETURNING ${INVITE_COLUMNS}`).get(tokenHash) as
        | OrganizationInvite
        | undefined;
      if (!invite) return null;
      let userId: number;
      if ('userId' in joiner) {
        userId = joiner.userId;
      } else {
        const info = this.db
          .prepare(
            `INSERT INTO users (uuid, distinct_id, email, first_name, last_name, is_email_verified, created_at, password_hash)
             VALUES (?, ?, ?, ?, '', 0, ?, ?)`,
          )
          .run(...SqliteTenancyStore.newUserIds(), invite.target_email, joiner.firstName, now, joiner.passwordHash);
        userId = Number(info.lastInsertRowid);
      }
      const existing = this.db.prepare('SELECT * FROM memberships WHERE organization_id = ? AND user_id = ?').get(invite.organization_id, userId) as Row | undefined;
      if (existing) return { userId, membership: membershipFromRow(existing), organizationId: invite.organization_id };
      const membership = SqliteTenancyStore.insertMembership(this.db, invite.organization_id, userId, invite.level);
      return { userId, membership, organizationId: invite.organization_id };
    })();
    if (!taken) return null;
    const user = userFromRow(this.db.prepare('SELECT * FROM users WHERE id = ?').get(taken.userId) as Row);
    const organization = (await this.tenancy.getOrganization(taken.organizationId))!;
    return { user, membership: taken.membership, organization };
  }
}
