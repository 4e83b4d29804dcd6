/**
 * Groups as the management API reads them, in PostgreSQL: the same order, search and paging as
 * the SQLite store (sqlite/groups.ts). Ingestion writes them (postgres/ingest.ts).
 */
import type { GroupCursor, GroupStore, GroupType, StoredGroup } from '../types.js';
import { groupFromRow, groupTypeFromRow, propertyNamesByType } from '../person-rows.js';
import { one, Params, rows, type PgPool } from './database.js';

export class PostgresGroupStore implements GroupStore {
  constructor(private readonly pool: PgPool) {}

  async list(query: { projectId: number; groupTypeIndex: number; search: string | null; after: GroupCursor | null; limit: number }) {
    const params = new Params();
    const where = [`project_id = ${params.add(query.projectId)}`, `group_type_index = ${params.add(query.groupTypeIndex)}`];
    if (query.search !== null) {
      const search = params.add(query.search);
      where.push(`(strpos(lower(group_key), lower(${search})) > 0 OR strpos(lower(properties->>'name'), lower(${search})) > 0)`);
    }
    if (query.after !== null) {
      // Keys compare as the characters they are, as SQLite's do.
      where.push(`(created_at, group_key COLLATE "C") < (${params.add(query.after.created_at)}, ${params.add(query.after.group_key)} COLLATE "C")`);
    }
    const found = await rows(
      this.pool,
      `SELECT * FROM groups WHERE ${where.join(' AND ')} ORDER BY created_at DESC, group_key COLLATE "C" DESC LIMIT ${params.add(query.limit + 1)}`,
      params.values,
    );
    return { results: found.slice(0, query.limit).map(groupFromRow), more: found.length > query.limit };
  }

  async find(projectId: number, groupTypeIndex: number, groupKey: string): Promise<StoredGroup | null> {
    const row = await one(this.pool, 'SELECT * FROM groups WHERE project_id = $1 AND group_type_index = $2 AND group_key = $3', [projectId, groupTypeIndex, groupKey]);
    return row ? groupFromRow(row) : null;
  }

  async ofKeys(projectId: number, groupTypeIndex: number, keys: readonly string[]): Promise<StoredGroup[]> {
    if (keys.length === 0) return [];
    const found = await rows(this.pool, 'SELECT * FROM groups WHERE project_id = $1 AND group_type_index = $2 AND group_key = ANY($3::text[])', [projectId, groupTypeIndex, [...keys]]);
    return found.map(groupFromRow);
  }

  async propertyOfGroups(projectId: number, groupTypeIndex: number, key: string, limit: number): Promise<Map<string, string>> {
    const found = await rows(
      this.pool,
      // The key is text (json -> also takes an integer index); JSON null counts as not having it.
      `SELECT group_key, properties->>($3::text) AS value FROM groups
       WHERE project_id = $1 AND group_type_index = $2 AND coalesce(json_typeof(properties->($3::text)), 'null') <> 'null' LIMIT $4`,
      [projectId, groupTypeIndex, key, limit],
    );
    return new Map(found.map((row) => [row.group_key as string, row.value as string]));
  }

  async types(projectId: number): Promise<GroupType[]> {
    return (await rows(this.pool, 'SELECT * FROM group_types WHERE project_id = $1 ORDER BY group_type_index', [projectId])).map(groupTypeFromRow);
  }

  async renameType(projectId: number, groupTypeIndex: number, names: { name_singular?: string | null; name_plural?: string | null }): Promise<GroupType | null> {
    const params = new Params();
    const sets: string[] = [];
    for (const column of ['name_singular', 'name_plural'] as const) {
      if (names[column] !== undefined) sets.push(`${column} = ${params.add(names[column])}`);
    }
    const where = `project_id = ${params.add(projectId)} AND group_type_index = ${params.add(groupTypeIndex)}`;
    const row =
      sets.length > 0
        ? await one(this.pool, `UPDATE group_types SET ${sets.join(', ')} WHERE ${where} RETURNING *`, params.values)
        : await one(this.pool, `SELECT * FROM group_types WHERE ${where}`, params.values);
    return row ? groupTypeFromRow(row) : null;
  }

  async propertyNames(projectId: number): Promise<Map<number, { name: string; count: number }[]>> {
    // json_each refuses a value that is not an object: such a group has no property names.
    const found = await rows<{ idx: number; name: string; n: string }>(
      this.pool,
      `SELECT g.group_type_index AS idx, j.key AS name, count(*) AS n
       FROM groups g, json_each(CASE WHEN json_typeof(g.properties) = 'object' THEN g.properties ELSE '{}'::json END) j
       WHERE g.project_id = $1 GROUP BY 1, 2 ORDER BY 1, 3 DESC, j.key COLLATE "C"`,
      [projectId],
    );
    return propertyNamesByType(found);
  }
}
