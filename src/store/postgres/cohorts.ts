/**
 * Cohorts in PostgreSQL: the same definitions and materialised membership as the SQLite store
 * (sqlite/cohorts.ts), shared by every node. Each write that changes a membership is one
 * transaction holding the cohort's row (SELECT … FOR UPDATE), so uploads, removals and
 * calculations of one cohort on different nodes take turns and each leaves a whole membership
 * with its count. Membership rows reference their person: a deleted person leaves every cohort.
 * Nothing is kept between requests (other nodes change memberships), so no change stamps here.
 */
import type { JsonObject } from '../../kernel/json.js';
import type { CohortStore, CohortWrite, Page, PageOf, StoredCohort } from '../types.js';
import { cohortFromRow } from '../cohort-rows.js';
import { changes, isInt4, jsonValue, one, Params, rows, transaction, type PgClient, type PgPool } from './database.js';

/** Key of the session-level advisory lock held by the node running the scheduled recalculation. */
const SCHEDULE_LOCK = 7_357_216_006;

/** A patched column's value as PostgreSQL binds it (filters as JSON text). */
const bind = (column: keyof CohortWrite, value: CohortWrite[keyof CohortWrite]): unknown => (column === 'filters' ? JSON.stringify(value) : value);

export class PostgresCohortStore implements CohortStore {
  constructor(private readonly pool: PgPool) {}

  async list(projectId: number | null): Promise<StoredCohort[]> {
    const found =
      projectId === null
        ? await rows(this.pool, 'SELECT * FROM cohorts WHERE NOT deleted ORDER BY id')
        : await rows(this.pool, 'SELECT * FROM cohorts WHERE project_id = $1 AND NOT deleted ORDER BY id', [projectId]);
    return found.map(cohortFromRow);
  }

  async get(projectId: number, id: number): Promise<StoredCohort | null> {
    if (!isInt4(id)) return null;
    const row = await one(this.pool, 'SELECT * FROM cohorts WHERE project_id = $1 AND id = $2', [projectId, id]);
    return row ? cohortFromRow(row) : null;
  }

  async create(projectId: number, createdBy: number | null, cohort: CohortWrite, members: string[] = []): Promise<StoredCohort> {
    const now = new Date().toISOString();
    return transaction(this.pool, async (client) => {
      const row = await one(
        client,
        `INSERT INTO cohorts (project_id, name, description, filters, is_static, deleted, count, last_calculation, created_by, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING *`,
        [
          projectId,
          cohort.name,
          cohort.description,
          JSON.stringify(cohort.filters),
          cohort.is_static,
          cohort.deleted,
          cohort.is_static ? 0 : null,
          cohort.is_static ? now : null,
          createdBy,
          now,
        ],
      );
      const created = cohortFromRow(row!);
      if (members.length === 0) return created;
      const count = await this.insertMembers(client, projectId, created.id, members);
      return { ...created, count, last_calculation: now };
    });
  }

  async update(projectId: number, id: number, patch: Partial<CohortWrite>): Promise<StoredCohort | null> {
    if (!isInt4(id)) return null;
    const params = new Params();
    const set = [`updated_at = ${params.add(new Date().toISOString())}`];
    for (const column of ['name', 'description', 'deleted', 'filters'] as const) {
      if (patch[column] !== undefined) set.push(`${column} = ${params.add(bind(column, patch[column]))}`);
    }
    if (patch.filters !== undefined) set.push('version = version + 1');
    const row = await one(this.pool, `UPDATE cohorts SET ${set.join(', ')} WHERE project_id = ${params.add(projectId)} AND id = ${params.add(id)} RETURNING *`, params.values);
    return row ? cohortFromRow(row) : null;
  }

  async startCalculation(projectId: number, id: number): Promise<number | null> {
    if (!isInt4(id)) return null;
    const row = await one<{ version: number }>(this.pool, 'UPDATE cohorts SET is_calculating = true WHERE project_id = $1 AND id = $2 RETURNING version', [projectId, id]);
    return row?.version ?? null;
  }

