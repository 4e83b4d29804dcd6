/**
 * The rules of saved insights: the query is checked as the query API would check it, an insight
 * is placed on dashboards of its own project only, and deletion is soft (PATCH `deleted`).
 */
import { notFound, validationError } from '../kernel/errors.js';
import type { DashboardStore, InsightListQuery, InsightWrite, PageOf, StoredInsight, StoredTile, TenancyStore, User } from '../store/types.js';
import { numericId } from '../util/numeric-id.js';
import { checkSavedQuery, type ValidateNode } from './query-node.js';

/** A create or update as the API receives it (types already checked by the route's schema). */
export interface InsightInput {
  name?: string;
  description?: string;
  query?: unknown;
  favorited?: boolean;
  tags?: string[];
  deleted?: boolean;
  /** Ids of the dashboards the insight is on, all of them: missing ones lose their tile. */
  dashboards?: number[];
}

export interface SavedInsightsDeps {
  store: DashboardStore;
  users: Pick<TenancyStore, 'getUser'>;
  validateQuery: ValidateNode;
}

export class SavedInsights {
  constructor(private readonly deps: SavedInsightsDeps) {}

  page(query: InsightListQuery): Promise<PageOf<StoredInsight>> {
    return this.deps.store.pageInsights(query);
  }

  /** An insight of the project (soft-deleted ones too) by id, or 404. */
  async get(projectId: number, id: string): Promise<StoredInsight> {
    const numeric = numericId(id);
    const insight = numeric === null ? null : await this.deps.store.getInsight(projectId, numeric);
    if (!insight) throw notFound();
    return insight;
  }

  async byShortId(projectId: number, shortId: string): Promise<StoredInsight | null> {
    return this.deps.store.getInsightByShortId(projectId, shortId);
  }

  async create(projectId: number, userId: number, input: InsightInput): Promise<StoredInsight> {
    if (input.query === undefined) throw validationError('This field is required.', 'query', 'required');
    const write: InsightWrite = {
      name: input.name ?? '',
      description: input.description ?? '',
      query: checkSavedQuery(input.query, this.deps.validateQuery),
      favorited: input.favorited ?? false,
      tags: input.tags ?? [],
      deleted: false,
    };
    if (input.dashboards) await this.checkDashboards(projectId, input.dashboards);
    const created = await this.deps.store.createInsight(projectId, userId, write);
    if (input.dashboards) await this.placeOn(created, input.dashboards);
    return created;
  }

  async update(projectId: number, id: string, userId: number, input: InsightInput): Promise<StoredInsight> {
    const current = await this.get(projectId, id);
    const patch: Partial<InsightWrite> = {
      name: input.name,
      description: input.description,
      query: input.query === undefined ? undefined : checkSavedQuery(input.query, this.deps.validateQuery),
      favorited: input.favorited,
      tags: input.tags,
      deleted: input.deleted,
    };
    if (input.dashboards) await this.checkDashboards(projectId, input.dashboards);
    const updated = await this.deps.store.updateInsight(projectId, current.id, userId, patch);
    if (!updated) throw notFound();
    if (input.dashboards) await this.placeOn(updated, input.dashboards);
    return updated;
  }

  tiles(insight: StoredInsight): Promise<StoredTile[]> {
    return this.deps.store.tilesOfInsight(insight.id);
  }

  /** These users (creators, last editors), by id. */
  async usersById(ids: (number | null)[]): Promise<Map<number, User>> {
    const users = new Map<number, User>();
    for (const id of new Set(ids)) {
      const user = id === null ? null : await this.deps.users.getUser(id);
      if (user) users.set(user.id, user);
    }
    return users;
  }

  private async checkDashboards(projectId: number, ids: number[]): Promise<void> {
    for (const [index, id] of ids.entries()) {
      const dashboard = await this.deps.store.getDashboard(projectId, id);
      // Another project's (or organization's) dashboard is as unknown as a missing one.
      if (!dashboard || dashboard.deleted) throw validationError(`Dashboard ${id} does not exist.`, `dashboards.${index}`, 'invalid_choice');
    }
  }

  /** Tiles on exactly these dashboards: new ones placed, others marked deleted. */
  private async placeOn(insight: StoredInsight, dashboardIds: number[]): Promise<void> {
    const wanted = new Set(dashboardIds);
    for (const tile of await this.deps.store.tilesOfInsight(insight.id)) {
      if (!tile.deleted && !wanted.has(tile.dashboard_id)) await this.deps.store.updateTile(tile.dashboard_id, tile.id, { deleted: true });
    }
    for (const id of wanted) await this.deps.store.placeTile(id, insight.id);
  }
}
