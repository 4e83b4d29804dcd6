/**
 * Persons as the management API reads and deletes them. Ingestion writes persons
 * (sqlite/ingest.ts); this file adds the integer ids' lookups, the deletion queue and the
 * activity log.
 */
import { v7 as uuidv7 } from 'uuid';
import type { JsonObject } from '../../kernel/json.js';
import type { ActivityEntry, PersonDeletion, PersonListQuery, PersonStore, StoredPerson } from '../types.js';
import { activityFromRow, deletionFromRow as deletionOf, distinctIdsByPerson, personFromRow as personOf, WINDOW_PER_PAGE } from '../person-rows.js';
import { cohortsKey, distinctIdKey, personKey, type ChangeStamps } from '../change-stamps.js';
import { parseJson, type Sqlite } from './database.js';
import { OUT_OF_ORDER, SLOTS } from './person-search-keys.js';

type Row = Record<string, unknown>;

const PERSON_COLUMNS = 'i.id AS id, p.uuid, p.project_id, p.properties, p.is_identified, p.created_at, p.version';
const PERSON_FROM = 'persons p JOIN person_ids i ON i.project_id = p.project_id AND i.uuid = p.uuid';
/**
 * Newest first, persons created in the same millisecond by uuid: both columns are in the
 * created_at index (a WITHOUT ROWID table's indexes end with its key), so a page reads only its rows.
 */
const NEWEST_FIRST = 'ORDER BY p.created_at DESC, p.uuid DESC';
/** A search with fewer trigram-index hits than this many per row it needs sorts them all. */
const FEW_HITS_PER_ROW = 2;

/**
 * A LIKE pattern (ASCII case-insensitive in SQLite) for `text` inside the properties' JSON text, or '%' where JSON
 * would escape it: a cheap test on the text that discards most rows before any JSON is parsed.
 */