  async finishCalculation(projectId: number, id: number, version: number, personUuids: Iterable<string>): Promise<boolean> {
    const uuids = [...new Set(personUuids)];
    return transaction(this.pool, async (client) => {
      // The row lock orders this against another node's calculation or upload of the cohort.
      const current = await one<{ version: number }>(client, 'SELECT version FROM cohorts WHERE project_id = $1 AND id = $2 FOR UPDATE', [projectId, id]);
      if (!current) return false;
      if (current.version !== version) {
        await client.query('UPDATE cohorts SET is_calculating = false WHERE id = $1', [id]);
        return false;
      }
      await client.query('DELETE FROM cohort_people WHERE cohort_id = $1', [id]);
      // Only persons that still exist: one deleted meanwhile stays out (the foreign key keeps it so until the commit).
      const count = await changes(
        client,
        `INSERT INTO cohort_people (cohort_id, person_uuid, project_id)
         SELECT $1, p.uuid, p.project_id FROM persons p WHERE p.project_id = $2 AND p.uuid = ANY($3::text[])`,
        [id, projectId, uuids],
      );
      await client.query(
        'UPDATE cohorts SET is_calculating = false, count = $2, last_calculation = $3, errors_calculating = 0, last_error = NULL WHERE id = $1',
        [id, count, new Date().toISOString()],
      );
      return true;
    });
  }

  async failCalculation(projectId: number, id: number, error: string): Promise<void> {
    await this.pool.query('UPDATE cohorts SET is_calculating = false, errors_calculating = errors_calculating + 1, last_error = $1 WHERE project_id = $2 AND id = $3', [
      error,
      projectId,
      id,
    ]);
  }

