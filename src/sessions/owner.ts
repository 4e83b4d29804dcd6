/** The first owner's password, set when the first start creates the default organization. */
import { ConfigError } from '../config.js';
import type { AccountStore, User } from '../store/types.js';
import { generatePassword, hashPassword, passwordProblem } from './passwords.js';

/** Sets the owner's password: the chosen one, or a generated one which is returned (to be printed once). */
export async function setOwnerPassword(accounts: AccountStore, owner: User, chosen: string | undefined): Promise<{ generated: string | null }> {
  if (chosen !== undefined) {
    const problem = passwordProblem(chosen);
    if (problem) throw new ConfigError(`SIGHTLINE_OWNER_PASSWORD: ${problem}`);
  }
  const password = chosen ?? generatePassword();
  await accounts.setPasswordHash(owner.id, await hashPassword(password));
  return { generated: chosen === undefined ? password : null };
}