function likeInJson(text: string): string {
  return /["\\\u0000-\u001f]/.test(text) ? '%' : `%${text.replace(/[%_]/g, (c) => `\\${c}`)}%`;
}

/** Text order, largest first, as SQLite's BINARY collation orders ASCII. */
const descending = (a: string, b: string) => (a === b ? 0 : a < b ? 1 : -1);

/** `text` as one FTS5 phrase: with the trigram tokenizer, it matches where `text` is a substring. */
const ftsPhrase = (text: string) => `"${text.replace(/"/g, '""')}"`;

/**
 * The list's conditions on a person's row (columns prefixed by `a`): `search` (a substring of the
 * email or name property, case-insensitive for ASCII, or an exact distinct id) and `email`
 * (exact). LIKE on the JSON text discards most rows before any JSON is parsed.
 */
function personConditions(projectId: number, query: PersonListQuery, a: string): { sql: string[]; params: unknown[] } {
  const sql: string[] = [];
  const params: unknown[] = [];
  if (query.search !== null) {
    sql.push(`((${a}properties LIKE ? ESCAPE '\\'
               AND (instr(lower(json_extract(${a}properties, '$.email')), lower(?)) > 0 OR instr(lower(json_extract(${a}properties, '$.name')), lower(?)) > 0))
             OR ${a}uuid IN (SELECT person_uuid FROM person_distinct_ids WHERE project_id = ? AND distinct_id = ?))`);
    params.push(likeInJson(query.search), query.search, query.search, projectId, query.search);
  }
  if (query.email !== null) {
    sql.push(`(${a}properties LIKE ? ESCAPE '\\' AND json_extract(${a}properties, '$.email') = ?)`);
    params.push(likeInJson(query.email), query.email);
  }
  return { sql, params };
}

/**
 * The list's query over candidates `m` (a materialised set of uuids). CROSS JOIN keeps the
 * order: the candidates first, each person then looked up by its key, then sorted.
 */
const overCandidates = (candidates: string, conditions: string[]) =>
  `WITH m AS MATERIALIZED (${candidates}) ` +
  `SELECT ${PERSON_COLUMNS} FROM m CROSS JOIN persons p ON p.project_id = ? AND p.uuid = m.uuid ` +
  `CROSS JOIN person_ids i ON i.project_id = p.project_id AND i.uuid = p.uuid${conditions.length ? ` WHERE ${conditions.join(' AND ')}` : ''} ${NEWEST_FIRST}`;

export class SqlitePersonStore implements PersonStore {
  constructor(
    private readonly db: Sqlite,
    private readonly stamps: ChangeStamps,
  ) {}

  async list(query: PersonListQuery): Promise<{ results: StoredPerson[]; more: boolean }> {
    const { projectId } = query;
    const wanted = query.limit + 1;
    let rows: Row[];
    if (query.distinctId !== null) {
      // At most one person: found by the distinct id's key, the other filters tested on it.
      const on = personConditions(projectId, query, 'p.');
      const sql = overCandidates('SELECT person_uuid AS uuid FROM person_distinct_ids WHERE project_id = ? AND distinct_id = ?', on.sql);
      rows = this.pageOf(sql, [projectId, query.distinctId, projectId, ...on.params], query, wanted);
    } else if (query.search !== null && [...query.search].length >= 3) {
      // A term with few hits in the trigram index takes them as its candidates (the index read
      // oldest first stops at the bound, and reading it newest first costs several times more for a
      // rare term); a term with more reads the index newest first and stops at its page.
      const few = this.indexHitsBelow(query.search, FEW_HITS_PER_ROW * (query.offset + wanted));
      if (few) {
        const on = personConditions(projectId, query, 'p.');
        const indexed = overCandidates(
          'SELECT k.uuid FROM json_each(?) j CROSS JOIN person_search_keys k ON k.key = CAST(j.value AS INTEGER) WHERE k.project_id = ? ' +
            'UNION SELECT person_uuid FROM person_distinct_ids WHERE project_id = ? AND distinct_id = ?',
          on.sql,
        );
        rows = this.pageOf(indexed, [JSON.stringify(few), projectId, projectId, query.search, projectId, ...on.params], query, wanted);
      } else {
        rows = this.newestHits(query, wanted);
      }
    } else if (query.search !== null || query.email !== null) {
      // Filters most persons pass are answered from the newest persons alone (a window of them,
      // walked by the created_at index); otherwise one pass over the table, then sorted: walking
      // the created_at index for a rare match costs a table lookup per person, for all of them.
      const on = personConditions(projectId, query, '');
      const window = WINDOW_PER_PAGE * wanted + query.offset;
      const newest = overCandidates(
        `SELECT uuid FROM (SELECT uuid, properties FROM persons INDEXED BY persons_created WHERE project_id = ? ORDER BY created_at DESC, uuid DESC LIMIT ?) WHERE ${on.sql.join(' AND ')}`,
        [],
      );
      rows = this.pageOf(newest, [projectId, window, ...on.params, projectId], query, wanted);
      if (rows.length < wanted) {
        const all = overCandidates(`SELECT uuid FROM persons WHERE project_id = ? AND ${on.sql.join(' AND ')}`, []);
        rows = this.pageOf(all, [projectId, ...on.params, projectId], query, wanted);
      }
    } else {
      rows = this.pageOf(`SELECT ${PERSON_COLUMNS} FROM ${PERSON_FROM} WHERE p.project_id = ? ${NEWEST_FIRST}`, [projectId], query, wanted);
    }
    const more = rows.length > query.limit;
    const page = rows.slice(0, query.limit);
    const ids = this.distinctIdsOf(query.projectId, page.map((row) => row.uuid as string));
    return { results: page.map((row) => personOf(row, ids.get(row.uuid as string) ?? [])), more };
  }

  /**
   * A page of a search with many hits: the trigram index's hits (at least every person the exact
   * conditions then keep) read newest first (its keys are in the list's order,
   * person-search-keys.ts) down to the millisecond that completes the page, then sorted; and the
   * person whose distinct id the search is. The page's hits and the rest of that millisecond,
   * never every hit to sort them.
   */
  private newestHits(query: PersonListQuery, wanted: number): Row[] {
    const { projectId } = query;
    const on = personConditions(projectId, query, 'p.');
    const hits = this.db.prepare(
      `SELECT ${PERSON_COLUMNS}, s.rowid >= ${OUT_OF_ORDER} AS unordered, s.rowid / ${SLOTS} AS ms, ${on.sql.join(' AND ')} AS passes ` +
        'FROM persons_search s CROSS JOIN person_search_keys k ON k.key = s.rowid CROSS JOIN persons p ON p.project_id = k.project_id AND p.uuid = k.uuid ' +
        'CROSS JOIN person_ids i ON i.project_id = p.project_id AND i.uuid = p.uuid WHERE persons_search MATCH ? AND k.project_id = ? ORDER BY s.rowid DESC',
    );
    const passes = (row: Row) => query.matches === null || query.matches(parseJson<JsonObject>(row.properties, {}));
    const needed = query.offset + wanted;
    const found: Row[] = [];
    let inOrder = 0;
    let lastMillisecond: number | null = null;
    for (const row of hits.iterate(...on.params, ftsPhrase(query.search!), projectId) as Iterable<Row>) {
      // Keys out of order come first (the highest); after them, stop past the page's last millisecond.
      if (!row.unordered && lastMillisecond !== null && row.ms !== lastMillisecond) break;
      if (!row.passes || !passes(row)) continue;
      found.push(row);
      if (!row.unordered && ++inOrder >= needed) lastMillisecond ??= row.ms as number;
    }
    const byDistinctId = overCandidates('SELECT person_uuid AS uuid FROM person_distinct_ids WHERE project_id = ? AND distinct_id = ?', on.sql);
    for (const row of this.db.prepare(byDistinctId).all(projectId, query.search, projectId, ...on.params) as Row[]) {
      if (passes(row) && !found.some((other) => other.uuid === row.uuid)) found.push(row);
    }
    found.sort((a, b) => descending(a.created_at as string, b.created_at as string) || descending(a.uuid as string, b.uuid as string));
    return found.slice(query.offset, needed);
  }

  /** The trigram index's keys for `search` (as text: they go beyond 2^53) if there are fewer than `bound`, else null. */
  private indexHitsBelow(search: string, bound: number): string[] | null {
    const keys = this.db.prepare('SELECT CAST(rowid AS TEXT) FROM persons_search WHERE persons_search MATCH ? LIMIT ?').pluck().all(ftsPhrase(search), bound) as string[];
    return keys.length < bound ? keys : null;
  }

  /** One page of `sql`'s rows; with property filters, tested here with the flag engine's matcher (RE2 regexes and all). */
  private pageOf(sql: string, params: unknown[], query: PersonListQuery, wanted: number): Row[] {
    if (query.matches === null) return this.db.prepare(`${sql} LIMIT ? OFFSET ?`).all(...params, wanted, query.offset) as Row[];
    const rows: Row[] = [];
    let skipped = 0;
    for (const row of this.db.prepare(sql).iterate(...params) as Iterable<Row>) {
      if (!query.matches(parseJson<JsonObject>(row.properties, {}))) continue;
      if (skipped < query.offset) skipped += 1;
      else if (rows.push(row) >= wanted) break;
    }
    return rows;
  }

  async get(projectId: number, idOrUuid: number | string): Promise<StoredPerson | null> {
    const column = typeof idOrUuid === 'number' ? 'i.id' : 'p.uuid';
    const row = this.db.prepare(`SELECT ${PERSON_COLUMNS} FROM ${PERSON_FROM} WHERE p.project_id = ? AND ${column} = ?`).get(projectId, idOrUuid) as Row | undefined;
    if (!row) return null;
    return personOf(row, this.distinctIdsOf(projectId, [row.uuid as string]).get(row.uuid as string) ?? []);
  }

  async resolve(projectId: number, idsOrUuids: (number | string)[]): Promise<string[]> {
    const numbers = idsOrUuids.filter((id): id is number => typeof id === 'number');
    const uuids = idsOrUuids.filter((id): id is string => typeof id === 'string');
    const rows = this.db
      .prepare(
        'SELECT i.uuid FROM json_each(?) j CROSS JOIN person_ids i ON i.id = j.value AND i.project_id = ? ' +
          'UNION SELECT i.uuid FROM json_each(?) j CROSS JOIN person_ids i ON i.project_id = ? AND i.uuid = j.value',
      )
      .all(JSON.stringify(numbers), projectId, JSON.stringify(uuids), projectId) as { uuid: string }[];
    return rows.map((row) => row.uuid);
  }

  async uuidsOfDistinctIds(projectId: number, distinctIds: string[]): Promise<string[]> {
    const rows = this.db
      .prepare('SELECT DISTINCT person_uuid FROM person_distinct_ids WHERE project_id = ? AND distinct_id IN (SELECT value FROM json_each(?))')
      .all(projectId, JSON.stringify(distinctIds)) as { person_uuid: string }[];
    return rows.map((row) => row.person_uuid);
  }

  /** Sorted as PostHog shows them: ids that are not uuids (identified ones) first. */
  private distinctIdsOf(projectId: number, uuids: string[]): Map<string, string[]> {
    if (uuids.length === 0) return new Map();
    const rows = this.db
      // CROSS JOIN: the page's persons first, each looked up in the person index (an IN list let
      // the planner scan every distinct id of the project instead).
      .prepare(
        'SELECT d.person_uuid, d.distinct_id FROM json_each(?) j CROSS JOIN person_distinct_ids d INDEXED BY person_distinct_ids_person ' +
          'ON d.project_id = ? AND d.person_uuid = j.value ORDER BY d.distinct_id',
      )
      .all(JSON.stringify(uuids), projectId) as { person_uuid: string; distinct_id: string }[];
    return distinctIdsByPerson(rows);
  }

  async delete(input: { projectId: number; uuids: string[]; deleteEvents: boolean; afterFlushSeq: number; userId: number | null }): Promise<PersonDeletion[]> {
    const { projectId } = input;
    const now = new Date().toISOString();
    const db = this.db;
    const idsOf = db.prepare('SELECT distinct_id FROM person_distinct_ids WHERE project_id = ? AND person_uuid = ?');
    const numericId = db.prepare('SELECT id FROM person_ids WHERE project_id = ? AND uuid = ?');
    const statements = [
      db.prepare('DELETE FROM person_distinct_ids WHERE project_id = ? AND person_uuid = ?'),
      db.prepare('DELETE FROM persons WHERE project_id = ? AND uuid = ?'),
      db.prepare('DELETE FROM person_ids WHERE project_id = ? AND uuid = ?'),
      db.prepare('DELETE FROM flag_hash_key_overrides WHERE project_id = ? AND person_uuid = ?'),
      db.prepare('DELETE FROM cohort_people WHERE project_id = ? AND person_uuid = ?'),
    ];
    const queue = db.prepare(
      'INSERT INTO person_deletions (project_id, person_uuid, distinct_ids, delete_events, after_flush_seq, requested_by, requested_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *',
    );
    const log = db.prepare('INSERT INTO activity_log (project_id, scope, item_id, activity, user_id, detail, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const deletions: PersonDeletion[] = [];
    const touchedIds: string[] = [];
    db.transaction(() => {
      for (const uuid of input.uuids) {
        const distinctIds = (idsOf.all(projectId, uuid) as { distinct_id: string }[]).map((row) => row.distinct_id);
        const id = (numericId.get(projectId, uuid) as { id: number } | undefined)?.id ?? null;
        for (const statement of statements) statement.run(projectId, uuid);
        const row = queue.get(projectId, uuid, JSON.stringify(distinctIds), input.deleteEvents ? 1 : 0, input.afterFlushSeq, input.userId, now) as Row;
        const deletion = deletionOf(row);
        deletions.push(deletion);
        touchedIds.push(...distinctIds);
        const detail = { id, delete_events: input.deleteEvents, deletion_id: deletion.id };
        log.run(projectId, 'Person', uuid, 'deleted', input.userId, JSON.stringify(detail), now);
      }
    })();
    // After the commit: flag evaluation (and its threads) must read these persons again.
    for (const uuid of input.uuids) this.stamps.bump(personKey(projectId, uuid));
    this.stamps.bump(cohortsKey(projectId));
    for (const distinctId of touchedIds) this.stamps.bump(distinctIdKey(projectId, distinctId));
    return deletions;
  }

  async split(input: { projectId: number; uuid: string; mainDistinctId: string | null; userId: number | null }): Promise<string[] | 'not_found' | 'unknown_distinct_id'> {
    const { projectId, uuid } = input;
    const db = this.db;
    const now = new Date().toISOString();
    const moved = db.transaction((): string[] | 'not_found' | 'unknown_distinct_id' => {
      const ids = this.distinctIdsOf(projectId, [uuid]).get(uuid);
      if (!ids) return 'not_found';
      const main = input.mainDistinctId ?? ids[0];
      if (!ids.includes(main)) return 'unknown_distinct_id';
      const others = ids.filter((id) => id !== main);
      const insertPerson = db.prepare('INSERT INTO persons (project_id, uuid, properties, is_identified, created_at, version) VALUES (?, ?, ?, 0, ?, 0)');
      const insertId = db.prepare('INSERT INTO person_ids (project_id, uuid) VALUES (?, ?)');
      const move = db.prepare('UPDATE person_distinct_ids SET person_uuid = ? WHERE project_id = ? AND distinct_id = ?');
      for (const distinctId of others) {
        const fresh = uuidv7();
        insertPerson.run(projectId, fresh, '{}', now);
        insertId.run(projectId, fresh);
        move.run(fresh, projectId, distinctId);
      }
      db.prepare('INSERT INTO activity_log (project_id, scope, item_id, activity, user_id, detail, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
        projectId,
        'Person',
        uuid,
        'split',
        input.userId,
        JSON.stringify({ new_persons: others.length }),
        now,
      );
      return others;
    })();
    if (Array.isArray(moved)) {
      this.stamps.bump(personKey(projectId, uuid));
      for (const distinctId of moved) this.stamps.bump(distinctIdKey(projectId, distinctId));
    }
    return moved;
  }

  async openDeletions(): Promise<PersonDeletion[]> {
    return (this.db.prepare('SELECT * FROM person_deletions WHERE finished_at IS NULL ORDER BY id').all() as Row[]).map(deletionOf);
  }

  async deletion(projectId: number, id: number): Promise<PersonDeletion | null> {
    const row = this.db.prepare('SELECT * FROM person_deletions WHERE project_id = ? AND id = ?').get(projectId, id) as Row | undefined;
    return row ? deletionOf(row) : null;
  }

  async finishDeletion(id: number, at: string): Promise<void> {
    // The distinct ids were needed only to find the events; a finished deletion keeps none.
    this.db.prepare("UPDATE person_deletions SET finished_at = ?, distinct_ids = '[]' WHERE id = ?").run(at, id);
  }

  async unpurgedDeletions(): Promise<PersonDeletion[]> {
    return (this.db.prepare('SELECT * FROM person_deletions WHERE finished_at IS NOT NULL AND purged_at IS NULL ORDER BY id').all() as Row[]).map(deletionOf);
  }

  async markPurged(ids: number[], at: string): Promise<void> {
    this.db.prepare('UPDATE person_deletions SET purged_at = ? WHERE id IN (SELECT value FROM json_each(?))').run(at, JSON.stringify(ids));
  }

  async activity(projectId: number, scope: string, itemId: string | null, limit: number, offset: number): Promise<{ count: number; results: ActivityEntry[] }> {
    const where = itemId === null ? 'project_id = ? AND scope = ?' : 'project_id = ? AND scope = ? AND item_id = ?';
    const params = itemId === null ? [projectId, scope] : [projectId, scope, itemId];
    const count = (this.db.prepare(`SELECT count(*) AS n FROM activity_log WHERE ${where}`).get(...params) as { n: number }).n;
    const rows = this.db.prepare(`SELECT * FROM activity_log WHERE ${where} ORDER BY id DESC LIMIT ? OFFSET ?`).all(...params, limit, offset) as Row[];
    return {
      count,
      results: rows.map(activityFromRow),
    };
  }
}
