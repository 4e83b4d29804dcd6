/**
 * Cohorts in SQLite: definitions, and membership materialised in `cohort_people` (written whole
 * by each calculation of a dynamic cohort, or row by row for static ones). Membership writes bump
 * the project's cohort stamp, so flag evaluation (and its threads) reads memberships again.
 */
import type { JsonObject } from '../../kernel/json.js';
import type { CohortStore, CohortWrite, Page, PageOf, StoredCohort } from '../types.js';
import { cohortsKey, type ChangeStamps } from '../change-stamps.js';
import { cohortFromRow } from '../cohort-rows.js';
import { parseJson, type Sqlite } from './database.js';

type Row = Record<string, unknown>;

/** SQLite binds at most 32766 variables; lookups go in chunks well below that. */
const CHUNK = 500;

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

export class SqliteCohortStore implements CohortStore {
  constructor(
    private readonly db: Sqlite,
    private readonly stamps: ChangeStamps,
  ) {}

  async list(projectId: number | null): Promise<StoredCohort[]> {
    const rows =
      projectId === null
        ? this.db.prepare('SELECT * FROM cohorts WHERE deleted = 0 ORDER BY id').all()
        : this.db.prepare('SELECT * FROM cohorts WHERE project_id = ? AND deleted = 0 ORDER BY id').all(projectId);
    return (rows as Row[]).map(cohortFromRow);
  }

  async get(projectId: number, id: number): Promise<StoredCohort | null> {
    const row = this.db.prepare('SELECT * FROM cohorts WHERE project_id = ? AND id = ?').get(projectId, id) as Row | undefined;
    return row ? cohortFromRow(row) : null;
  }

