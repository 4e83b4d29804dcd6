/**
 * The rules of writing feature flags: filters pass the engine's own validation, keys stay
 * unique, dependencies resolve without cycles, a flag others depend on cannot be deleted, and
 * every write drops the project's cached flags so /decide and /flags see it at once.
 */
import { notFound, validationError } from '../../kernel/errors.js';
import type { FlagListQuery, FlagStore, FlagWrite, GroupStore, PageOf, StoredFlag, TenancyStore, User } from '../../store/types.js';
import { numericId } from '../../util/numeric-id.js';
import { dependencyChain, resolveDependency } from '../engine/dependencies.js';
import { FlagValidationError, indexFlags, validateFlagFilters, validateFlagKey } from '../engine/index.js';
import type { FeatureFlag, PropertyFilter } from '../engine/types.js';
import { CohortDefinitionError, validateCohortFilters } from '../engine/cohorts.js';
import { countMatchingGroups, groupFiltersOf, groupTypeIndexOf } from './group-radius.js';

/** A create or update as the API receives it; nothing in it is trusted yet. */
export interface FlagInput {
  key?: string;
  name?: string;
  filters?: unknown;
  active?: boolean;
  deleted?: boolean;
  ensure_experience_continuity?: boolean;
}

export interface FlagManagementDeps {
  flags: FlagStore;
  users: Pick<TenancyStore, 'getUser'>;
  /** Drops what evaluation keeps of a project's flags. */
  invalidate(projectId: number): void;
  /** How many of the project's persons a property group matches, of how many (cohorts/calculation.ts). */
  countPersons?(projectId: number, properties: unknown): Promise<{ matching: number; total: number }>;
  /** The groups a group flag's preview tests. */
  groups?: Pick<GroupStore, 'list'>;
}

/** The preview's request (PostHog's user_blast_radius body). */
export interface BlastRadiusInput {
  condition?: unknown;
  group_type_index?: unknown;
}

export class FlagManagement {
  constructor(private readonly deps: FlagManagementDeps) {}

  page(query: FlagListQuery): Promise<PageOf<StoredFlag>> {
    return this.deps.flags.page(query);
  }

  /** A flag of the project by its id as the path gives it (soft-deleted ones too), or 404. */
  async get(projectId: number, id: string): Promise<StoredFlag> {
    const numeric = numericId(id);
    const flag = numeric === null ? null : await this.deps.flags.get(projectId, numeric);
    if (!flag) throw notFound();
    return flag;
  }

  async create(projectId: number, createdBy: number, input: FlagInput): Promise<StoredFlag> {
    if (input.key === undefined) throw validationError('This field is required.', 'key', 'required');
    const flag: FlagWrite = {
      key: checked(() => validateFlagKey(input.key)),
      name: input.name ?? '',
      filters: checked(() => validateFlagFilters(input.filters ?? {})),
      active: input.active ?? true,
      deleted: false,
      ensure_experience_continuity: input.ensure_experience_continuity ?? false,
    };
    checkDependencies({ ...flag, id: 0, version: 1 }, await this.deps.flags.list(projectId));
    await this.checkCohorts(projectId, flag.filters);
    const created = await this.deps.flags.create(projectId, createdBy, flag);
    if (created === 'key_taken') throw keyTaken();
    this.deps.invalidate(projectId);
    return created;
  }

  /** A partial update; `deleted: true` soft-deletes, `deleted: false` restores. */
  async update(projectId: number, id: string, input: FlagInput): Promise<StoredFlag> {
    const current = await this.get(projectId, id);
    const patch: Partial<FlagWrite> = {
      key: input.key === undefined ? undefined : checked(() => validateFlagKey(input.key)),
      name: input.name,
      filters: input.filters === undefined ? undefined : checked(() => validateFlagFilters(input.filters)),
      active: input.active,
      deleted: input.deleted,
      ensure_experience_continuity: input.ensure_experience_continuity,
    };
    const others = await this.deps.flags.list(projectId);
    if (patch.key !== undefined || patch.filters !== undefined) {
      checkDependencies({ ...current, key: patch.key ?? current.key, filters: patch.filters ?? current.filters }, others);
    }
    if (patch.filters !== undefined) await this.checkCohorts(projectId, patch.filters);
    if (patch.deleted === true && !current.deleted) checkNoDependents(current, others);
    const updated = await this.deps.flags.update(projectId, current.id, patch);
    if (updated === 'not_found') throw notFound();
    if (updated === 'key_taken') throw keyTaken();
    this.deps.invalidate(projectId);
    return updated;
  }

  /** Every cohort a condition names exists in the project (where the store keeps cohorts). */
  private async checkCohorts(projectId: number, filters: FlagWrite['filters'], attr = 'filters'): Promise<void> {
    const named = [...(filters.groups ?? []), ...(filters.super_groups ?? [])].flatMap((c) => c.properties ?? []).filter((p) => p.type === 'cohort');
    if (named.length === 0) return;
    const existing = new Set((await this.deps.flags.cohortDefinitions(projectId)).map((c) => c.id));
    for (const filter of named) {
      if (!existing.has(Number(filter.value))) throw validationError(`Cohort ${JSON.stringify(filter.value)} does not exist in this project.`, attr);
    }
  }

