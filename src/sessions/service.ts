/**
 * Signing in and out, passwords, the signed-in user's profile, and taking up invite links.
 * Rules only: the routes turn requests into these calls and the results into cookies.
 */
import { throttled } from '../http/rate-limit.js';
import { ApiError, notFound, validationError } from '../kernel/errors.js';
import type { AccountStore, Membership, MembershipLevel, Organization, TenancyStore, User } from '../store/types.js';
import { inviteExpired, inviteTokenHash } from '../tenancy/members/invite-links.js';
import { LoginLimiter } from './login-limiter.js';
import type { RateWindows } from '../util/rate-windows.js';
import { decoyHash, hashPassword, passwordProblem, verifyPassword } from './passwords.js';
import { csrfTokenFor, newSessionToken, tokenHash } from './tokens.js';

/** How long a session lasts after sign-in (PostHog's default too). */
export const SESSION_DAYS = 14;
export const SESSION_SECONDS = SESSION_DAYS * 86_400;

export interface SignedIn {
  user: User;
  /** The cookie values: shown to the browser only, never stored. */
  sessionToken: string;
  csrfToken: string;
}

export interface SessionStores {
  accounts: AccountStore;
  tenancy: TenancyStore;
  /** Where the sign-in limiter counts (in memory unless given). */
  rateWindows?: RateWindows;
}

/** A user as /api/users/@me/ shows them. */
export interface Profile extends User {
  date_joined: string;
  has_password: boolean;
  organizations: { id: string; name: string; membership_level: MembershipLevel }[];
}

export const invalidCredentials = () => new ApiError(400, 'validation_error', 'invalid_credentials', 'Invalid email or password.', null);

const badPassword = (detail: string, attr = 'password') => validationError(detail, attr, 'password_invalid');

export class SessionService {
  readonly limiter: LoginLimiter;

  constructor(
    private readonly stores: SessionStores,
    now: () => number = Date.now,
  ) {
    this.limiter = new LoginLimiter(now, stores.rateWindows);
  }

  /** Checks e-mail and password (rate-limited per e-mail and per client address) and opens a session. */
  async signIn(email: string, password: string, address: string): Promise<SignedIn> {
    const wait = await this.limiter.retryAfter(email, address);
    if (wait > 0) throw throttled(wait);
    const user = await this.stores.tenancy.getUserByEmail(email);
    if (!user || !(await this.passwordMatches(user, password))) {
      await this.limiter.recordFailure(email, address);
      throw invalidCredentials();
    }
    await this.limiter.recordSuccess(email);
    await this.stores.accounts.deleteExpiredSessions(new Date().toISOString());
    return this.openSession(user);
  }

  /** The signed-in user of a session token, or null when it is unknown or expired. */
  async userOf(sessionToken: string): Promise<User | null> {
    const found = await this.stores.accounts.findSession(tokenHash(sessionToken), new Date().toISOString());
    return found?.user ?? null;
  }

  async signOut(sessionToken: string): Promise<void> {
    await this.stores.accounts.deleteSession(tokenHash(sessionToken));
  }

  /**
   * A user's own change. The current password is required when one is set. Every other session
   * of the user ends; `currentSessionToken` (the one making the change) stays signed in.
   */
  async changePassword(user: User, input: { current: string | undefined; next: string }, currentSessionToken: string | null): Promise<void> {
    const stored = await this.stores.accounts.passwordHashOf(user.id);
    if (stored !== null) {
      if (input.current === undefined) throw badPassword('Your current password is required to set a new one.', 'current_password');
      if (!(await verifyPassword(input.current, stored))) throw badPassword('Your current password is incorrect.', 'current_password');
    }
    await this.setPassword(user, input.next, currentSessionToken);
  }

  /** Sets a password without the old one (the command line) and signs the user out everywhere. */
  async resetPassword(email: string, password: string): Promise<User> {
    const user = await this.stores.tenancy.getUserByEmail(email);
    if (!user) throw notFound(`No user with the e-mail address ${email}.`);
    await this.setPassword(user, password, null);
    return user;
  }

  /** The user with whether they have a password and the organizations they belong to. */
  async profile(user: User): Promise<Profile> {
    const organizations = [];
    for (const membership of await this.stores.tenancy.listMembershipsOfUser(user.id)) {
      const organization = await this.stores.tenancy.getOrganization(membership.organization_id);
      if (organization) organizations.push({ id: organization.id, name: organization.name, membership_level: membership.level });
    }
    const hasPassword = (await this.stores.accounts.passwordHashOf(user.id)) !== null;
    return { ...user, date_joined: user.created_at, has_password: hasPassword, organizations };
  }