  async create(projectId: number, createdBy: number | null, cohort: CohortWrite, members: string[] = []): Promise<StoredCohort> {
    const now = new Date().toISOString();
    const insert = this.db.prepare(
      `INSERT INTO cohorts (project_id, name, description, filters, is_static, deleted, count, last_calculation, created_by, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    );
    const id = this.db.transaction(() => {
      const created = insert.get(
        projectId,
        cohort.name,
        cohort.description,
        JSON.stringify(cohort.filters),
        cohort.is_static ? 1 : 0,
        cohort.deleted ? 1 : 0,
        cohort.is_static ? 0 : null,
        cohort.is_static ? now : null,
        createdBy,
        now,
        now,
      ) as { id: number };
      if (members.length > 0) this.insertMembers(projectId, created.id, members);
      return created.id;
    })();
    if (members.length > 0) this.stamps.bump(cohortsKey(projectId));
    return (await this.get(projectId, id))!;
  }

  async update(projectId: number, id: number, patch: Partial<CohortWrite>): Promise<StoredCohort | null> {
    const sets = ['updated_at = ?'];
    const params: unknown[] = [new Date().toISOString()];
    if (patch.name !== undefined) sets.push('name = ?') && params.push(patch.name);
    if (patch.description !== undefined) sets.push('description = ?') && params.push(patch.description);
    if (patch.deleted !== undefined) sets.push('deleted = ?') && params.push(patch.deleted ? 1 : 0);
    if (patch.filters !== undefined) {
      sets.push('filters = ?', 'version = version + 1');
      params.push(JSON.stringify(patch.filters));
    }
    const row = this.db.prepare(`UPDATE cohorts SET ${sets.join(', ')} WHERE project_id = ? AND id = ? RETURNING *`).get(...params, projectId, id) as Row | undefined;
    if (row && patch.deleted !== undefined) this.stamps.bump(cohortsKey(projectId));
    return row ? cohortFromRow(row) : null;
  }

  async startCalculation(projectId: number, id: number): Promise<number | null> {
    const row = this.db.prepare('UPDATE cohorts SET is_calculating = 1 WHERE project_id = ? AND id = ? RETURNING version').get(projectId, id) as { version: number } | undefined;
    return row?.version ?? null;
  }

  async finishCalculation(projectId: number, id: number, version: number, personUuids: Iterable<string>): Promise<boolean> {
    const db = this.db;
    // Only persons that still exist: one deleted while the calculation ran stays out.
    const insert = db.prepare(
      'INSERT OR IGNORE INTO cohort_people (cohort_id, person_uuid, project_id) SELECT ?, uuid, project_id FROM persons WHERE uuid = ? AND project_id = ?',
    );
    const stored = db.transaction(() => {
      const current = db.prepare('SELECT version FROM cohorts WHERE project_id = ? AND id = ?').get(projectId, id) as { version: number } | undefined;
      if (!current || current.version !== version) {
        db.prepare('UPDATE cohorts SET is_calculating = 0 WHERE project_id = ? AND id = ?').run(projectId, id);
        return false;
      }
      db.prepare('DELETE FROM cohort_people WHERE cohort_id = ?').run(id);
      let count = 0;
      for (const uuid of personUuids) count += insert.run(id, uuid, projectId).changes;
      db.prepare('UPDATE cohorts SET is_calculating = 0, count = ?, last_calculation = ?, errors_calculating = 0, last_error = NULL WHERE id = ?').run(
        count,
        new Date().toISOString(),
        id,
      );
      return true;
    })();
    if (stored) this.stamps.bump(cohortsKey(projectId));
    return stored;
  }

  /** One process holds the file: its schedule is the only one. */
  async asScheduler<T>(work: () => Promise<T>): Promise<T | null> {
    return work();
  }

  async failCalculation(projectId: number, id: number, error: string): Promise<void> {
    this.db
      .prepare('UPDATE cohorts SET is_calculating = 0, errors_calculating = errors_calculating + 1, last_error = ? WHERE project_id = ? AND id = ?')
      .run(error, projectId, id);
  }

  async addMembers(projectId: number, id: number, personUuids: string[]): Promise<number> {
    const count = this.db.transaction(() => this.insertMembers(projectId, id, personUuids))();
    this.stamps.bump(cohortsKey(projectId));
    return count;
  }

  /** Inside a transaction: adds the persons that exist, returns the new count. */
  private insertMembers(projectId: number, id: number, personUuids: string[]): number {
    const insert = this.db.prepare(
      'INSERT OR IGNORE INTO cohort_people (cohort_id, person_uuid, project_id) SELECT ?, uuid, project_id FROM persons WHERE project_id = ? AND uuid = ?',
    );
    for (const uuid of personUuids) insert.run(id, projectId, uuid);
    return this.recount(projectId, id);
  }

  async removeMember(projectId: number, id: number, personUuid: string): Promise<boolean> {
    const removed = this.db.transaction(() => {
      const changes = this.db.prepare('DELETE FROM cohort_people WHERE cohort_id = ? AND person_uuid = ? AND project_id = ?').run(id, personUuid, projectId).changes;
      this.recount(projectId, id);
      return changes > 0;
    })();
    this.stamps.bump(cohortsKey(projectId));
    return removed;
  }

  private recount(projectId: number, id: number): number {
    const { n } = this.db.prepare('SELECT count(*) AS n FROM cohort_people WHERE cohort_id = ?').get(id) as { n: number };
    this.db.prepare('UPDATE cohorts SET count = ?, last_calculation = ? WHERE project_id = ? AND id = ?').run(n, new Date().toISOString(), projectId, id);
    return n;
  }

  async members(projectId: number, id: number, page: Page): Promise<PageOf<string>> {
    const { n } = this.db.prepare('SELECT count(*) AS n FROM cohort_people WHERE cohort_id = ? AND project_id = ?').get(id, projectId) as { n: number };
    const results = this.db
      .prepare('SELECT person_uuid FROM cohort_people WHERE cohort_id = ? AND project_id = ? ORDER BY person_uuid LIMIT ? OFFSET ?')
      .pluck()
      .all(id, projectId, page.limit, page.offset) as string[];
    return { count: n, results };
  }

  async cohortsOf(projectId: number, personUuid: string): Promise<StoredCohort[]> {
    const rows = this.db
      .prepare(
        `SELECT c.* FROM cohort_people m JOIN cohorts c ON c.id = m.cohort_id
         WHERE m.project_id = ? AND m.person_uuid = ? AND c.project_id = ? AND c.deleted = 0 ORDER BY c.id`,
      )
      .all(projectId, personUuid, projectId) as Row[];
    return rows.map(cohortFromRow);
  }

  async memberSet(projectId: number, id: number): Promise<Set<string>> {
    const rows = this.db.prepare('SELECT person_uuid FROM cohort_people WHERE cohort_id = ? AND project_id = ?').pluck().all(id, projectId) as string[];
    return new Set(rows);
  }

  async personPage(projectId: number, afterUuid: string | null, limit: number): Promise<{ uuid: string; properties: JsonObject }[]> {
    const rows = this.db
      .prepare('SELECT uuid, properties FROM persons WHERE project_id = ? AND uuid > ? ORDER BY uuid LIMIT ?')
      .all(projectId, afterUuid ?? '', limit) as { uuid: string; properties: string }[];
    return rows.map((row) => ({ uuid: row.uuid, properties: parseJson<JsonObject>(row.properties, {}) }));
  }

  async personsByDistinctId(projectId: number, distinctIds: string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    for (const part of chunks([...new Set(distinctIds)])) {
      const rows = this.db
        .prepare(`SELECT distinct_id, person_uuid FROM person_distinct_ids WHERE project_id = ? AND distinct_id IN (${part.map(() => '?').join(',')})`)
        .all(projectId, ...part) as { distinct_id: string; person_uuid: string }[];
      for (const row of rows) found.set(row.distinct_id, row.person_uuid);
    }
    return found;
  }

  async personsByEmail(projectId: number, emails: string[]): Promise<Map<string, string>> {
    // Keyed by the lower-cased email; several persons with one email: any of them (the oldest).
    const found = new Map<string, string>();
    for (const part of chunks([...new Set(emails.map((e) => e.toLowerCase()))])) {
      const rows = this.db
        .prepare(
          `SELECT lower(json_extract(properties, '$.email')) AS email, uuid FROM persons
           WHERE project_id = ? AND lower(json_extract(properties, '$.email')) IN (${part.map(() => '?').join(',')}) ORDER BY created_at DESC`,
        )
        .all(projectId, ...part) as { email: string; uuid: string }[];
      for (const row of rows) found.set(row.email, row.uuid);
    }
    return found;
  }
}
