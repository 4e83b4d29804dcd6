/**
 * Actions in PostgreSQL: the same lists and answers as the SQLite store (sqlite/actions.ts). The
 * steps are one `json` list, read and written whole with the action. Every read is scoped by project.
 */
import type { ActionStore, ActionWrite, Page, PageOf, StoredAction } from '../types.js';
import { actionFromRow, ACTION_COLUMNS } from '../action-rows.js';
import { likeContains } from '../definition-sql.js';
import { isInt4, one, Params, rows } from './database.js';
import type { PgPool } from './database.js';

/** A writable field as PostgreSQL binds it: JSON fields as their text. */
const bind = (value: unknown): unknown => (value !== null && typeof value === 'object' ? JSON.stringify(value) : value);

export class PostgresActionStore implements ActionStore {
  constructor(private readonly pool: PgPool) {}

  async pageActions(query: Page & { projectId: number; searchWords: string[] }): Promise<PageOf<StoredAction>> {
    const params = new Params();
    const where = [`project_id = ${params.add(query.projectId)}`, 'NOT deleted'];
    // LIKE as SQLite's: ASCII letters ignore case.
    for (const word of query.searchWords) where.push(`name ILIKE ${params.add(likeContains(word))}`);
    const whereSql = where.join(' AND ');
    const count = await one<{ n: string }>(this.pool, `SELECT count(*) AS n FROM actions WHERE ${whereSql}`, params.values);
    const page = await rows(
      this.pool,
      `SELECT * FROM actions WHERE ${whereSql} ORDER BY lower(name) COLLATE "C", id LIMIT ${params.add(query.limit)} OFFSET ${params.add(query.offset)}`,
      params.values,
    );
    return { count: Number(count?.n ?? 0), results: page.map(actionFromRow) };
  }

  async getAction(projectId: number, id: number): Promise<StoredAction | null> {
    if (!isInt4(id)) return null;
    const row = await one(this.pool, 'SELECT * FROM actions WHERE project_id = $1 AND id = $2', [projectId, id]);
    return row ? actionFromRow(row) : null;
  }

  async createAction(projectId: number, userId: number, action: ActionWrite): Promise<StoredAction> {
    const now = new Date().toISOString();
    const row = await one(
      this.pool,
      `INSERT INTO actions (project_id, ${ACTION_COLUMNS.join(', ')}, created_by, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
      [projectId, ...ACTION_COLUMNS.map((column) => bind(action[column])), userId, now, now],
    );
    return actionFromRow(row!);
  }

  async updateAction(projectId: number, id: number, patch: Partial<ActionWrite>): Promise<StoredAction | null> {
    if (!isInt4(id)) return null;
    const params = new Params();
    const set = ACTION_COLUMNS.filter((column) => patch[column] !== undefined).map((column) => `${column} = ${params.add(bind(patch[column]))}`);
    set.push(`updated_at = ${params.add(new Date().toISOString())}`);
    const row = await one(
      this.pool,
      `UPDATE actions SET ${set.join(', ')} WHERE project_id = ${params.add(projectId)} AND id = ${params.add(id)} RETURNING *`,
      params.values,
    );
    return row ? actionFromRow(row) : null;
  }

  async liveActionNamed(projectId: number, name: string, exceptId: number | null): Promise<StoredAction | null> {
    const row = await one(
      this.pool,
      'SELECT * FROM actions WHERE project_id = $1 AND name = $2 AND NOT deleted AND id IS DISTINCT FROM $3 LIMIT 1',
      [projectId, name, exceptId],
    );
    return row ? actionFromRow(row) : null;
  }
}
