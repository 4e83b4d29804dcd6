/**
 * The rules of dashboards: their filters are checked when saved (a date the query API could not
 * read is a 400 here, not a broken tile later), tiles are moved or removed by id, and deletion
 * is soft. Which insight a tile shows is the insight's business (`dashboards` on the insight).
 */
import { notFound, validationError } from '../kernel/errors.js';
import { isPlainObject } from '../kernel/json.js';
import type { DashboardFilters, DashboardStore, DashboardWrite, Page, PageOf, StoredDashboard, StoredInsight, StoredTile, TileLayouts, TileUpdate } from '../store/types.js';
import { numericId } from '../util/numeric-id.js';
import { resolveDateRange } from '../insights/time/index.js';

export interface DashboardInput {
  name?: string;
  description?: string;
  pinned?: boolean;
  filters?: unknown;
  tags?: string[];
  deleted?: boolean;
  /** Changes to tiles already on the dashboard, by tile id. */
  tiles?: { id: number; layouts?: unknown; color?: string | null; deleted?: boolean }[];
}

/** A tile as shown: the tile and its (live) insight. */
export interface PlacedTile {
  tile: StoredTile;
  insight: StoredInsight;
}

/** Columns of the dashboard grid (PostHog's react-grid-layout uses 12). */
export const GRID_COLUMNS = 12;
const MAX_ROW = 10_000;

export class Dashboards {
  constructor(private readonly store: DashboardStore) {}

  page(query: Page & { projectId: number; searchWords: string[] }): Promise<PageOf<StoredDashboard>> {
    return this.store.pageDashboards(query);
  }

  /** A dashboard of the project (soft-deleted ones too) by id, or 404. */
  async get(projectId: number, id: string): Promise<StoredDashboard> {
    const numeric = numericId(id);
    const dashboard = numeric === null ? null : await this.store.getDashboard(projectId, numeric);
    if (!dashboard) throw notFound();
    return dashboard;
  }

  create(projectId: number, userId: number, input: DashboardInput): Promise<StoredDashboard> {
    const write: DashboardWrite = {
      name: input.name ?? '',
      description: input.description ?? '',
      pinned: input.pinned ?? false,
      filters: input.filters === undefined ? {} : checkFilters(input.filters),
      tags: input.tags ?? [],
      deleted: false,
    };
    return this.store.createDashboard(projectId, userId, write);
  }

  async update(projectId: number, id: string, input: DashboardInput): Promise<StoredDashboard> {
    const current = await this.get(projectId, id);
    const patch: Partial<DashboardWrite> = {
      name: input.name,
      description: input.description,
      pinned: input.pinned,
      filters: input.filters === undefined ? undefined : checkFilters(input.filters),
      tags: input.tags,
      deleted: input.deleted,
    };
    const changes = (input.tiles ?? []).map((change, index): [number, TileUpdate] => [
      change.id,
      {
        layouts: change.layouts === undefined ? undefined : checkLayouts(change.layouts, `tiles.${index}.layouts`),
        color: change.color,
        deleted: change.deleted,
      },
    ]);
    const tileIds = new Set((await this.store.tilesOfDashboard(current.id)).map((tile) => tile.id));
    changes.forEach(([tileId], index) => {
      if (!tileIds.has(tileId)) throw validationError(`Tile ${tileId} is not on this dashboard.`, `tiles.${index}.id`, 'invalid_choice');
    });
    const updated = await this.store.updateDashboard(projectId, current.id, patch);
    if (!updated) throw notFound();
    for (const [tileId, change] of changes) await this.store.updateTile(current.id, tileId, change);
    return updated;
  }

  /** The live tiles of the dashboard with their insights (deleted insights leave no tile). */
  async placedTiles(dashboard: StoredDashboard, insightOf: (id: number) => Promise<StoredInsight | null>): Promise<PlacedTile[]> {
    const placed: PlacedTile[] = [];
    for (const tile of await this.store.tilesOfDashboard(dashboard.id)) {
      if (tile.deleted) continue;
      const insight = await insightOf(tile.insight_id);
      if (insight && !insight.deleted) placed.push({ tile, insight });
    }
    return placed;
  }
}

/** Dashboard filters: dates the query API can read, property filters as objects. */
export function checkFilters(value: unknown): DashboardFilters {
  if (!isPlainObject(value)) throw validationError('filters must be an object.', 'filters');
  const filters: DashboardFilters = {};
  for (const field of ['date_from', 'date_to'] as const) {
    const text = value[field];
    if (text === undefined || text === null) continue;
    if (typeof text !== 'string' || text.length > 100) throw validationError('A date or a relative date such as -7d is required.', `filters.${field}`, 'invalid_date');
    filters[field] = text;
  }
  // Reading the range as the query API would finds a bad date (and names it) before it is saved.
  resolveDateRange(filters, { interval: 'day', timeZone: 'UTC', weekStartDay: 0, now: new Date(), earliest: 0, attr: 'filters.' });
  if (value.properties !== undefined && value.properties !== null) {
    if (!Array.isArray(value.properties) || value.properties.length > 100) throw validationError('properties must be a list of at most 100 property filters.', 'filters.properties');
    value.properties.forEach((filter, index) => {
      if (!isPlainObject(filter) || typeof filter.key !== 'string') throw validationError('A property filter is an object with a key.', `filters.properties.${index}`);
    });
    filters.properties = value.properties;
  }
  return filters;
}

/** `{sm: {x, y, w, h}, xs: …}`: whole numbers that keep the tile inside the grid. */
export function checkLayouts(value: unknown, attr: string): TileLayouts {
  if (!isPlainObject(value)) throw validationError('layouts must be an object of breakpoints.', attr);
  const layouts: TileLayouts = {};
  for (const [breakpoint, slot] of Object.entries(value)) {
    if (!['sm', 'xs'].includes(breakpoint)) throw validationError('Breakpoints are sm and xs.', `${attr}.${breakpoint}`, 'invalid_choice');
    if (!isPlainObject(slot)) throw validationError('A layout is {x, y, w, h}.', `${attr}.${breakpoint}`);
    const columns = breakpoint === 'xs' ? 1 : GRID_COLUMNS;
    const read = (name: 'x' | 'y' | 'w' | 'h', min: number, max: number): number => {
      const n = slot[name];
      if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
        throw validationError(`A whole number from ${min} to ${max} is required.`, `${attr}.${breakpoint}.${name}`);
      }
      return n;
    };
    const x = read('x', 0, columns - 1);
    const w = read('w', 1, columns - x);
    layouts[breakpoint] = { x, y: read('y', 0, MAX_ROW), w, h: read('h', 1, 100) };
  }
  return layouts;
}
