/**
 * Saved insights, dashboards and their tiles in PostgreSQL: the same lists, order and answers as
 * the SQLite store (sqlite/dashboards.ts). Every read is scoped by project. Placing a tile locks
 * its dashboard's row, so two nodes placing tiles at once do not pick the same free slot.
 */
import { randomBase62 } from '../../util/keys.js';
import type {
  DashboardStore,
  DashboardWrite,
  InsightListQuery,
  InsightWrite,
  Page,
  PageOf,
  StoredDashboard,
  StoredInsight,
  StoredTile,
  TileUpdate,
} from '../types.js';
import { dashboardFromRow, insightFromRow, nextTileSlot, tileFromRow } from '../dashboard-rows.js';
import { likeContains } from '../definition-sql.js';
import { isInt4, isUniqueViolation, one, Params, rows, transaction, type Row } from './database.js';
import type { PgPool } from './database.js';

/** A writable field as PostgreSQL binds it: JSON fields as their text. */
const bind = (value: unknown): unknown => (value !== null && typeof value === 'object' ? JSON.stringify(value) : value);

/** `a = $n, b = $m` for the fields a patch gives. */
function assignments(patch: Record<string, unknown>, params: Params): string {
  return Object.entries(patch)
    .filter(([, value]) => value !== undefined)
    .map(([column, value]) => `${column} = ${params.add(bind(value))}`)
    .join(', ');
}

/** Every word in the name or the description, ignoring case. */
function searchClauses(words: string[], params: Params, prefix: string): string[] {
  return words.map((word) => {
    const like = params.add(likeContains(word));
    return `(${prefix}name ILIKE ${like} OR ${prefix}description ILIKE ${like})`;
  });
}

export class PostgresDashboardStore implements DashboardStore {
  constructor(private readonly pool: PgPool) {}

  async pageInsights(query: InsightListQuery): Promise<PageOf<StoredInsight>> {
    const params = new Params();
    const where = [`i.project_id = ${params.add(query.projectId)}`, 'NOT i.deleted'];
    if (query.favorited !== null) where.push(`i.favorited = ${params.add(query.favorited)}`);
    if (query.dashboardId !== null) {
      if (!isInt4(query.dashboardId)) return { count: 0, results: [] };
      where.push(`EXISTS (SELECT 1 FROM dashboard_tiles t WHERE t.insight_id = i.id AND t.dashboard_id = ${params.add(query.dashboardId)} AND NOT t.deleted)`);
    }
    where.push(...searchClauses(query.searchWords, params, 'i.'));
    const whereSql = where.join(' AND ');
    const count = await one<{ n: string }>(this.pool, `SELECT count(*) AS n FROM insights i WHERE ${whereSql}`, params.values);
    const page = await rows(
      this.pool,
      `SELECT i.* FROM insights i WHERE ${whereSql} ORDER BY i.last_modified_at DESC, i.id DESC LIMIT ${params.add(query.limit)} OFFSET ${params.add(query.offset)}`,
      params.values,
    );
    return { count: Number(count?.n ?? 0), results: page.map(insightFromRow) };
  }

  async getInsight(projectId: number, id: number): Promise<StoredInsight | null> {
    if (!isInt4(id)) return null;
    const row = await one(this.pool, 'SELECT * FROM insights WHERE project_id = $1 AND id = $2', [projectId, id]);
    return row ? insightFromRow(row) : null;
  }

  async getInsightByShortId(projectId: number, shortId: string): Promise<StoredInsight | null> {
    const row = await one(this.pool, 'SELECT * FROM insights WHERE project_id = $1 AND short_id = $2', [projectId, shortId]);
    return row ? insightFromRow(row) : null;
  }

  async createInsight(projectId: number, userId: number, insight: InsightWrite): Promise<StoredInsight> {
    const now = new Date().toISOString();
    // 62^8 ids: a clash is next to impossible, but a retry costs nothing.
    for (;;) {
      try {
        const row = await one(
          this.pool,
          `INSERT INTO insights (project_id, short_id, name, description, query, favorited, tags, deleted, created_by, created_at, last_modified_at, last_modified_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $9) RETURNING *`,
          [projectId, randomBase62(8), insight.name, insight.description, bind(insight.query), insight.favorited, bind(insight.tags), insight.deleted, userId, now],
        );
        return insightFromRow(row!);
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }
    }
  }

  async updateInsight(projectId: number, id: number, userId: number, patch: Partial<InsightWrite>): Promise<StoredInsight | null> {
    if (!isInt4(id)) return null;
    const params = new Params();
    const set = assignments({ ...patch, last_modified_at: new Date().toISOString(), last_modified_by: userId }, params);
    const row = await one(this.pool, `UPDATE insights SET ${set} WHERE project_id = ${params.add(projectId)} AND id = ${params.add(id)} RETURNING *`, params.values);
    return row ? insightFromRow(row) : null;
  }

