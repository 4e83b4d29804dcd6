/** The first owner's password, set when the first start creates the default organization. */
import type { AccountStore, User } from '../store/types.js';
import { generatePassword, hashPassword } from './passwords.js';

/**
 * Sets the owner's password: the chosen one (SIGHTLINE_OWNER_PASSWORD, checked by loadConfig),
 * or a generated one which is returned (to be printed once).
 */
export async function setOwnerPassword(accounts: AccountStore, owner: User, chosen: string | undefined): Promise<{ generated: string | null }> {
  const password = chosen ?? generatePassword();
  await accounts.setPasswordHash(owner.id, await hashPassword(password));
  return { generated: chosen === undefined ? password : null };
}
