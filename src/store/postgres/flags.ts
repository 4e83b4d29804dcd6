/**
 * Feature flags in PostgreSQL: the management API's reads and writes, and the one call a flag
 * evaluation makes. Unlike the SQLite store it keeps no persons or groups between requests:
 * other nodes change them, and the change stamps that vouch for a kept copy are this process's
 * alone. Each evaluation reads what it needs in one or two statements.
 */
import type { JsonObject } from '../../kernel/json.js';
import type { FlagFilters } from '../../flags/engine/types.js';
import type { CohortDefinition } from '../../flags/engine/cohorts.js';
import type { FlagEvaluationInputs, FlagEvaluationRequest, FlagListQuery, FlagStore, FlagUpdate, FlagWrite, PageOf, StoredFlag } from '../types.js';
import { likeContains } from '../definition-sql.js';
import { isInt4, isUniqueViolation, jsonValue, one, Params, rows, transaction, type PgPool, type Row } from './database.js';

const flagFromRow = (row: Row): StoredFlag => ({
  id: row.id as number,
  project_id: row.project_id as number,
  key: row.key as string,
  name: row.name as string,
  filters: jsonValue<FlagFilters>(row.filters, { groups: [] }),
  active: row.active as boolean,
  deleted: row.deleted as boolean,
  ensure_experience_continuity: row.ensure_experience_continuity as boolean,
  version: row.version as number,
  created_by: (row.created_by as number | null) ?? null,
  created_at: row.created_at as string,
  updated_at: row.updated_at as string,
});

/** Column values of the writable fields, as PostgreSQL binds them. */
const COLUMNS: { [K in keyof FlagWrite]: (value: FlagWrite[K]) => unknown } = {
  key: (value) => value,
  name: (value) => value,
  filters: (value) => JSON.stringify(value),
  active: (value) => value,
  deleted: (value) => value,
  ensure_experience_continuity: (value) => value,
};

export class PostgresFlagStore implements FlagStore {
  constructor(private readonly pool: PgPool) {}

  async list(projectId: number): Promise<StoredFlag[]> {
    return (await rows(this.pool, 'SELECT * FROM feature_flags WHERE project_id = $1 AND NOT deleted ORDER BY id', [projectId])).map(flagFromRow);
  }

  async page(query: FlagListQuery): Promise<PageOf<StoredFlag>> {
    const params = new Params();
    const where = [`project_id = ${params.add(query.projectId)}`, 'NOT deleted'];
    if (query.active !== null) where.push(`active = ${params.add(query.active)}`);
    for (const word of query.searchWords) {
      const pattern = params.add(likeContains(word));
      where.push(`(key ILIKE ${pattern} ESCAPE '\\' OR name ILIKE ${pattern} ESCAPE '\\')`);
    }
    const whereSql = where.join(' AND ');
    const count = (await one<{ n: number }>(this.pool, `SELECT count(*)::int AS n FROM feature_flags WHERE ${whereSql}`, params.values))!.n;
    const found = await rows(
      this.pool,
      `SELECT * FROM feature_flags WHERE ${whereSql} ORDER BY created_at DESC, id DESC LIMIT ${params.add(query.limit)} OFFSET ${params.add(query.offset)}`,
      params.values,
    );
    return { count, results: found.map(flagFromRow) };
  }

  async get(projectId: number, id: number): Promise<StoredFlag | null> {
    if (!isInt4(id)) return null;
    const row = await one(this.pool, 'SELECT * FROM feature_flags WHERE project_id = $1 AND id = $2', [projectId, id]);
    return row ? flagFromRow(row) : null;
  }

  async create(projectId: number, createdBy: number | null, flag: FlagWrite): Promise<StoredFlag | 'key_taken'> {
    const now = new Date().toISOString();
    try {
      return await transaction(this.pool, async (client) => {
        await client.query('DELETE FROM feature_flags WHERE project_id = $1 AND key = $2 AND deleted', [projectId, flag.key]);
        const row = await one(
          client,
          `INSERT INTO feature_flags (project_id, key, name, filters, active, deleted, ensure_experience_continuity, version, created_by, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, false, $6, 1, $7, $8, $9) RETURNING *`,
          [projectId, flag.key, flag.name, COLUMNS.filters(flag.filters), flag.active, flag.ensure_experience_continuity, createdBy, now, now],
        );
        return flagFromRow(row!);
      });
    } catch (error) {
      if (isUniqueViolation(error)) return 'key_taken';
      throw error;
    }
  }

  async update(projectId: number, id: number, patch: Partial<FlagWrite>): Promise<FlagUpdate> {
    if (!isInt4(id)) return 'not_found';
    const params = new Params();
    const sets = ['version = version + 1', `updated_at = ${params.add(new Date().toISOString())}`];
    for (const name of Object.keys(COLUMNS) as (keyof FlagWrite)[]) {
      if (patch[name] === undefined) continue;
      sets.push(`${name} = ${params.add((COLUMNS[name] as (value: unknown) => unknown)(patch[name]))}`);
    }
    try {
      const sql = `UPDATE feature_flags SET ${sets.join(', ')} WHERE project_id = ${params.add(projectId)} AND id = ${params.add(id)} RETURNING *`;
      const row = await one(this.pool, sql, params.values);
      return row ? flagFromRow(row) : 'not_found';
    } catch (error) {
      if (isUniqueViolation(error)) return 'key_taken';
      throw error;
    }
  }

