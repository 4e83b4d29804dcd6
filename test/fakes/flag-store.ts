/**
 * An in-memory FlagStore for unit tests of the flag management rules: keys unique among
 * flags not deleted, versions counted per update, newest first in pages.
 */
import type { FlagListQuery, FlagStore, FlagUpdate, FlagWrite, StoredFlag } from '../../src/store/types.js';

export class FakeFlagStore implements FlagStore {
  readonly flags: StoredFlag[] = [];

  private keyTaken(projectId: number, key: string, except: number | null): boolean {
    return this.flags.some((f) => f.project_id === projectId && f.key === key && !f.deleted && f.id !== except);
  }

  async list(projectId: number) {
    return this.flags.filter((f) => f.project_id === projectId);
  }
  async page(query: FlagListQuery) {
    const matching = this.flags
      .filter((f) => f.project_id === query.projectId && !f.deleted && (query.active === null || f.active === query.active))
      .filter((f) => query.searchWords.every((w) => `${f.key} ${f.name}`.toLowerCase().includes(w.toLowerCase())))
      .reverse();
    return { count: matching.length, results: matching.slice(query.offset, query.offset + query.limit) };
  }
  async get(projectId: number, id: number) {
    return this.flags.find((f) => f.project_id === projectId && f.id === id) ?? null;
  }
  async create(projectId: number, createdBy: number | null, flag: FlagWrite): Promise<StoredFlag | 'key_taken'> {
    if (this.keyTaken(projectId, flag.key, null)) return 'key_taken';
    const at = new Date().toISOString();
    const stored: StoredFlag = { ...flag, id: this.flags.length + 1, version: 1, project_id: projectId, created_by: createdBy, created_at: at, updated_at: at };
    this.flags.push(stored);
    return stored;
  }
  async update(projectId: number, id: number, patch: Partial<FlagWrite>): Promise<FlagUpdate> {
    const flag = await this.get(projectId, id);
    if (!flag) return 'not_found';
    const next = { ...flag, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) };
    if (!next.deleted && this.keyTaken(projectId, next.key, id)) return 'key_taken';
    Object.assign(flag, next, { version: flag.version + 1, updated_at: new Date().toISOString() });
    return flag;
  }
  async remove(projectId: number, id: number) {
    const index = this.flags.findIndex((f) => f.project_id === projectId && f.id === id);
    if (index < 0) return false;
    this.flags.splice(index, 1);
    return true;
  }
  async groupTypeMapping() {
    return {};
  }
  async prepareEvaluation() {
    return { personProperties: null, groupTypeMapping: {}, groupProperties: {}, hashKeyOverrides: {} };
  }
  /** No cohorts: flags naming one are refused as naming an unknown cohort. */
  async cohortDefinitions() {
    return [];
  }
}
