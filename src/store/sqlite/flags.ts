/**
 * Feature flags in SQLite: the management API's reads and writes, and the one call a flag
 * evaluation makes (stored person, groups, experience-continuity overrides). The hot-path
 * statements are prepared once.
 */
import type { JsonObject } from '../../kernel/json.js';
import type { FlagFilters } from '../../flags/engine/types.js';
import type { CohortDefinition } from '../../flags/engine/cohorts.js';
import type {
  FlagEvaluationInputs,
  FlagEvaluationRequest,
  FlagListQuery,
  FlagStore,
  FlagUpdate,
  FlagWrite,
  PageOf,
  StoredFlag,
} from '../types.js';
import { CachedPersonReads } from '../cached-person-reads.js';
import { cohortsKey, groupKey, groupTypesKey, type ChangeStamps } from '../change-stamps.js';
import { StampedCache } from '../stamped-cache.js';
import { isUniqueViolation, parseJson, toBool, type Sqlite } from './database.js';
import { likeContains } from '../definition-sql.js';

type Row = Record<string, unknown>;

const flagFromRow = (row: Row): StoredFlag => ({
  id: row.id as number,
  project_id: row.project_id as number,
  key: row.key as string,
  name: row.name as string,
  filters: parseJson<FlagFilters>(row.filters, { groups: [] }),
  active: toBool(row.active),
  deleted: toBool(row.deleted),
  ensure_experience_continuity: toBool(row.ensure_experience_continuity),
  version: row.version as number,
  created_by: (row.created_by as number | null) ?? null,
  created_at: row.created_at as string,
  updated_at: row.updated_at as string,
});

/** Column values of the writable fields, in the shape SQLite binds. */
const COLUMNS: { [K in keyof FlagWrite]: (value: FlagWrite[K]) => unknown } = {
  key: (value) => value,
  name: (value) => value,
  filters: (value) => JSON.stringify(value),
  active: (value) => (value ? 1 : 0),
  deleted: (value) => (value ? 1 : 0),
  ensure_experience_continuity: (value) => (value ? 1 : 0),
};

/** Persons, and groups and group-type lists, kept per thread for flag evaluation (a few MB each). */
const CACHED_PERSONS = 10_000;
const CACHED_GROUPS = 10_000;

export class SqliteFlagStore implements FlagStore {
  private readonly statements;
  private readonly persons: CachedPersonReads;
  /** Per project, group type index → name. */
  private readonly groupTypeLists: StampedCache<Record<string, string>>;
  /** Group properties; null for a group never identified. */
  private readonly groups: StampedCache<JsonObject | null>;
  /** A person's stored cohort memberships, kept until any membership of the project changes. */
  private readonly memberships: StampedCache<readonly number[]>;

