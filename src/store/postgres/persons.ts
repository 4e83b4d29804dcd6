/**
 * Persons as the management API reads and deletes them, in PostgreSQL: the same lists, order and
 * answers as the SQLite store (sqlite/persons.ts). Ingestion writes persons (postgres/ingest.ts);
 * this file adds the integer ids' lookups, the deletion queue and the activity log.
 *
 * Several nodes share the database: a deletion or split runs in one transaction, in turn with every
 * node's flush applies (their advisory lock), and takes the rows it changes (DELETE … RETURNING,
 * SELECT … FOR UPDATE), where SQLite relied on its single writer.
 */
import { v7 as uuidv7 } from 'uuid';
import type { JsonObject } from '../../kernel/json.js';
import type { ActivityEntry, PersonDeletion, PersonListQuery, PersonStore, StoredPerson } from '../types.js';
import { distinctIdKey, personKey, type ChangeStamps } from '../change-stamps.js';
import { activityFromRow, deletionFromRow, distinctIdsByPerson, personFromRow, WINDOW_PER_PAGE } from '../person-rows.js';
import { jsonColumn } from '../rows.js';
import { one, Params, rows, transaction, type PgClient, type PgPool, type Queryable, type Row } from './database.js';
import { APPLY_LOCK } from './ingest.js';
import { likeContains, likeExact } from '../definition-sql.js';

const PERSON_COLUMNS = 'p.id, p.uuid, p.project_id, p.properties, p.is_identified, p.created_at, p.version';
/** Newest first; persons created in the same millisecond by uuid (the persons_created index, walked backwards). */
const NEWEST_FIRST = 'ORDER BY p.created_at DESC, p.uuid COLLATE "C" DESC';
/** Rows per statement while property filters are tested here. */
const MATCH_CHUNK = 500;

/** Whether `id` can name a person: ids are bigint, and JSON numbers beyond 2^53 are not exact. */
const isPersonId = (id: number) => Number.isSafeInteger(id) && id > 0;

/**
 * The list's conditions on a person `p`: `search` (a substring of the email or name property,
 * ignoring case, or an exact distinct id) and `email` (exact). The LIKEs on lower(…) are what the
 * trigram indexes of migration 4 answer.
 */
function personConditions(query: PersonListQuery, params: Params): string[] {
  const sql: string[] = [];
  if (query.search !== null) {
    const like = params.add(likeContains(query.search));
    sql.push(`(lower(p.properties->>'email') LIKE lower(${like}) OR lower(p.properties->>'name') LIKE lower(${like})
             OR p.uuid IN (SELECT person_uuid FROM person_distinct_ids WHERE project_id = $1 AND distinct_id = ${params.add(query.search)}))`);
  }
  if (query.email !== null) {
    sql.push(`(lower(p.properties->>'email') LIKE lower(${params.add(likeExact(query.email))}) AND p.properties->>'email' = ${params.add(query.email)})`);
  }
  return sql;
}

/**
 * The uuids that can pass the list's first filter, each part answerable from an index (the
 * trigram indexes, the distinct ids' key), so that a rare match is not a pass over every person.
 */
function candidates(query: PersonListQuery, params: Params): string {
  const persons = (condition: string) => `SELECT uuid FROM persons WHERE project_id = $1 AND ${condition}`;
  if (query.search !== null) {
    const like = params.add(likeContains(query.search));
    return [
      persons(`lower(properties->>'email') LIKE lower(${like})`),
      persons(`lower(properties->>'name') LIKE lower(${like})`),
      `SELECT person_uuid FROM person_distinct_ids WHERE project_id = $1 AND distinct_id = ${params.add(query.search)}`,
    ].join(' UNION ');
  }
  return persons(`lower(properties->>'email') LIKE lower(${params.add(likeExact(query.email!))})`);
}

export class PostgresPersonStore implements PersonStore {
  constructor(
    private readonly pool: PgPool,
    /** This node's name: its deletions count its flush log, and it finishes them. */
    private readonly node: string,
    /** Bumped after a commit changes a person, for this process's flag threads (change-stamps.ts). */
    private readonly stamps: ChangeStamps,
  ) {}

