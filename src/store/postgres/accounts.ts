import type { AccountStore, BrowserSession, InviteJoiner, Membership, Organization, OrganizationInvite, User } from '../types.js';
import { INVITE_COLUMNS, membershipFromRow, userFromRow } from '../rows.js';
import { changes, one, transaction, type PgPool } from './database.js';
import { PostgresTenancyStore } from './tenancy.js';

/** Passwords, browser sessions and invite links in PostgreSQL. */
export class PostgresAccountStore implements AccountStore {
  constructor(
    private readonly pool: PgPool,
    private readonly tenancy: PostgresTenancyStore,
  ) {}

  async passwordHashOf(userId: number): Promise<string | null> {
    return (await one<{ password_hash: string | null }>(this.pool, 'SELECT password_hash FROM users WHERE id = $1', [userId]))?.password_hash ?? null;
  }

  async setPasswordHash(userId: number, hash: string): Promise<void> {
    await this.pool.query('UPDATE users SET password_hash = $1 WHERE id = $2', [hash, userId]);
  }

  async updateProfile(userId: number, patch: { first_name?: string; last_name?: string }): Promise<User | null> {
    const row = await one(
      this.pool,
      'UPDATE users SET first_name = coalesce($1, first_name), last_name = coalesce($2, last_name) WHERE id = $3 RETURNING *',
      [patch.first_name ?? null, patch.last_name ?? null, userId],
    );
    return row ? userFromRow(row) : null;
  }

  async createSession(input: { userId: number; tokenHash: string; expiresAt: string }): Promise<BrowserSession> {
    const session = { user_id: input.userId, created_at: new Date().toISOString(), expires_at: input.expiresAt };
    await this.pool.query('INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)', [
      input.tokenHash,
      session.user_id,
      session.created_at,
      session.expires_at,
    ]);
    return session;
  }

  async findSession(tokenHash: string, now: string): Promise<{ session: BrowserSession; user: User } | null> {
    const row = await one(
      this.pool,
      `SELECT s.user_id AS s_user_id, s.created_at AS s_created_at, s.expires_at AS s_expires_at, u.*
       FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1 AND s.expires_at > $2`,
      [tokenHash, now],
    );
    if (!row) return null;
    const session = { user_id: row.s_user_id as number, created_at: row.s_created_at as string, expires_at: row.s_expires_at as string };
    return { session, user: userFromRow(row) };
  }

  async deleteSession(tokenHash: string): Promise<void> {
    await this.pool.query('DELETE FROM sessions WHERE token_hash = $1', [tokenHash]);
  }

  async deleteSessionsOfUser(userId: number, keepTokenHash?: string): Promise<void> {
    await this.pool.query('DELETE FROM sessions WHERE user_id = $1 AND token_hash IS DISTINCT FROM $2', [userId, keepTokenHash ?? null]);
  }

  async deleteExpiredSessions(now: string): Promise<number> {
    return changes(this.pool, 'DELETE FROM sessions WHERE expires_at <= $1', [now]);
  }

  async findInviteByToken(tokenHash: string): Promise<{ invite: OrganizationInvite; organization: Organization } | null> {
    const invite = await one<OrganizationInvite>(this.pool, `SELECT ${INVITE_COLUMNS} FROM organization_invites WHERE token_hash = $1`, [tokenHash]);
    if (!invite) return null;
    const organization = await this.tenancy.getOrganization(invite.organization_id);
    return organization ? { invite, organization } : null;
  }

  /** The DELETE … RETURNING takes the invite: a second node redeeming it at once finds nothing. */
  async redeemInvite(tokenHash: string, joiner: InviteJoiner): Promise<{ user: User; membership: Membership; organization: Organization } | null> {
    const now = new Date().toISOString();
    const taken = await transaction(this.pool, async (client) => {
      const invite = await one<OrganizationInvite>(client, `DELETE FROM organization_invites WHERE token_hash = $1 RETURNING ${INVITE_COLUMNS}`, [tokenHash]);
      if (!invite) return null;
      let user: User;
      if ('userId' in joiner) {
        user = userFromRow((await one(client, 'SELECT * FROM users WHERE id = $1', [joiner.userId]))!);
      } else {
        const row = await one(
          client,
          `INSERT INTO users (uuid, distinct_id, email, first_name, last_name, is_email_verified, created_at, password_hash)
           VALUES ($1, $2, $3, $4, '', false, $5, $6) RETURNING *`,
          [...PostgresTenancyStore.newUserIds(), invite.target_email, joiner.firstName, now, joiner.passwordHash],
        );
        user = userFromRow(row!);
      }
      const existing = await one(client, 'SELECT * FROM memberships WHERE organization_id = $1 AND user_id = $2', [invite.organization_id, user.id]);
      const membership = existing
        ? membershipFromRow(existing)
        : await PostgresTenancyStore.insertMembership(client, invite.organization_id, user.id, invite.level);
      return { user, membership, organizationId: invite.organization_id };
    });
    if (!taken) return null;
    const organization = (await this.tenancy.getOrganization(taken.organizationId))!;
    return { user: taken.user, membership: taken.membership, organization };
  }
}
