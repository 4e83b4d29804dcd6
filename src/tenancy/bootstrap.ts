/**
 * First-start setup and the `init` / `users add` commands: organizations, projects, users and
 * their keys. Only key hashes are stored; a key's value is returned exactly once.
 */
import type { MembershipLevel, MetaStore, Organization, Project, User } from '../store/types.js';
import { ConfigError } from '../config.js';
import { hasPersonalKeyShape, newPersonalApiKey, newProjectApiKey } from '../util/keys.js';

export interface CreatedTenant {
  organization: Organization;
  project: Project;
  user: User;
  projectApiKey: string;
  personalApiKey: string;
}

export async function createTenant(
  meta: MetaStore,
  input: { organizationName: string; projectName: string; email: string; projectApiKey?: string; personalApiKey?: string },
): Promise<CreatedTenant> {
  const tenancy = meta.tenancy;
  const organization = await tenancy.createOrganization(input.organizationName);
  const user = (await tenancy.getUserByEmail(input.email)) ?? (await tenancy.createUser({ email: input.email, first_name: 'Admin' }));
  await tenancy.addMembership(organization.id, user.id, 15);
  const projectApiKey = input.projectApiKey ?? newProjectApiKey();
  const project = await tenancy.createProject({ organizationId: organization.id, name: input.projectName, apiToken: projectApiKey });
  const personalApiKey = input.personalApiKey ?? newPersonalApiKey();
  await tenancy.createPersonalApiKey({ userId: user.id, label: 'bootstrap', value: personalApiKey, scopes: null });
  return { organization, project, user, projectApiKey, personalApiKey };
}

/** Keys and the owner's email forced by settings for the first start. */
type BootstrapKeys = { projectApiKey?: string; personalApiKey?: string; email?: string };

/**
 * On an empty data dir: the default organization, project, owner and keys. Null otherwise,
 * and for all but one of several nodes starting together on one empty store.
 */
export function bootstrapIfEmpty(meta: MetaStore, keys: BootstrapKeys): Promise<CreatedTenant | null> {
  const inTurn = meta.firstStartInTurn?.bind(meta) ?? ((work: () => Promise<CreatedTenant | null>) => work());
  return inTurn(() => createDefaultTenant(meta, keys));
}

async function createDefaultTenant(meta: MetaStore, keys: BootstrapKeys): Promise<CreatedTenant | null> {
  if ((await meta.tenancy.countOrganizations()) > 0) return null;
  // Checked only when the key is created: on an existing data dir the setting is not used, and
  // an upgrade must not refuse to start over it.
  if (keys.personalApiKey !== undefined && !hasPersonalKeyShape(keys.personalApiKey)) {
    throw new ConfigError('SIGHTLINE_PERSONAL_API_KEY must start with "phx_" and be at most 200 characters: /api/ accepts no other personal key');
  }
  return createTenant(meta, {
    organizationName: 'Default Organization',
    projectName: 'Default Project',
    email: keys.email ?? 'admin@sightline.local',
    projectApiKey: keys.projectApiKey,
    personalApiKey: keys.personalApiKey,
  });
}

export async function addUserToOrganization(
  meta: MetaStore,
  input: { organizationId: string; email: string; level: MembershipLevel; firstName?: string },
): Promise<{ user: User; personalApiKey: string }> {
  const tenancy = meta.tenancy;
  if (!(await tenancy.getOrganization(input.organizationId))) throw new Error(`No organization with id ${input.organizationId}`);
  const user = (await tenancy.getUserByEmail(input.email)) ?? (await tenancy.createUser({ email: input.email, first_name: input.firstName }));
  if (await tenancy.getMembership(input.organizationId, user.id)) throw new Error(`${input.email} is already a member of that organization`);
  await tenancy.addMembership(input.organizationId, user.id, input.level);
  const personalApiKey = newPersonalApiKey();
  await tenancy.createPersonalApiKey({ userId: user.id, label: 'cli', value: personalApiKey, scopes: null });
  return { user, personalApiKey };
}