  async list(query: PersonListQuery): Promise<{ results: StoredPerson[]; more: boolean }> {
    const wanted = query.limit + 1;
    const params = new Params();
    params.add(query.projectId);
    const conditions = personConditions(query, params);
    const where = (extra: string[]) => ['p.project_id = $1', ...extra, ...conditions].join(' AND ');
    if (query.distinctId !== null) {
      // At most one person: found by the distinct id's key, the other filters tested on it.
      const sql = `SELECT ${PERSON_COLUMNS} FROM person_distinct_ids d JOIN persons p ON p.project_id = d.project_id AND p.uuid = d.person_uuid
                   WHERE d.project_id = $1 AND d.distinct_id = ${params.add(query.distinctId)} AND ${where([])} ${NEWEST_FIRST}`;
      return this.withDistinctIds(query, await this.pageOf(sql, params.values, query, wanted));
    }
    if (conditions.length === 0) {
      return this.withDistinctIds(query, await this.pageOf(`SELECT ${PERSON_COLUMNS} FROM persons p WHERE ${where([])} ${NEWEST_FIRST}`, params.values, query, wanted));
    }
    // As in SQLite, two plans. Filters most persons pass are answered from a window of the newest
    // persons (walked by the created_at index); otherwise the candidates come from the indexes,
    // then are sorted.
    const window = new Params();
    window.values.push(...params.values);
    const newest = `SELECT ${PERSON_COLUMNS} FROM (SELECT * FROM persons p WHERE p.project_id = $1 ${NEWEST_FIRST} LIMIT ${window.add(WINDOW_PER_PAGE * wanted + query.offset)}) p
                    WHERE ${where([])} ${NEWEST_FIRST}`;
    const fromWindow = await this.pageOf(newest, window.values, query, wanted);
    if (fromWindow.length >= wanted) return this.withDistinctIds(query, fromWindow);
    const indexed = `SELECT ${PERSON_COLUMNS} FROM persons p WHERE ${where([`p.uuid IN (${candidates(query, params)})`])} ${NEWEST_FIRST}`;
    return this.withDistinctIds(query, await this.pageOf(indexed, params.values, query, wanted));
  }

  /** One page of `sql`'s rows; with property filters, tested here with the flag engine's matcher (RE2 regexes and all), a chunk at a time. */
  private async pageOf(sql: string, values: unknown[], query: PersonListQuery, wanted: number): Promise<Row[]> {
    const next = values.length + 1;
    if (query.matches === null) return rows(this.pool, `${sql} LIMIT $${next} OFFSET $${next + 1}`, [...values, wanted, query.offset]);
    const found: Row[] = [];
    let skipped = 0;
    for (let start = 0; ; start += MATCH_CHUNK) {
      const chunk = await rows(this.pool, `${sql} LIMIT $${next} OFFSET $${next + 1}`, [...values, MATCH_CHUNK, start]);
      for (const row of chunk) {
        if (!query.matches(jsonColumn<JsonObject>(row.properties, {}))) continue;
        if (skipped < query.offset) skipped += 1;
        else if (found.push(row) >= wanted) return found;
      }
      if (chunk.length < MATCH_CHUNK) return found;
    }
  }

  private async withDistinctIds(query: PersonListQuery, found: Row[]): Promise<{ results: StoredPerson[]; more: boolean }> {
    const page = found.slice(0, query.limit);
    const ids = await this.distinctIdsOf(this.pool, query.projectId, page.map((row) => row.uuid as string));
    return { results: page.map((row) => personFromRow(row, ids.get(row.uuid as string) ?? [])), more: found.length > query.limit };
  }

  async get(projectId: number, idOrUuid: number | string): Promise<StoredPerson | null> {
    if (typeof idOrUuid === 'number' && !isPersonId(idOrUuid)) return null;
    const column = typeof idOrUuid === 'number' ? 'p.id' : 'p.uuid';
    const row = await one(this.pool, `SELECT ${PERSON_COLUMNS} FROM persons p WHERE p.project_id = $1 AND ${column} = $2`, [projectId, idOrUuid]);
    if (!row) return null;
    return personFromRow(row, (await this.distinctIdsOf(this.pool, projectId, [row.uuid as string])).get(row.uuid as string) ?? []);
  }

  async resolve(projectId: number, idsOrUuids: (number | string)[]): Promise<string[]> {
    const numbers = idsOrUuids.filter((id): id is number => typeof id === 'number' && isPersonId(id));
    const uuids = idsOrUuids.filter((id): id is string => typeof id === 'string');
    const found = await rows<{ uuid: string }>(this.pool, 'SELECT uuid FROM persons WHERE project_id = $1 AND (id = ANY($2::bigint[]) OR uuid = ANY($3::text[]))', [
      projectId,
      numbers,
      uuids,
    ]);
    return found.map((row) => row.uuid);
  }

