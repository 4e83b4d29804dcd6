/**
 * Saved insights, dashboards and the tiles that place one on the other, in SQLite. JSON fields
 * (query, filters, tags, layouts) are stored as text; every read is scoped by project.
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
import { isUniqueViolation, toBool, type Sqlite } from './database.js';
import { dashboardFromRow, insightFromRow, nextTileSlot, tileFromRow } from '../dashboard-rows.js';
import { likeContains } from '../definition-sql.js';

type Row = Record<string, unknown>;

/** Column text of a writable field, in the shape SQLite binds. */
const bind = (value: unknown): unknown => {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  return value;
};

/** `SET a = ?, b = ?` and its values, for the fields a patch gives. */
function assignments(patch: Record<string, unknown>): { sql: string; values: unknown[] } {
  const entries = Object.entries(patch).filter(([, value]) => value !== undefined);
  return { sql: entries.map(([column]) => `${column} = ?`).join(', '), values: entries.map(([, value]) => bind(value)) };
}

export class SqliteDashboardStore implements DashboardStore {
  constructor(private readonly db: Sqlite) {}

  async pageInsights(query: InsightListQuery): Promise<PageOf<StoredInsight>> {
    const where = ['i.project_id = ?', 'i.deleted = 0'];
    const params: unknown[] = [query.projectId];
    if (query.favorited !== null) {
      where.push('i.favorited = ?');
      params.push(query.favorited ? 1 : 0);
    }
    if (query.dashboardId !== null) {
      where.push('EXISTS (SELECT 1 FROM dashboard_tiles t WHERE t.insight_id = i.id AND t.dashboard_id = ? AND t.deleted = 0)');
      params.push(query.dashboardId);
    }
    for (const word of query.searchWords) {
      where.push("(i.name LIKE ? ESCAPE '\\' OR i.description LIKE ? ESCAPE '\\')");
      params.push(likeContains(word), likeContains(word));
    }
    const whereSql = where.join(' AND ');
    const count = (this.db.prepare(`SELECT count(*) AS n FROM insights i WHERE ${whereSql}`).get(...params) as { n: number }).n;
    const rows = this.db
      .prepare(`SELECT i.* FROM insights i WHERE ${whereSql} ORDER BY i.last_modified_at DESC, i.id DESC LIMIT ? OFFSET ?`)
      .all(...params, query.limit, query.offset) as Row[];
    return { count, results: rows.map(insightFromRow) };
  }

  async getInsight(projectId: number, id: number): Promise<StoredInsight | null> {
    const row = this.db.prepare('SELECT * FROM insights WHERE project_id = ? AND id = ?').get(projectId, id) as Row | undefined;
    return row ? insightFromRow(row) : null;
  }

  async getInsightByShortId(projectId: number, shortId: string): Promise<StoredInsight | null> {
    const row = this.db.prepare('SELECT * FROM insights WHERE project_id = ? AND short_id = ?').get(projectId, shortId) as Row | undefined;
    return row ? insightFromRow(row) : null;
  }

