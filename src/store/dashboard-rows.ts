/**
 * What the dashboard stores of both engines share: row → record mappers (JSON as text or parsed,
 * booleans as 0/1 or true/false) and where a new tile goes on the grid.
 */
import type { JsonObject } from '../kernel/json.js';
import type { DashboardFilters, StoredDashboard, StoredInsight, StoredTile, TileLayouts } from './types.js';
import { jsonColumn, nullableNumber, toBool } from './rows.js';

type Row = Record<string, unknown>;

export const insightFromRow = (row: Row): StoredInsight => ({
  id: Number(row.id),
  project_id: row.project_id as number,
  short_id: row.short_id as string,
  name: row.name as string,
  description: row.description as string,
  query: jsonColumn<JsonObject>(row.query, {}),
  favorited: toBool(row.favorited),
  tags: jsonColumn<string[]>(row.tags, []),
  deleted: toBool(row.deleted),
  created_by: nullableNumber(row.created_by),
  created_at: row.created_at as string,
  last_modified_at: row.last_modified_at as string,
  last_modified_by: nullableNumber(row.last_modified_by),
});

export const dashboardFromRow = (row: Row): StoredDashboard => ({
  id: Number(row.id),
  project_id: row.project_id as number,
  name: row.name as string,
  description: row.description as string,
  pinned: toBool(row.pinned),
  filters: jsonColumn<DashboardFilters>(row.filters, {}),
  tags: jsonColumn<string[]>(row.tags, []),
  deleted: toBool(row.deleted),
  created_by: nullableNumber(row.created_by),
  created_at: row.created_at as string,
  last_modified_at: row.last_modified_at as string,
});

export const tileFromRow = (row: Row): StoredTile => ({
  id: Number(row.id),
  dashboard_id: Number(row.dashboard_id),
  insight_id: Number(row.insight_id),
  layouts: jsonColumn<TileLayouts>(row.layouts, {}),
  color: (row.color as string | null) ?? null,
  deleted: toBool(row.deleted),
});

/** Grid width of the default layout; a new tile takes half of it. */
const GRID_COLUMNS = 12;
const TILE_WIDTH = 6;
const TILE_HEIGHT = 5;

/**
 * The first free half-width slot of the 12-column grid, top to bottom and left to right, that
 * overlaps none of the live tiles' layouts (tiles may have been moved anywhere); under the lowest
 * tile if none.
 */
export function nextTileSlot(liveLayouts: unknown[]): { x: number; y: number; w: number; h: number } {
  const placed = liveLayouts
    .map((layouts) => jsonColumn<TileLayouts>(layouts, {}).sm)
    .filter((slot): slot is NonNullable<typeof slot> => slot !== undefined);
  const bottom = placed.reduce((max, slot) => Math.max(max, slot.y + slot.h), 0);
  const free = (x: number, y: number) =>
    placed.every((slot) => x + TILE_WIDTH <= slot.x || slot.x + slot.w <= x || y + TILE_HEIGHT <= slot.y || slot.y + slot.h <= y);
  for (let y = 0; y < bottom; y++) {
    for (let x = 0; x + TILE_WIDTH <= GRID_COLUMNS; x += TILE_WIDTH) if (free(x, y)) return { x, y, w: TILE_WIDTH, h: TILE_HEIGHT };
  }
  return { x: 0, y: bottom, w: TILE_WIDTH, h: TILE_HEIGHT };
}