  /**
   * PostHog's user_blast_radius: how many persons a release condition's properties match, of all
   * the project's persons; with `group_type_index`, how many groups of that type its group
   * properties match, of all groups of the type. The rollout percentage is not applied (the
   * editor shows it beside).
   */
  async blastRadius(projectId: number, input: BlastRadiusInput): Promise<{ users_affected: number; total_users: number }> {
    const properties = conditionPropertiesOf(input.condition);
    if (input.group_type_index !== undefined && input.group_type_index !== null) {
      const groupTypeIndex = groupTypeIndexOf(input.group_type_index);
      const filters = groupFiltersOf(properties, groupTypeIndex);
      if (!this.deps.groups) throw validationError('Counting groups is not available with this metadata store.', 'group_type_index');
      const { matching, total } = await countMatchingGroups(this.deps.groups, projectId, groupTypeIndex, filters);
      return { users_affected: matching, total_users: total };
    }
    const { countPersons } = this.deps;
    if (!countPersons) throw validationError('Counting persons is not available with this metadata store.', 'condition');
    // A condition's properties read as a cohort definition's group: the same engine predicates.
    const group = { type: 'AND', values: properties };
    try {
      validateCohortFilters({ properties: group });
    } catch (error) {
      if (error instanceof CohortDefinitionError) throw validationError(error.message, `condition.${error.path.replace(/^properties\.values/, 'properties')}`);
      throw error;
    }
    await this.checkCohorts(projectId, { groups: [{ properties: properties as PropertyFilter[] }] }, 'condition.properties');
    const { matching, total } = await countPersons(projectId, group);
    return { users_affected: matching, total_users: total };
  }

  /** Deletes for good. */
  async remove(projectId: number, id: string): Promise<void> {
    const flag = await this.get(projectId, id);
    if (!flag.deleted) checkNoDependents(flag, await this.deps.flags.list(projectId));
    if (!(await this.deps.flags.remove(projectId, flag.id))) throw notFound();
    this.deps.invalidate(projectId);
  }

  /** The users who created these flags, by id. */
  async creators(flags: StoredFlag[]): Promise<Map<number, User>> {
    const users = new Map<number, User>();
    for (const id of new Set(flags.map((flag) => flag.created_by))) {
      const user = id === null ? null : await this.deps.users.getUser(id);
      if (user) users.set(user.id, user);
    }
    return users;
  }
}

/** The preview's `condition.properties`: a list, or a 400 naming the field. */
function conditionPropertiesOf(condition: unknown): unknown[] {
  if (condition === null || typeof condition !== 'object' || Array.isArray(condition)) throw validationError('condition must be an object with a "properties" list.', 'condition', 'required');
  const properties = (condition as Record<string, unknown>).properties ?? [];
  if (!Array.isArray(properties)) throw validationError('condition.properties must be a list of property filters.', 'condition.properties');
  return properties;
}

/** The engine's validation failures as the API's 400s, `attr` included. */
function checked<T>(validate: () => T): T {
  try {
    return validate();
  } catch (error) {
    if (error instanceof FlagValidationError) throw validationError(error.detail, error.attr, error.code);
    throw error;
  }
}

const keyTaken = () => validationError('There is already a feature flag with this key.', 'key', 'unique');

/** Every flag dependency of `candidate` must resolve, without a cycle, among the project's flags. */
function checkDependencies(candidate: FeatureFlag, others: FeatureFlag[]): void {
  const index = indexFlags([...others.filter((flag) => flag.id !== candidate.id), candidate]);
  (candidate.filters.groups ?? []).forEach((condition, c) =>
    (condition.properties ?? []).forEach((filter, p) => {
      if (filter.type === 'flag' && dependencyChain(index, String(filter.key)).length === 0) {
        throw validationError(`Flag dependency "${filter.key}" does not exist or loops back to this flag.`, `filters__groups__${c}__properties__${p}__key`);
      }
    }),
  );
}

/** A flag other flags depend on cannot be deleted (PostHog refuses too). */
function checkNoDependents(target: FeatureFlag, flags: FeatureFlag[]): void {
  const index = indexFlags(flags);
  const dependents = flags.filter(
    (flag) =>
      flag.id !== target.id &&
      (flag.filters.groups ?? []).some((condition) =>
        (condition.properties ?? []).some((filter) => filter.type === 'flag' && resolveDependency(index, String(filter.key))?.id === target.id),
      ),
  );
  if (dependents.length > 0) {
    throw validationError(`Cannot delete a feature flag that other flags depend on: ${dependents.map((flag) => flag.key).join(', ')}.`, null);
  }
}