  async createInsight(projectId: number, userId: number, insight: InsightWrite): Promise<StoredInsight> {
    const now = new Date().toISOString();
    // 62^8 ids: a clash is next to impossible, but a retry costs nothing.
    for (;;) {
      try {
        const row = this.db
          .prepare(
            `INSERT INTO insights (project_id, short_id, name, description, query, favorited, tags, deleted, created_by, created_at, last_modified_at, last_modified_by)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
          )
          .get(
            projectId,
            randomBase62(8),
            insight.name,
            insight.description,
            bind(insight.query),
            bind(insight.favorited),
            bind(insight.tags),
            bind(insight.deleted),
            userId,
            now,
            now,
            userId,
          ) as Row;
        return insightFromRow(row);
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }
    }
  }

  async updateInsight(projectId: number, id: number, userId: number, patch: Partial<InsightWrite>): Promise<StoredInsight | null> {
    const set = assignments({ ...patch, last_modified_at: new Date().toISOString(), last_modified_by: userId });
    const row = this.db.prepare(`UPDATE insights SET ${set.sql} WHERE project_id = ? AND id = ? RETURNING *`).get(...set.values, projectId, id) as Row | undefined;
    return row ? insightFromRow(row) : null;
  }

  async pageDashboards(query: Page & { projectId: number; searchWords: string[] }): Promise<PageOf<StoredDashboard>> {
    const where = ['project_id = ?', 'deleted = 0'];
    const params: unknown[] = [query.projectId];
    for (const word of query.searchWords) {
      where.push("(name LIKE ? ESCAPE '\\' OR description LIKE ? ESCAPE '\\')");
      params.push(likeContains(word), likeContains(word));
    }
    const whereSql = where.join(' AND ');
    const count = (this.db.prepare(`SELECT count(*) AS n FROM dashboards WHERE ${whereSql}`).get(...params) as { n: number }).n;
    const rows = this.db
      .prepare(`SELECT * FROM dashboards WHERE ${whereSql} ORDER BY pinned DESC, name COLLATE NOCASE, id LIMIT ? OFFSET ?`)
      .all(...params, query.limit, query.offset) as Row[];
    return { count, results: rows.map(dashboardFromRow) };
  }

  async getDashboard(projectId: number, id: number): Promise<StoredDashboard | null> {
    const row = this.db.prepare('SELECT * FROM dashboards WHERE project_id = ? AND id = ?').get(projectId, id) as Row | undefined;
    return row ? dashboardFromRow(row) : null;
  }

  async createDashboard(projectId: number, userId: number, dashboard: DashboardWrite): Promise<StoredDashboard> {
    const now = new Date().toISOString();
    const row = this.db
      .prepare(
        `INSERT INTO dashboards (project_id, name, description, pinned, filters, tags, deleted, created_by, created_at, last_modified_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      )
      .get(
        projectId,
        dashboard.name,
        dashboard.description,
        bind(dashboard.pinned),
        bind(dashboard.filters),
        bind(dashboard.tags),
        bind(dashboard.deleted),
        userId,
        now,
        now,
      ) as Row;
    return dashboardFromRow(row);
  }

  async updateDashboard(projectId: number, id: number, patch: Partial<DashboardWrite>): Promise<StoredDashboard | null> {
    const set = assignments({ ...patch, last_modified_at: new Date().toISOString() });
    const row = this.db.prepare(`UPDATE dashboards SET ${set.sql} WHERE project_id = ? AND id = ? RETURNING *`).get(...set.values, projectId, id) as Row | undefined;
    return row ? dashboardFromRow(row) : null;
  }

  async tilesOfDashboard(dashboardId: number): Promise<StoredTile[]> {
    return (this.db.prepare('SELECT * FROM dashboard_tiles WHERE dashboard_id = ? ORDER BY id').all(dashboardId) as Row[]).map(tileFromRow);
  }

  async tilesOfInsight(insightId: number): Promise<StoredTile[]> {
    return (this.db.prepare('SELECT * FROM dashboard_tiles WHERE insight_id = ? ORDER BY id').all(insightId) as Row[]).map(tileFromRow);
  }

  async placeTile(dashboardId: number, insightId: number): Promise<StoredTile> {
    const place = this.db.transaction(() => {
      const existing = this.db.prepare('SELECT * FROM dashboard_tiles WHERE dashboard_id = ? AND insight_id = ?').get(dashboardId, insightId) as Row | undefined;
      if (existing && !toBool(existing.deleted)) return existing;
      const layouts = JSON.stringify({ sm: this.nextSlot(dashboardId) });
      if (existing) return this.db.prepare('UPDATE dashboard_tiles SET deleted = 0, layouts = ? WHERE id = ? RETURNING *').get(layouts, existing.id) as Row;
      return this.db.prepare('INSERT INTO dashboard_tiles (dashboard_id, insight_id, layouts) VALUES (?, ?, ?) RETURNING *').get(dashboardId, insightId, layouts) as Row;
    });
    return tileFromRow(place());
  }

  async updateTile(dashboardId: number, tileId: number, patch: TileUpdate): Promise<StoredTile | null> {
    const set = assignments(patch as Record<string, unknown>);
    if (set.sql === '') {
      const row = this.db.prepare('SELECT * FROM dashboard_tiles WHERE dashboard_id = ? AND id = ?').get(dashboardId, tileId) as Row | undefined;
      return row ? tileFromRow(row) : null;
    }
    const row = this.db.prepare(`UPDATE dashboard_tiles SET ${set.sql} WHERE dashboard_id = ? AND id = ? RETURNING *`).get(...set.values, dashboardId, tileId) as Row | undefined;
    return row ? tileFromRow(row) : null;
  }

  /** Where a new tile goes: the first free slot among the live tiles (dashboard-rows.ts). */
  private nextSlot(dashboardId: number): { x: number; y: number; w: number; h: number } {
    const live = this.db.prepare('SELECT layouts FROM dashboard_tiles WHERE dashboard_id = ? AND deleted = 0').all(dashboardId) as Row[];
    return nextTileSlot(live.map((row) => row.layouts));
  }
}
