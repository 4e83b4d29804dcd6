/**
 * An in-memory AccountStore beside a FakeTenancyStore, for unit tests of the sign-in rules
 * (sessions/service.ts). It keeps the contract of store/sqlite/accounts.ts: sessions found only
 * before they expire, and an invite taken once, atomically, keeping an existing membership.
 */
import type { AccountStore, BrowserSession, InviteJoiner, User } from '../../src/store/types.js';
import type { FakeTenancyStore } from './tenancy-store.js';

export class FakeAccountStore implements AccountStore {
  readonly passwordHashes = new Map<number, string>();
  readonly sessions = new Map<string, BrowserSession>();

  constructor(private readonly tenancy: FakeTenancyStore) {}

  async passwordHashOf(userId: number) {
    return this.passwordHashes.get(userId) ?? null;
  }
  async setPasswordHash(userId: number, hash: string) {
    this.passwordHashes.set(userId, hash);
  }
  async updateProfile(userId: number, patch: { first_name?: string; last_name?: string }) {
    const user = await this.tenancy.getUser(userId);
    if (!user) return null;
    Object.assign(user, Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)));
    return user;
  }
  async createSession(input: { userId: number; tokenHash: string; expiresAt: string }) {
    const session = { user_id: input.userId, created_at: new Date().toISOString(), expires_at: input.expiresAt };
    this.sessions.set(input.tokenHash, session);
    return session;
  }
  async findSession(tokenHash: string, now: string) {
    const session = this.sessions.get(tokenHash);
    const user = session && session.expires_at > now ? await this.tenancy.getUser(session.user_id) : null;
    return session && user ? { session, user } : null;
  }
  async deleteSession(tokenHash: string) {
    this.sessions.delete(tokenHash);
  }
  async deleteSessionsOfUser(userId: number, keepTokenHash?: string) {
    for (const [hash, session] of this.sessions) if (session.user_id === userId && hash !== keepTokenHash) this.sessions.delete(hash);
  }
  async deleteExpiredSessions(now: string) {
    let deleted = 0;
    for (const [hash, session] of this.sessions) if (session.expires_at <= now && this.sessions.delete(hash)) deleted++;
    return deleted;
  }
  async findInviteByToken(tokenHash: string) {
    const invite = this.tenancy.invites.find((i) => this.tenancy.inviteTokenHashes.get(i.id) === tokenHash);
    const organization = invite && (await this.tenancy.getOrganization(invite.organization_id));
    return invite && organization ? { invite, organization } : null;
  }
  async redeemInvite(tokenHash: string, joiner: InviteJoiner) {
    const found = await this.findInviteByToken(tokenHash);
    if (!found) return null;
    const { invite, organization } = found;
    await this.tenancy.deleteInvite(invite.organization_id, invite.id);
    let user: User;
    if ('userId' in joiner) {
      user = (await this.tenancy.getUser(joiner.userId))!;
    } else {
      user = await this.tenancy.createUser({ email: invite.target_email, first_name: joiner.firstName });
      this.passwordHashes.set(user.id, joiner.passwordHash);
    }
    const membership = (await this.tenancy.getMembership(organization.id, user.id)) ?? (await this.tenancy.addMembership(organization.id, user.id, invite.level));
    return { user, membership, organization };
  }
}