  async uuidsOfDistinctIds(projectId: number, distinctIds: string[]): Promise<string[]> {
    const found = await rows<{ person_uuid: string }>(
      this.pool,
      'SELECT DISTINCT person_uuid FROM person_distinct_ids WHERE project_id = $1 AND distinct_id = ANY($2::text[])',
      [projectId, distinctIds],
    );
    return found.map((row) => row.person_uuid);
  }

  /** Sorted as PostHog shows them: ids that are not uuids (identified ones) first. */
  private async distinctIdsOf(db: Queryable, projectId: number, uuids: string[]): Promise<Map<string, string[]>> {
    if (uuids.length === 0) return new Map();
    const found = await rows<{ person_uuid: string; distinct_id: string }>(
      db,
      'SELECT person_uuid, distinct_id FROM person_distinct_ids WHERE project_id = $1 AND person_uuid = ANY($2::text[]) ORDER BY distinct_id COLLATE "C"',
      [projectId, uuids],
    );
    return distinctIdsByPerson(found);
  }

  async delete(input: { projectId: number; uuids: string[]; deleteEvents: boolean; afterFlushSeq: number; userId: number | null }): Promise<PersonDeletion[]> {
    const { projectId } = input;
    const now = new Date().toISOString();
    const touchedIds: string[] = [];
    const deletions = await transaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [APPLY_LOCK]);
      // Under the lock every node's applies wait on: exactly the flushes committed before this deletion.
      const flushesBefore: Record<string, number> = {};
      for (const row of await rows<{ node: string; flush_seq: string }>(client, 'SELECT node, flush_seq FROM ingest_state')) flushesBefore[row.node] = Number(row.flush_seq);
      flushesBefore[this.node] = input.afterFlushSeq;
      const queued: PersonDeletion[] = [];
      for (const uuid of input.uuids) {
        // RETURNING: exactly the distinct ids removed, whatever another node's flush did meanwhile.
        const distinctIds = (
          await rows<{ distinct_id: string }>(client, 'DELETE FROM person_distinct_ids WHERE project_id = $1 AND person_uuid = $2 RETURNING distinct_id', [projectId, uuid])
        ).map((row) => row.distinct_id);
        const person = await one<{ id: string }>(client, 'DELETE FROM persons WHERE project_id = $1 AND uuid = $2 RETURNING id', [projectId, uuid]);
        await client.query('DELETE FROM flag_hash_key_overrides WHERE project_id = $1 AND person_uuid = $2', [projectId, uuid]);
        const row = await one(
          client,
          `INSERT INTO person_deletions (node, project_id, person_uuid, distinct_ids, distinct_id_hashes, delete_events, after_flush_seq, flushes_before, requested_by, requested_at)
           VALUES ($1, $2, $3, $4, ARRAY(SELECT sha256(convert_to(id, 'UTF8')) FROM unnest($5::text[]) AS id), $6, $7, $8, $9, $10) RETURNING *`,
          [this.node, projectId, uuid, JSON.stringify(distinctIds), distinctIds, input.deleteEvents, input.afterFlushSeq, JSON.stringify(flushesBefore), input.userId, now],
        );
        const deletion = deletionFromRow(row!);
        queued.push(deletion);
        touchedIds.push(...distinctIds);
        const detail = { id: person ? Number(person.id) : null, delete_events: input.deleteEvents, deletion_id: deletion.id };
        await this.log(client, { projectId, itemId: uuid, activity: 'deleted', userId: input.userId, detail, at: now });
      }
      return queued;
    });
    // After the commit: flag evaluation (and its threads) must read these persons again.
    for (const uuid of input.uuids) this.stamps.bump(personKey(projectId, uuid));
    for (const distinctId of touchedIds) this.stamps.bump(distinctIdKey(projectId, distinctId));
    return deletions;
  }

  async split(input: { projectId: number; uuid: string; mainDistinctId: string | null; userId: number | null }): Promise<string[] | 'not_found' | 'unknown_distinct_id'> {
    const { projectId, uuid } = input;
    const now = new Date().toISOString();
    const moved = await transaction(this.pool, async (client): Promise<string[] | 'not_found' | 'unknown_distinct_id'> => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [APPLY_LOCK]);
      // The person's row and its distinct ids stay as read until the commit.
      if (!(await one(client, 'SELECT 1 FROM persons WHERE project_id = $1 AND uuid = $2 FOR UPDATE', [projectId, uuid]))) return 'not_found';
      await client.query('SELECT 1 FROM person_distinct_ids WHERE project_id = $1 AND person_uuid = $2 FOR UPDATE', [projectId, uuid]);
      const ids = (await this.distinctIdsOf(client, projectId, [uuid])).get(uuid);
      if (!ids) return 'not_found';
      const main = input.mainDistinctId ?? ids[0];
      if (!ids.includes(main)) return 'unknown_distinct_id';
      const others = ids.filter((id) => id !== main);
      const fresh = others.map(() => uuidv7());
      if (others.length > 0) {
        await client.query(
          `INSERT INTO persons (project_id, uuid, properties, is_identified, created_at, version)
           SELECT $1, u, '{}', false, $3, 0 FROM unnest($2::text[]) AS u`,
          [projectId, fresh, now],
        );
        await client.query(
          `UPDATE person_distinct_ids d SET person_uuid = m.fresh FROM unnest($2::text[], $3::text[]) AS m(distinct_id, fresh)
           WHERE d.project_id = $1 AND d.distinct_id = m.distinct_id`,
          [projectId, others, fresh],
        );
      }
      await this.log(client, { projectId, itemId: uuid, activity: 'split', userId: input.userId, detail: { new_persons: others.length }, at: now });
      return others;
    });
    if (Array.isArray(moved)) {
      this.stamps.bump(personKey(projectId, uuid));
      for (const distinctId of moved) this.stamps.bump(distinctIdKey(projectId, distinctId));
    }
    return moved;
  }

  private async log(client: PgClient, entry: { projectId: number; itemId: string; activity: string; userId: number | null; detail: JsonObject; at: string }): Promise<void> {
    await client.query('INSERT INTO activity_log (project_id, scope, item_id, activity, user_id, detail, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
      entry.projectId,
      'Person',
      entry.itemId,
      entry.activity,
      entry.userId,
      JSON.stringify(entry.detail),
      entry.at,
    ]);
  }

  /** This node's: another node's deletion counts that node's flush log, which only it can follow. */
  async openDeletions(): Promise<PersonDeletion[]> {
    return (await rows(this.pool, 'SELECT * FROM person_deletions WHERE node = $1 AND finished_at IS NULL ORDER BY id', [this.node])).map(deletionFromRow);
  }

  async deletion(projectId: number, id: number): Promise<PersonDeletion | null> {
    if (!Number.isSafeInteger(id) || id <= 0 || id > 2_147_483_647) return null;
    const row = await one(this.pool, 'SELECT * FROM person_deletions WHERE project_id = $1 AND id = $2', [projectId, id]);
    return row ? deletionFromRow(row) : null;
  }

  async finishDeletion(id: number, at: string): Promise<void> {
    // The distinct ids were needed only to find the events; a finished deletion keeps none.
    await this.pool.query("UPDATE person_deletions SET finished_at = $1, distinct_ids = '[]' WHERE id = $2", [at, id]);
  }

  async unpurgedDeletions(): Promise<PersonDeletion[]> {
    return (await rows(this.pool, 'SELECT * FROM person_deletions WHERE node = $1 AND finished_at IS NOT NULL AND purged_at IS NULL ORDER BY id', [this.node])).map(
      deletionFromRow,
    );
  }

  async deletionsAheadOf(storedFlushSeq: number): Promise<Array<{ deletion: PersonDeletion; ownFlushSeq: number }>> {
    const found = await rows(
      this.pool,
      `SELECT * FROM person_deletions WHERE delete_events AND finished_at IS NOT NULL AND (flushes_before ->> $1::text)::bigint > $2::bigint ORDER BY id`,
      [this.node, storedFlushSeq],
    );
    return found.map(deletionFromRow).map((deletion) => ({ deletion, ownFlushSeq: deletion.flushes_before![this.node] }));
  }

  async markPurged(ids: number[], at: string): Promise<void> {
    await this.pool.query('UPDATE person_deletions SET purged_at = $1 WHERE id = ANY($2::int[])', [at, ids]);
  }

  async activity(projectId: number, scope: string, itemId: string | null, limit: number, offset: number): Promise<{ count: number; results: ActivityEntry[] }> {
    const params = new Params();
    const where = [`project_id = ${params.add(projectId)}`, `scope = ${params.add(scope)}`];
    if (itemId !== null) where.push(`item_id = ${params.add(itemId)}`);
    const whereSql = where.join(' AND ');
    const count = await one<{ n: string }>(this.pool, `SELECT count(*) AS n FROM activity_log WHERE ${whereSql}`, params.values);
    const page = await rows(this.pool, `SELECT * FROM activity_log WHERE ${whereSql} ORDER BY id DESC LIMIT ${params.add(limit)} OFFSET ${params.add(offset)}`, params.values);
    return { count: Number(count?.n ?? 0), results: page.map(activityFromRow) };
  }
}