  /**
   * A session-level advisory lock on a connection of its own, tried, not waited for: the node
   * that holds it runs the round, the others skip theirs (their next tick tries again). The
   * lock goes with the connection if the node dies.
   */
  async asScheduler<T>(work: () => Promise<T>): Promise<T | null> {
    const client = await this.pool.connect();
    try {
      const { locked } = (await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [SCHEDULE_LOCK])).rows[0];
      if (!locked) return null;
      try {
        return await work();
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [SCHEDULE_LOCK]).catch(() => {});
      }
    } finally {
      client.release();
    }
  }

  async addMembers(projectId: number, id: number, personUuids: string[]): Promise<number> {
    return transaction(this.pool, (client) => this.insertMembers(client, projectId, id, personUuids));
  }

  async removeMember(projectId: number, id: number, personUuid: string): Promise<boolean> {
    if (!isInt4(id)) return false;
    return transaction(this.pool, async (client) => {
      if (!(await this.lockCohort(client, projectId, id))) return false;
      const removed = await changes(client, 'DELETE FROM cohort_people WHERE cohort_id = $1 AND person_uuid = $2 AND project_id = $3', [id, personUuid, projectId]);
      await this.recount(client, projectId, id);
      return removed > 0;
    });
  }

  /** Inside a transaction: adds the persons that exist, returns the new count. */
  private async insertMembers(client: PgClient, projectId: number, id: number, personUuids: string[]): Promise<number> {
    if (!(await this.lockCohort(client, projectId, id))) return 0;
    await client.query(
      `INSERT INTO cohort_people (cohort_id, person_uuid, project_id)
       SELECT $1, p.uuid, p.project_id FROM persons p WHERE p.project_id = $2 AND p.uuid = ANY($3::text[])
       ON CONFLICT DO NOTHING`,
      [id, projectId, [...new Set(personUuids)]],
    );
    return this.recount(client, projectId, id);
  }

  private async lockCohort(client: PgClient, projectId: number, id: number): Promise<boolean> {
    return (await one(client, 'SELECT 1 FROM cohorts WHERE project_id = $1 AND id = $2 FOR UPDATE', [projectId, id])) !== undefined;
  }

  private async recount(client: PgClient, projectId: number, id: number): Promise<number> {
    const row = await one<{ count: number }>(
      client,
      `UPDATE cohorts SET count = (SELECT count(*) FROM cohort_people WHERE cohort_id = $2), last_calculation = $3
       WHERE project_id = $1 AND id = $2 RETURNING count`,
      [projectId, id, new Date().toISOString()],
    );
    return row?.count ?? 0;
  }

  async members(projectId: number, id: number, page: Page): Promise<PageOf<string>> {
    if (!isInt4(id)) return { count: 0, results: [] };
    const total = await one<{ n: string }>(this.pool, 'SELECT count(*) AS n FROM cohort_people WHERE cohort_id = $1 AND project_id = $2', [id, projectId]);
    const found = await rows<{ person_uuid: string }>(
      this.pool,
      'SELECT person_uuid FROM cohort_people WHERE cohort_id = $1 AND project_id = $2 ORDER BY person_uuid COLLATE "C" LIMIT $3 OFFSET $4',
      [id, projectId, page.limit, page.offset],
    );
    return { count: Number(total?.n ?? 0), results: found.map((row) => row.person_uuid) };
  }

  async cohortsOf(projectId: number, personUuid: string): Promise<StoredCohort[]> {
    const found = await rows(
      this.pool,
      `SELECT c.* FROM cohort_people m JOIN cohorts c ON c.id = m.cohort_id
       WHERE m.project_id = $1 AND m.person_uuid = $2 AND c.project_id = $1 AND NOT c.deleted ORDER BY c.id`,
      [projectId, personUuid],
    );
    return found.map(cohortFromRow);
  }

  async memberSet(projectId: number, id: number): Promise<Set<string>> {
    if (!isInt4(id)) return new Set();
    const found = await rows<{ person_uuid: string }>(this.pool, 'SELECT person_uuid FROM cohort_people WHERE cohort_id = $1 AND project_id = $2', [id, projectId]);
    return new Set(found.map((row) => row.person_uuid));
  }

  async personPage(projectId: number, afterUuid: string | null, limit: number): Promise<{ uuid: string; properties: JsonObject }[]> {
    // Byte order, as SQLite compares: the pages' cursor must agree with their order whatever the locale.
    const found = await rows<{ uuid: string; properties: unknown }>(
      this.pool,
      'SELECT uuid, properties FROM persons WHERE project_id = $1 AND uuid COLLATE "C" > $2 ORDER BY uuid COLLATE "C" LIMIT $3',
      [projectId, afterUuid ?? '', limit],
    );
    return found.map((row) => ({ uuid: row.uuid, properties: jsonValue<JsonObject>(row.properties, {}) }));
  }

  async personsByDistinctId(projectId: number, distinctIds: string[]): Promise<Map<string, string>> {
    const found = await rows<{ distinct_id: string; person_uuid: string }>(
      this.pool,
      'SELECT distinct_id, person_uuid FROM person_distinct_ids WHERE project_id = $1 AND distinct_id = ANY($2::text[])',
      [projectId, [...new Set(distinctIds)]],
    );
    return new Map(found.map((row) => [row.distinct_id, row.person_uuid]));
  }

  async personsByEmail(projectId: number, emails: string[]): Promise<Map<string, string>> {
    // Keyed by the lower-cased email; several persons with one email: any of them (the oldest).
    const found = await rows<{ email: string; uuid: string }>(
      this.pool,
      `SELECT lower(properties->>'email') AS email, uuid FROM persons
       WHERE project_id = $1 AND lower(properties->>'email') = ANY($2::text[]) ORDER BY created_at DESC`,
      [projectId, [...new Set(emails.map((email) => email.toLowerCase()))]],
    );
    const byEmail = new Map<string, string>();
    for (const row of found) byEmail.set(row.email, row.uuid);
    return byEmail;
  }
}
