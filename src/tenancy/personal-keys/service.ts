/**
 * A user's own personal API keys. The value exists only in the answer to its creation; the
 * store keeps its hash and a mask. Deleting a key revokes it at once (lookups go to the store
 * every time).
 */
import { notFound, validationError } from '../../kernel/errors.js';
import type { Principal } from '../../http/auth.js';
import { scopesForNewKey } from '../../http/scopes.js';
import type { PersonalApiKey, TenancyStore } from '../../store/types.js';
import { newPersonalApiKey } from '../../util/keys.js';

const MAX_KEYS_PER_USER = 10;

export class PersonalKeys {
  constructor(private readonly tenancy: TenancyStore) {}

  list(userId: number): Promise<PersonalApiKey[]> {
    return this.tenancy.listPersonalApiKeys(userId);
  }

  /** A new key and its value; scopes default to those of the key making the request (all, for a browser session). */
  async create(principal: Principal, input: { label?: string; scopes?: string[] }): Promise<{ key: PersonalApiKey; value: string }> {
    const scopes = scopesForNewKey(input.scopes, principal.key?.scopes ?? null);
    if ((await this.list(principal.user.id)).length >= MAX_KEYS_PER_USER) {
      throw validationError(`You can only have ${MAX_KEYS_PER_USER} personal API keys. Remove an existing key before creating a new one.`);
    }
    const value = newPersonalApiKey();
    const key = await this.tenancy.createPersonalApiKey({ userId: principal.user.id, label: input.label?.trim() || 'API key', value, scopes });
    return { key, value };
  }

  /** One of the user's keys, `@current` being the key making the request (none for a browser session); 404 otherwise. */
  async get(principal: Principal, id: string): Promise<PersonalApiKey> {
    if (id === '@current') {
      if (principal.key === null) throw notFound('No personal API key made this request: it was signed in with a session.');
      return principal.key;
    }
    const key = (await this.list(principal.user.id)).find((k) => k.id === id);
    if (!key) throw notFound();
    return key;
  }

  async revoke(principal: Principal, id: string): Promise<void> {
    const key = await this.get(principal, id);
    await this.tenancy.deletePersonalApiKey(principal.user.id, key.id);
  }
}
