/**
 * Actions in SQLite: the steps are one JSON list, read and written whole with the action. Every
 * read is scoped by project.
 */
import type { ActionStore, ActionWrite, Page, PageOf, StoredAction } from '../types.js';
import { actionFromRow, ACTION_COLUMNS as COLUMNS } from '../action-rows.js';
import type { Sqlite } from './database.js';
import { likeContains } from '../definition-sql.js';

type Row = Record<string, unknown>;

const bind = (value: unknown): unknown => (typeof value === 'boolean' ? (value ? 1 : 0) : value !== null && typeof value === 'object' ? JSON.stringify(value) : value);

export class SqliteActionStore implements ActionStore {
  constructor(private readonly db: Sqlite) {}

  async pageActions(query: Page & { projectId: number; searchWords: string[] }): Promise<PageOf<StoredAction>> {
    const where = ['project_id = ?', 'deleted = 0'];
    const params: unknown[] = [query.projectId];
    for (const word of query.searchWords) {
      where.push("name LIKE ? ESCAPE '\\'");
      params.push(likeContains(word));
    }
    const whereSql = where.join(' AND ');
    const count = (this.db.prepare(`SELECT count(*) AS n FROM actions WHERE ${whereSql}`).get(...params) as { n: number }).n;
    const rows = this.db
      .prepare(`SELECT * FROM actions WHERE ${whereSql} ORDER BY name COLLATE NOCASE, id LIMIT ? OFFSET ?`)
      .all(...params, query.limit, query.offset) as Row[];
    return { count, results: rows.map(actionFromRow) };
  }

  async getAction(projectId: number, id: number): Promise<StoredAction | null> {
    const row = this.db.prepare('SELECT * FROM actions WHERE project_id = ? AND id = ?').get(projectId, id) as Row | undefined;
    return row ? actionFromRow(row) : null;
  }

  async createAction(projectId: number, userId: number, action: ActionWrite): Promise<StoredAction> {
    const now = new Date().toISOString();
    const row = this.db
      .prepare(
        `INSERT INTO actions (project_id, ${COLUMNS.join(', ')}, created_by, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      )
      .get(projectId, ...COLUMNS.map((column) => bind(action[column])), userId, now, now) as Row;
    return actionFromRow(row);
  }

  async updateAction(projectId: number, id: number, patch: Partial<ActionWrite>): Promise<StoredAction | null> {
    const given = COLUMNS.filter((column) => patch[column] !== undefined);
    const set = [...given.map((column) => `${column} = ?`), 'updated_at = ?'].join(', ');
    const row = this.db
      .prepare(`UPDATE actions SET ${set} WHERE project_id = ? AND id = ? RETURNING *`)
      .get(...given.map((column) => bind(patch[column])), new Date().toISOString(), projectId, id) as Row | undefined;
    return row ? actionFromRow(row) : null;
  }

  async liveActionNamed(projectId: number, name: string, exceptId: number | null): Promise<StoredAction | null> {
    const row = this.db
      .prepare('SELECT * FROM actions WHERE project_id = ? AND name = ? AND deleted = 0 AND id IS NOT ? LIMIT 1')
      .get(projectId, name, exceptId) as Row | undefined;
    return row ? actionFromRow(row) : null;
  }
}
