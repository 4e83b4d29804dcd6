/** Groups as the management API reads them; ingestion writes them (sqlite/ingest.ts). */
import type { GroupCursor, GroupStore, GroupType, StoredGroup } from '../types.js';
import type { Sqlite } from './database.js';
import { groupFromRow as groupOf, groupTypeFromRow as typeOf, propertyNamesByType } from '../person-rows.js';

type Row = Record<string, unknown>;

export class SqliteGroupStore implements GroupStore {
  constructor(private readonly db: Sqlite) {}

  async list(query: { projectId: number; groupTypeIndex: number; search: string | null; after: GroupCursor | null; limit: number }) {
    const where = ['project_id = ?', 'group_type_index = ?'];
    const params: unknown[] = [query.projectId, query.groupTypeIndex];
    if (query.search !== null) {
      where.push("(instr(lower(group_key), lower(?)) > 0 OR instr(lower(json_extract(properties, '$.name')), lower(?)) > 0)");
      params.push(query.search, query.search);
    }
    if (query.after !== null) {
      where.push('(created_at < ? OR (created_at = ? AND group_key < ?))');
      params.push(query.after.created_at, query.after.created_at, query.after.group_key);
    }
    const rows = this.db
      .prepare(`SELECT * FROM groups WHERE ${where.join(' AND ')} ORDER BY created_at DESC, group_key DESC LIMIT ?`)
      .all(...params, query.limit + 1) as Row[];
    return { results: rows.slice(0, query.limit).map(groupOf), more: rows.length > query.limit };
  }

  async find(projectId: number, groupTypeIndex: number, groupKey: string): Promise<StoredGroup | null> {
    const row = this.db.prepare('SELECT * FROM groups WHERE project_id = ? AND group_type_index = ? AND group_key = ?').get(projectId, groupTypeIndex, groupKey) as Row | undefined;
    return row ? groupOf(row) : null;
  }

  async ofKeys(projectId: number, groupTypeIndex: number, keys: readonly string[]): Promise<StoredGroup[]> {
    if (keys.length === 0) return [];
    // One bound JSON list, however many keys (no statement built per count).
    const rows = this.db
      .prepare('SELECT * FROM groups WHERE project_id = ? AND group_type_index = ? AND group_key IN (SELECT value FROM json_each(?))')
      .all(projectId, groupTypeIndex, JSON.stringify(keys)) as Row[];
    return rows.map(groupOf);
  }

  async propertyOfGroups(projectId: number, groupTypeIndex: number, key: string, limit: number): Promise<Map<string, string>> {
    // json_each matches the key exactly, whatever characters it holds (a JSON path would not).
    const rows = this.db
      .prepare(
        `SELECT g.group_key AS group_key, j.type AS type, j.value AS value FROM groups g, json_each(g.properties) j
         WHERE g.project_id = ? AND g.group_type_index = ? AND j.key = ? AND j.type != 'null' LIMIT ?`,
      )
      .all(projectId, groupTypeIndex, key, limit) as { group_key: string; type: string; value: unknown }[];
    return new Map(rows.map((row) => [row.group_key, row.type === 'true' || row.type === 'false' ? row.type : String(row.value)]));
  }

  async types(projectId: number): Promise<GroupType[]> {
    return (this.db.prepare('SELECT * FROM group_types WHERE project_id = ? ORDER BY group_type_index').all(projectId) as Row[]).map(typeOf);
  }

  async renameType(projectId: number, groupTypeIndex: number, names: { name_singular?: string | null; name_plural?: string | null }): Promise<GroupType | null> {
    const sets: string[] = [];
    const params: unknown[] = [];
    for (const column of ['name_singular', 'name_plural'] as const) {
      if (names[column] === undefined) continue;
      sets.push(`${column} = ?`);
      params.push(names[column]);
    }
    if (sets.length > 0) this.db.prepare(`UPDATE group_types SET ${sets.join(', ')} WHERE project_id = ? AND group_type_index = ?`).run(...params, projectId, groupTypeIndex);
    const row = this.db.prepare('SELECT * FROM group_types WHERE project_id = ? AND group_type_index = ?').get(projectId, groupTypeIndex) as Row | undefined;
    return row ? typeOf(row) : null;
  }

  async propertyNames(projectId: number): Promise<Map<number, { name: string; count: number }[]>> {
    const rows = this.db
      .prepare(
        `SELECT g.group_type_index AS idx, j.key AS name, count(*) AS n FROM groups g, json_each(g.properties) j
         WHERE g.project_id = ? GROUP BY 1, 2 ORDER BY 1, 3 DESC, 2`,
      )
      .all(projectId) as { idx: number; name: string; n: number }[];
    return propertyNamesByType(rows);
  }
}