  async remove(projectId: number, id: number): Promise<boolean> {
    if (!isInt4(id)) return false;
    return ((await this.pool.query('DELETE FROM feature_flags WHERE project_id = $1 AND id = $2', [projectId, id])).rowCount ?? 0) > 0;
  }

  async groupTypeMapping(projectId: number): Promise<Record<string, string>> {
    const mapping: Record<string, string> = {};
    const found = await rows<{ group_type: string; group_type_index: number }>(
      this.pool,
      'SELECT group_type, group_type_index FROM group_types WHERE project_id = $1',
      [projectId],
    );
    for (const row of found) mapping[String(row.group_type_index)] = row.group_type;
    return mapping;
  }

  async prepareEvaluation(request: FlagEvaluationRequest): Promise<FlagEvaluationInputs> {
    const { projectId, distinctId } = request;
    const person = await one<{ uuid: string; properties: JsonObject }>(
      this.pool,
      `SELECT p.uuid, p.properties FROM person_distinct_ids d JOIN persons p ON p.project_id = d.project_id AND p.uuid = d.person_uuid
       WHERE d.project_id = $1 AND d.distinct_id = $2`,
      [projectId, distinctId],
    );
    const inputs: FlagEvaluationInputs = {
      personProperties: person ? jsonValue<JsonObject>(person.properties, {}) : null,
      groupTypeMapping: {},
      groupProperties: {},
      hashKeyOverrides: {},
    };
    if (Object.keys(request.groups).length > 0) {
      inputs.groupTypeMapping = await this.groupTypeMapping(projectId);
      const wanted = Object.entries(inputs.groupTypeMapping).filter(([, name]) => request.groups[name] !== undefined);
      if (wanted.length > 0) {
        const found = await rows<{ group_type_index: number; properties: JsonObject }>(
          this.pool,
          `SELECT g.group_type_index, g.properties FROM groups g
           JOIN unnest($2::int[], $3::text[]) AS w(idx, key) ON g.group_type_index = w.idx AND g.group_key = w.key
           WHERE g.project_id = $1`,
          [projectId, wanted.map(([index]) => Number(index)), wanted.map(([, name]) => request.groups[name])],
        );
        for (const row of found) inputs.groupProperties[inputs.groupTypeMapping[String(row.group_type_index)]] = jsonValue<JsonObject>(row.properties, {});
      }
    }
    if (request.cohortMembership) {
      inputs.cohortIds = person
        ? (await rows<{ cohort_id: number }>(this.pool, 'SELECT cohort_id FROM cohort_people WHERE project_id = $1 AND person_uuid = $2', [projectId, person.uuid])).map(
            (row) => row.cohort_id,
          )
        : [];
    }
    if (request.continuity) inputs.hashKeyOverrides = await this.continuityOverrides(projectId, person?.uuid ?? null, request.continuity);
    return inputs;
  }

  async cohortDefinitions(projectId: number): Promise<CohortDefinition[]> {
    const found = await rows<{ id: number; is_static: boolean; filters: unknown }>(
      this.pool,
      'SELECT id, is_static, filters FROM cohorts WHERE project_id = $1 AND NOT deleted ORDER BY id',
      [projectId],
    );
    return found.map((row) => ({ id: row.id, is_static: row.is_static, filters: jsonValue<JsonObject>(row.filters, {}) }));
  }

  /**
   * First write wins: the anon id becomes the hash key of every continuity flag that has none
   * yet, for the persons of both ids (ON CONFLICT DO NOTHING keeps the first across nodes); the
   * distinct id's own person is read last so it wins.
   */
  private async continuityOverrides(
    projectId: number,
    personUuid: string | null,
    continuity: NonNullable<FlagEvaluationRequest['continuity']>,
  ): Promise<Record<string, string>> {
    const { anonDistinctId, flagKeys } = continuity;
    const anonPerson =
      anonDistinctId === null
        ? null
        : ((await one<{ person_uuid: string }>(this.pool, 'SELECT person_uuid FROM person_distinct_ids WHERE project_id = $1 AND distinct_id = $2', [
            projectId,
            anonDistinctId,
          ]))?.person_uuid ?? null);
    const persons = [...new Set([anonPerson, personUuid].filter((uuid): uuid is string => uuid !== null))];
    if (persons.length === 0) return {};
    if (anonDistinctId !== null && flagKeys.length > 0) {
      await this.pool.query(
        `INSERT INTO flag_hash_key_overrides (project_id, person_uuid, feature_flag_key, hash_key)
         SELECT $1, p, k, $4 FROM unnest($2::text[]) AS p, unnest($3::text[]) AS k ON CONFLICT DO NOTHING`,
        [projectId, persons, flagKeys, anonDistinctId],
      );
    }
    const found = await rows<{ person_uuid: string; feature_flag_key: string; hash_key: string }>(
      this.pool,
      'SELECT person_uuid, feature_flag_key, hash_key FROM flag_hash_key_overrides WHERE project_id = $1 AND person_uuid = ANY($2::text[])',
      [projectId, persons],
    );
    const overrides: Record<string, string> = {};
    for (const uuid of persons) for (const row of found) if (row.person_uuid === uuid) overrides[row.feature_flag_key] = row.hash_key;
    return overrides;
  }
}