  /** A user's own name change. */
  async rename(user: User, patch: { first_name?: string; last_name?: string }): Promise<User> {
    return (await this.stores.accounts.updateProfile(user.id, patch)) ?? user;
  }

  /** What an invite link leads to, for the page that takes it up. */
  async invitePreview(inviteToken: string): Promise<{ target_email: string; organization_name: string; level: number; existing_user: boolean }> {
    const { invite, organization } = await this.pendingInvite(inviteToken);
    const existing = await this.stores.tenancy.getUserByEmail(invite.target_email);
    return { target_email: invite.target_email, organization_name: organization.name, level: invite.level, existing_user: existing !== null };
  }

  /**
   * Takes up an invite link and signs the user in. A new e-mail becomes a user with the chosen
   * password. An e-mail that already has an account must give that account's password: a link
   * never sets the password of someone who exists (an admin of one organization could otherwise
   * take over an account that also belongs to another).
   */
  async acceptInvite(
    inviteToken: string,
    input: { firstName: string | undefined; password: string },
    address: string,
  ): Promise<SignedIn & { membership: Membership; organization: Organization }> {
    const { invite } = await this.pendingInvite(inviteToken);
    const existing = await this.stores.tenancy.getUserByEmail(invite.target_email);
    let joiner: { userId: number } | { firstName: string; passwordHash: string };
    if (existing) {
      const wait = await this.limiter.retryAfter(existing.email, address);
      if (wait > 0) throw throttled(wait);
      if ((await this.stores.accounts.passwordHashOf(existing.id)) === null) {
        throw validationError(
          'An account with this e-mail address exists but has no password yet. Ask an administrator to set one with `sightline users set-password`, then open this link again.',
          'password',
          'password_not_set',
        );
      }
      if (!(await this.passwordMatches(existing, input.password))) {
        await this.limiter.recordFailure(existing.email, address);
        throw badPassword('This e-mail address already has an account: enter its password to join.');
      }
      joiner = { userId: existing.id };
    } else {
      const firstName = input.firstName?.trim();
      if (!firstName) throw validationError('Please enter your name.', 'first_name', 'required');
      const problem = passwordProblem(input.password);
      if (problem) throw badPassword(problem);
      joiner = { firstName, passwordHash: await hashPassword(input.password) };
    }
    const joined = await this.stores.accounts.redeemInvite(inviteTokenHash(inviteToken), joiner);
    if (!joined) throw inviteGone();
    return { ...(await this.openSession(joined.user)), membership: joined.membership, organization: joined.organization };
  }

  private async pendingInvite(inviteToken: string) {
    const found = await this.stores.accounts.findInviteByToken(inviteTokenHash(inviteToken));
    if (!found) throw inviteGone();
    if (inviteExpired(found.invite)) {
      throw validationError('This invite has expired. Ask an administrator for a new one.', 'invite_token', 'invite_expired');
    }
    return found;
  }

  private async passwordMatches(user: User, password: string): Promise<boolean> {
    const stored = await this.stores.accounts.passwordHashOf(user.id);
    // Without a stored password the check still costs a hash, so timing does not tell which e-mails have one.
    const matches = await verifyPassword(password, stored ?? (await decoyHash()));
    return stored !== null && matches;
  }

  private async setPassword(user: User, password: string, keepSessionToken: string | null): Promise<void> {
    const problem = passwordProblem(password);
    if (problem) throw badPassword(problem);
    await this.stores.accounts.setPasswordHash(user.id, await hashPassword(password));
    await this.stores.accounts.deleteSessionsOfUser(user.id, keepSessionToken === null ? undefined : tokenHash(keepSessionToken));
  }

  private async openSession(user: User): Promise<SignedIn> {
    const sessionToken = newSessionToken();
    const expiresAt = new Date(Date.now() + SESSION_SECONDS * 1000).toISOString();
    await this.stores.accounts.createSession({ userId: user.id, tokenHash: tokenHash(sessionToken), expiresAt });
    return { user, sessionToken, csrfToken: csrfTokenFor(sessionToken) };
  }
}

const inviteGone = () => notFound('This invite link is not valid: it was already used, cancelled or replaced by a newer one.');