  async pageDashboards(query: Page & { projectId: number; searchWords: string[] }): Promise<PageOf<StoredDashboard>> {
    const params = new Params();
    const where = [`project_id = ${params.add(query.projectId)}`, 'NOT deleted', ...searchClauses(query.searchWords, params, '')];
    const whereSql = where.join(' AND ');
    const count = await one<{ n: string }>(this.pool, `SELECT count(*) AS n FROM dashboards WHERE ${whereSql}`, params.values);
    // lower(…) COLLATE "C": names without case, as SQLite's NOCASE orders them.
    const page = await rows(
      this.pool,
      `SELECT * FROM dashboards WHERE ${whereSql} ORDER BY pinned DESC, lower(name) COLLATE "C", id LIMIT ${params.add(query.limit)} OFFSET ${params.add(query.offset)}`,
      params.values,
    );
    return { count: Number(count?.n ?? 0), results: page.map(dashboardFromRow) };
  }

  async getDashboard(projectId: number, id: number): Promise<StoredDashboard | null> {
    if (!isInt4(id)) return null;
    const row = await one(this.pool, 'SELECT * FROM dashboards WHERE project_id = $1 AND id = $2', [projectId, id]);
    return row ? dashboardFromRow(row) : null;
  }

  async createDashboard(projectId: number, userId: number, dashboard: DashboardWrite): Promise<StoredDashboard> {
    const now = new Date().toISOString();
    const row = await one(
      this.pool,
      `INSERT INTO dashboards (project_id, name, description, pinned, filters, tags, deleted, created_by, created_at, last_modified_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING *`,
      [projectId, dashboard.name, dashboard.description, dashboard.pinned, bind(dashboard.filters), bind(dashboard.tags), dashboard.deleted, userId, now],
    );
    return dashboardFromRow(row!);
  }

  async updateDashboard(projectId: number, id: number, patch: Partial<DashboardWrite>): Promise<StoredDashboard | null> {
    if (!isInt4(id)) return null;
    const params = new Params();
    const set = assignments({ ...patch, last_modified_at: new Date().toISOString() }, params);
    const row = await one(this.pool, `UPDATE dashboards SET ${set} WHERE project_id = ${params.add(projectId)} AND id = ${params.add(id)} RETURNING *`, params.values);
    return row ? dashboardFromRow(row) : null;
  }

  async tilesOfDashboard(dashboardId: number): Promise<StoredTile[]> {
    if (!isInt4(dashboardId)) return [];
    return (await rows(this.pool, 'SELECT * FROM dashboard_tiles WHERE dashboard_id = $1 ORDER BY id', [dashboardId])).map(tileFromRow);
  }

  async tilesOfInsight(insightId: number): Promise<StoredTile[]> {
    if (!isInt4(insightId)) return [];
    return (await rows(this.pool, 'SELECT * FROM dashboard_tiles WHERE insight_id = $1 ORDER BY id', [insightId])).map(tileFromRow);
  }

  async placeTile(dashboardId: number, insightId: number): Promise<StoredTile> {
    const row = await transaction(this.pool, async (client): Promise<Row> => {
      // The dashboard's row is the lock: its tiles' free slots stay as read until the commit.
      await client.query('SELECT 1 FROM dashboards WHERE id = $1 FOR UPDATE', [dashboardId]);
      const existing = await one(client, 'SELECT * FROM dashboard_tiles WHERE dashboard_id = $1 AND insight_id = $2', [dashboardId, insightId]);
      if (existing && !existing.deleted) return existing;
      const live = await rows<{ layouts: unknown }>(client, 'SELECT layouts FROM dashboard_tiles WHERE dashboard_id = $1 AND NOT deleted', [dashboardId]);
      const layouts = JSON.stringify({ sm: nextTileSlot(live.map((tile) => tile.layouts)) });
      if (existing) return (await one(client, 'UPDATE dashboard_tiles SET deleted = false, layouts = $1 WHERE id = $2 RETURNING *', [layouts, existing.id]))!;
      return (await one(client, 'INSERT INTO dashboard_tiles (dashboard_id, insight_id, layouts) VALUES ($1, $2, $3) RETURNING *', [dashboardId, insightId, layouts]))!;
    });
    return tileFromRow(row);
  }

  async updateTile(dashboardId: number, tileId: number, patch: TileUpdate): Promise<StoredTile | null> {
    if (!isInt4(dashboardId) || !isInt4(tileId)) return null;
    const params = new Params();
    const set = assignments(patch as Record<string, unknown>, params);
    const where = `dashboard_id = ${params.add(dashboardId)} AND id = ${params.add(tileId)}`;
    const row = set === '' ? await one(this.pool, `SELECT * FROM dashboard_tiles WHERE ${where}`, params.values) : await one(this.pool, `UPDATE dashboard_tiles SET ${set} WHERE ${where} RETURNING *`, params.values);
    return row ? tileFromRow(row) : null;
  }
}