  constructor(
    private readonly db: Sqlite,
    stamps: ChangeStamps,
  ) {
    this.statements = {
      list: db.prepare('SELECT * FROM feature_flags WHERE project_id = ? AND deleted = 0 ORDER BY id'),
      get: db.prepare('SELECT * FROM feature_flags WHERE project_id = ? AND id = ?'),
      purgeDeletedKey: db.prepare('DELETE FROM feature_flags WHERE project_id = ? AND key = ? AND deleted = 1'),
      insert: db.prepare(
        `INSERT INTO feature_flags (project_id, key, name, filters, active, deleted, ensure_experience_continuity, version, created_by, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, 0, ?, 1, ?, ?, ?) RETURNING *`,
      ),
      remove: db.prepare('DELETE FROM feature_flags WHERE project_id = ? AND id = ?'),
      groupTypes: db.prepare('SELECT group_type, group_type_index FROM group_types WHERE project_id = ?'),
      group: db.prepare('SELECT properties FROM groups WHERE project_id = ? AND group_type_index = ? AND group_key = ?'),
      person: db.prepare(
        `SELECT p.uuid, p.properties FROM person_distinct_ids d JOIN persons p ON p.project_id = d.project_id AND p.uuid = d.person_uuid
         WHERE d.project_id = ? AND d.distinct_id = ?`,
      ),
      personUuid: db.prepare('SELECT person_uuid FROM person_distinct_ids WHERE project_id = ? AND distinct_id = ?'),
      overrides: db.prepare('SELECT feature_flag_key, hash_key FROM flag_hash_key_overrides WHERE project_id = ? AND person_uuid = ?'),
      cohortDefinitions: db.prepare('SELECT id, is_static, filters FROM cohorts WHERE project_id = ? AND deleted = 0 ORDER BY id'),
      cohortsOf: db.prepare('SELECT cohort_id FROM cohort_people WHERE project_id = ? AND person_uuid = ?').pluck(),
      insertOverride: db.prepare(
        'INSERT INTO flag_hash_key_overrides (project_id, person_uuid, feature_flag_key, hash_key) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      ),
    };
    this.persons = new CachedPersonReads(
      stamps,
      (projectId, distinctId) => {
        const row = this.statements.person.get(projectId, distinctId) as { uuid: string; properties: string } | undefined;
        return row ? { uuid: row.uuid, properties: parseJson<JsonObject>(row.properties, {}) } : null;
      },
      CACHED_PERSONS,
    );
    this.groupTypeLists = new StampedCache(stamps, CACHED_GROUPS);
    this.groups = new StampedCache(stamps, CACHED_GROUPS);
    this.memberships = new StampedCache(stamps, CACHED_PERSONS);
  }

  async cohortDefinitions(projectId: number): Promise<CohortDefinition[]> {
    return (this.statements.cohortDefinitions.all(projectId) as Row[]).map((row) => ({
      id: row.id as number,
      is_static: toBool(row.is_static),
      filters: parseJson<JsonObject>(row.filters, {}),
    }));
  }

  private cohortsOf(projectId: number, personUuid: string): readonly number[] {
    return this.memberships.get(
      cohortsKey(projectId),
      () => this.statements.cohortsOf.all(projectId, personUuid) as number[],
      `${projectId}\u0000${personUuid}`,
    );
  }

  async list(projectId: number): Promise<StoredFlag[]> {
    return (this.statements.list.all(projectId) as Row[]).map(flagFromRow);
  }

  async page(query: FlagListQuery): Promise<PageOf<StoredFlag>> {
    const where = ['project_id = ?', 'deleted = 0'];
    const params: unknown[] = [query.projectId];
    if (query.active !== null) {
      where.push('active = ?');
      params.push(query.active ? 1 : 0);
    }
    for (const word of query.searchWords) {
      where.push("(key LIKE ? ESCAPE '\\' OR name LIKE ? ESCAPE '\\')");
      params.push(likeContains(word), likeContains(word));
    }
    const whereSql = where.join(' AND ');
    const count = (this.db.prepare(`SELECT count(*) AS n FROM feature_flags WHERE ${whereSql}`).get(...params) as { n: number }).n;
    const rows = this.db
      .prepare(`SELECT * FROM feature_flags WHERE ${whereSql} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`)
      .all(...params, query.limit, query.offset) as Row[];
    return { count, results: rows.map(flagFromRow) };
  }

  async get(projectId: number, id: number): Promise<StoredFlag | null> {
    const row = this.statements.get.get(projectId, id) as Row | undefined;
    return row ? flagFromRow(row) : null;
  }

  async create(projectId: number, createdBy: number | null, flag: FlagWrite): Promise<StoredFlag | 'key_taken'> {
    const now = new Date().toISOString();
    try {
      return this.db.transaction(() => {
        this.statements.purgeDeletedKey.run(projectId, flag.key);
        const row = this.statements.insert.get(
          projectId,
          flag.key,
          flag.name,
          COLUMNS.filters(flag.filters),
          COLUMNS.active(flag.active),
          COLUMNS.ensure_experience_continuity(flag.ensure_experience_continuity),
          createdBy,
          now,
          now,
        ) as Row;
        return flagFromRow(row);
      })();
    } catch (error) {
      if (isUniqueViolation(error)) return 'key_taken';
      throw error;
    }
  }

  async update(projectId: number, id: number, patch: Partial<FlagWrite>): Promise<FlagUpdate> {
    const sets = ['version = version + 1', 'updated_at = ?'];
    const params: unknown[] = [new Date().toISOString()];
    for (const name of Object.keys(COLUMNS) as (keyof FlagWrite)[]) {
      if (patch[name] === undefined) continue;
      sets.push(`${name} = ?`);
      params.push((COLUMNS[name] as (value: unknown) => unknown)(patch[name]));
    }
    try {
      const row = this.db
        .prepare(`UPDATE feature_flags SET ${sets.join(', ')} WHERE project_id = ? AND id = ? RETURNING *`)
        .get(...params, projectId, id) as Row | undefined;
      return row ? flagFromRow(row) : 'not_found';
    } catch (error) {
      if (isUniqueViolation(error)) return 'key_taken';
      throw error;
    }
  }

  async remove(projectId: number, id: number): Promise<boolean> {
    return this.statements.remove.run(projectId, id).changes > 0;
  }

  /** Shared between callers: never changed in place. */
  async groupTypeMapping(projectId: number): Promise<Record<string, string>> {
    return this.groupTypes(projectId);
  }

  private groupTypes(projectId: number): Record<string, string> {
    return this.groupTypeLists.get(groupTypesKey(projectId), () => {
      const mapping: Record<string, string> = {};
      for (const row of this.statements.groupTypes.all(projectId) as { group_type: string; group_type_index: number }[]) {
        mapping[String(row.group_type_index)] = row.group_type;
      }
      return mapping;
    });
  }

  private groupProperties(projectId: number, index: number, key: string): JsonObject | null {
    return this.groups.get(groupKey(projectId, index, key), () => {
      const row = this.statements.group.get(projectId, index, key) as { properties: string } | undefined;
      return row ? parseJson<JsonObject>(row.properties, {}) : null;
    });
  }

  async prepareEvaluation(request: FlagEvaluationRequest): Promise<FlagEvaluationInputs> {
    const { projectId, distinctId } = request;
    const person = this.persons.get(projectId, distinctId);
    const inputs: FlagEvaluationInputs = {
      personProperties: person?.properties ?? null,
      groupTypeMapping: {},
      groupProperties: {},
      hashKeyOverrides: {},
    };
    if (Object.keys(request.groups).length > 0) {
      inputs.groupTypeMapping = this.groupTypes(projectId);
      for (const [index, name] of Object.entries(inputs.groupTypeMapping)) {
        const key = request.groups[name];
        if (key === undefined) continue;
        const properties = this.groupProperties(projectId, Number(index), key);
        if (properties) inputs.groupProperties[name] = properties;
      }
    }
    if (request.cohortMembership) inputs.cohortIds = person ? this.cohortsOf(projectId, person.uuid) : [];
    if (request.continuity) inputs.hashKeyOverrides = this.continuityOverrides(projectId, person?.uuid ?? null, request.continuity);
    return inputs;
  }

  /**
   * First write wins: the anon id becomes the hash key of every continuity flag that has none
   * yet, for the persons of both ids; the distinct id's own person is read last so it wins.
   */
  private continuityOverrides(
    projectId: number,
    personUuid: string | null,
    continuity: NonNullable<FlagEvaluationRequest['continuity']>,
  ): Record<string, string> {
    const { anonDistinctId, flagKeys } = continuity;
    const anonPerson =
      anonDistinctId === null
        ? null
        : ((this.statements.personUuid.get(projectId, anonDistinctId) as { person_uuid: string } | undefined)?.person_uuid ?? null);
    const persons = [...new Set([anonPerson, personUuid].filter((uuid): uuid is string => uuid !== null))];
    const read = () => {
      const overrides: Record<string, string> = {};
      for (const uuid of persons) {
        for (const row of this.statements.overrides.all(projectId, uuid) as { feature_flag_key: string; hash_key: string }[]) {
          overrides[row.feature_flag_key] = row.hash_key;
        }
      }
      return overrides;
    };
    if (anonDistinctId === null || persons.length === 0) return read();
    // Only write (and pay for a commit) when some person still lacks an override.
    const missing = persons.some((uuid) => {
      const have = new Set((this.statements.overrides.all(projectId, uuid) as { feature_flag_key: string }[]).map((row) => row.feature_flag_key));
      return flagKeys.some((key) => !have.has(key));
    });
    if (missing) {
      this.db.transaction(() => {
        for (const uuid of persons) for (const key of flagKeys) this.statements.insertOverride.run(projectId, uuid, key, anonDistinctId);
      })();
    }
    return read();
  }
}
