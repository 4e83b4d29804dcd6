/**
 * What one ingestion flush reads and writes, in PostgreSQL. Each kind of change is one statement
 * over arrays (unnest), so a flush costs a fixed number of round trips, not one per row.
 *
 * Several nodes may ingest into one database. A flush's changes are computed from a snapshot and
 * then applied; the transaction-level advisory lock makes the applies of all nodes take turns,
 * as SQLite's single writer did, so two flushes never interleave their person merges. A person
 * can still change between one node's snapshot and its apply: the log routes each distinct id
 * to one consumer, but a merge names two ids, which may be in two partitions. So an apply first
 * checks, under the lock, that every person its plan read is as it was read, and refuses the
 * flush when not (the buffer plans it again).
 */
import type { JsonObject } from '../../kernel/json.js';
import { v7 as uuidv7 } from 'uuid';
import { groupKeyOf, type IngestChanges, type IngestSnapshot, type IngestSnapshotRequest, type IngestStore, type PersonMirrorState, type PersonRead, type PersonRecord, type UuidsByProject } from '../types.js';
import { getOrCreate } from '../../util/get-or-create.js';
import { PersonsChangedError } from '../errors.js';
import { distinctIdKey, groupKey, groupTypesKey, personKey, type ChangeStamps } from '../change-stamps.js';
import { jsonValue, one, rows, transaction, type PgClient, type PgPool, type Row } from './database.js';

/** Key of the advisory lock that serialises flush applies across nodes (and person deletions and splits with them). */
export const APPLY_LOCK = 7_357_216_002;
/** Persons per statement when the whole table is read (crash recovery). */
const ALL_PERSONS_PAGE = 1_000;

const personFromRow = (row: Row): PersonRecord => ({
  uuid: row.uuid as string,
  project_id: row.project_id as number,
  properties: jsonValue<JsonObject>(row.properties, {}),
  is_identified: row.is_identified as boolean,
  created_at: row.created_at as string,
  version: row.version as number,
});

const hexOf = (uuid: string) => uuid.replace(/-/g, '');
const hyphenate = (hex: string) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

/** The last entry of each key wins, as it did when the rows were written one by one. */
function lastByKey<T>(items: T[], key: (item: T) => string): T[] {
  const byKey = new Map<string, T>();
  for (const item of items) {
    const k = key(item);
    byKey.delete(k);
    byKey.set(k, item);
  }
  return [...byKey.values()];
}

export class PostgresIngestStore implements IngestStore {
  constructor(
    private readonly pool: PgPool,
    /** This node's name: its flush log's sequence numbers are its own. */
    private readonly node: string,
    /** Bumped for what a commit changed, for this process's other readers (change-stamps.ts). */
    private readonly stamps: ChangeStamps,
  ) {}

  async loadSnapshot(request: IngestSnapshotRequest): Promise<IngestSnapshot> {
    const snapshot: IngestSnapshot = {
      distinctIdToPerson: new Map(),
      persons: new Map(),
      existingUuids: new Map(),
      groupTypes: new Map(),
      groups: new Map(),
      personsRead: [],
    };
    const projects = new Set([...request.distinctIds.keys(), ...request.eventUuids.keys(), ...request.groups.keys()]);

    for (const [projectId, ids] of request.distinctIds) {
      const mapping = getOrCreate(snapshot.distinctIdToPerson, projectId, () => new Map<string, string>());
      if (ids.size === 0) continue; // all of them were cached
      const found = await rows<Row & { distinct_id: string }>(
        this.pool,
        `SELECT d.distinct_id, p.* FROM person_distinct_ids d JOIN persons p ON p.project_id = d.project_id AND p.uuid = d.person_uuid
         WHERE d.project_id = $1 AND d.distinct_id = ANY($2::text[])`,
        [projectId, [...ids]],
      );
      for (const row of found) {
        mapping.set(row.distinct_id, row.uuid as string);
        if (!snapshot.persons.has(row.uuid as string)) snapshot.persons.set(row.uuid as string, personFromRow(row));
      }
      // What applyChanges checks: each id's person and version as read here (planning bumps the records' versions in place).
      for (const distinctId of ids) {
        const uuid = mapping.get(distinctId) ?? null;
        snapshot.personsRead!.push({ project_id: projectId, distinct_id: distinctId, person_uuid: uuid, version: uuid === null ? null : snapshot.persons.get(uuid)!.version });
      }
    }

    for (const [projectId, uuids] of request.eventUuids) {
      const existing = getOrCreate(snapshot.existingUuids, projectId, () => new Set<string>());
      const found = await rows<{ hex: string; node: string; flush_seq: string }>(
        this.pool,
        "SELECT encode(uuid, 'hex') AS hex, node, flush_seq FROM event_uuids WHERE project_id = $1 AND uuid IN (SELECT decode(h, 'hex') FROM unnest($2::text[]) AS h)",
        [projectId, uuids.map(hexOf)],
      );
      for (const row of found) {
        existing.add(hyphenate(row.hex));
        (snapshot.firstCommits ??= new Map()).set(`${projectId}:${hyphenate(row.hex)}`, { node: row.node, flushSeq: Number(row.flush_seq) });
      }
      if (found.length > 0) await this.loadDeletionsOf(projectId, [...(request.distinctIds.get(projectId) ?? [])], snapshot);
    }

    if (projects.size > 0) {
      const found = await rows<{ project_id: number; group_type: string; group_type_index: number }>(
        this.pool,
        'SELECT project_id, group_type, group_type_index FROM group_types WHERE project_id = ANY($1::int[])',
        [[...projects]],
      );
      for (const projectId of projects) snapshot.groupTypes.set(projectId, new Map());
      for (const row of found) snapshot.groupTypes.get(row.project_id)!.set(row.group_type, row.group_type_index);
    }

    for (const [projectId, keys] of request.groups) {
      const groups = getOrCreate(snapshot.groups, projectId, () => new Map());
      const types = snapshot.groupTypes.get(projectId);
      const indexes: number[] = [];
      const groupKeys: string[] = [];
      for (const composite of keys) {
        const [type, key] = composite.split('\u0000');
        const index = types?.get(type);
        if (index === undefined) continue; // a type never seen has no groups yet
        indexes.push(index);
        groupKeys.push(key);
      }
      if (indexes.length === 0) continue;
      const found = await rows(
        this.pool,
        `SELECT g.group_type_index, g.group_key, g.properties, g.created_at FROM groups g
         JOIN unnest($2::int[], $3::text[]) AS w(idx, key) ON g.group_type_index = w.idx AND g.group_key = w.key
         WHERE g.project_id = $1`,
        [projectId, indexes, groupKeys],
      );
      for (const row of found) {
        groups.set(groupKeyOf(row.group_type_index as number, row.group_key as string), {
          properties: jsonValue<JsonObject>(row.properties, {}),
          created_at: row.created_at as string,
        });
      }
    }
    return snapshot;
  }

  async applyChanges(changes: IngestChanges): Promise<void> {
    await transaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [APPLY_LOCK]);
      await this.applyIn(client, changes, new Date().toISOString());
    });
    this.bumpStamps(changes);
  }

  private bumpStamps(changes: IngestChanges): void {
    for (const d of changes.setDistinctIds) this.stamps.bump(distinctIdKey(d.project_id, d.distinct_id));
    for (const r of changes.reassignDistinctIds) this.stamps.bump(personKey(r.project_id, r.from_person_uuid));
    for (const p of changes.deletePersons) this.stamps.bump(personKey(p.project_id, p.uuid));
    for (const p of changes.upsertPersons) this.stamps.bump(personKey(p.project_id, p.uuid));
    for (const t of changes.newGroupTypes) this.stamps.bump(groupTypesKey(t.project_id));
    for (const g of changes.upsertGroups) this.stamps.bump(groupKey(g.project_id, g.group_type_index, g.group_key));
  }

  /** Under the apply lock: refuses the flush when a person it read has changed since (another node's apply). */
  private async checkPersonsRead(client: PgClient, read: PersonRead[]): Promise<void> {
    if (read.length === 0) return;
    const { rows: now } = await client.query<{ person_uuid: string | null; version: number | null }>(
      `SELECT p.uuid AS person_uuid, p.version FROM unnest($1::int[], $2::text[]) WITH ORDINALITY AS r(project_id, distinct_id, n)
         LEFT JOIN person_distinct_ids d ON d.project_id = r.project_id AND d.distinct_id = r.distinct_id
         LEFT JOIN persons p ON p.project_id = d.project_id AND p.uuid = d.person_uuid
       ORDER BY r.n`,
      [read.map((r) => r.project_id), read.map((r) => r.distinct_id)],
    );
    const changed = read.filter((r, i) => r.person_uuid !== now[i].person_uuid || r.version !== now[i].version).length;
    if (changed > 0) throw new PersonsChangedError(changed);
  }

  private async applyIn(client: PgClient, changes: IngestChanges, now: string): Promise<void> {
    await this.checkPersonsRead(client, changes.personsRead ?? []);
    // Merges one by one, in order: a later merge may move what an earlier one moved.
    for (const r of changes.reassignDistinctIds) {
      await client.query('UPDATE person_distinct_ids SET person_uuid = $1 WHERE project_id = $2 AND person_uuid = $3', [
        r.to_person_uuid,
        r.project_id,
        r.from_person_uuid,
      ]);
    }
    const ids = lastByKey(changes.setDistinctIds, (d) => `${d.project_id}\u0000${d.distinct_id}`);
    if (ids.length > 0) {
      await client.query(
        `INSERT INTO person_distinct_ids (project_id, distinct_id, person_uuid)
         SELECT * FROM unnest($1::int[], $2::text[], $3::text[])
         ON CONFLICT (project_id, distinct_id) DO UPDATE SET person_uuid = excluded.person_uuid`,
        [ids.map((d) => d.project_id), ids.map((d) => d.distinct_id), ids.map((d) => d.person_uuid)],
      );
    }
    if (changes.deletePersons.length > 0) {
      const projects = changes.deletePersons.map((p) => p.project_id);
      const uuids = changes.deletePersons.map((p) => p.uuid);
      await client.query('DELETE FROM persons p USING unnest($1::int[], $2::text[]) AS d(project_id, uuid) WHERE p.project_id = d.project_id AND p.uuid = d.uuid', [
        projects,
        uuids,
      ]);
      await client.query(
        'DELETE FROM flag_hash_key_overrides o USING unnest($1::int[], $2::text[]) AS d(project_id, uuid) WHERE o.project_id = d.project_id AND o.person_uuid = d.uuid',
        [projects, uuids],
      );
    }
    const persons = lastByKey(changes.upsertPersons, (p) => `${p.project_id}\u0000${p.uuid}`);
    if (persons.length > 0) {
      await client.query(
        `INSERT INTO persons (project_id, uuid, properties, is_identified, created_at, version)
         SELECT * FROM unnest($1::int[], $2::text[], $3::json[], $4::boolean[], $5::text[], $6::int[])
         ON CONFLICT (project_id, uuid) DO UPDATE SET properties = excluded.properties, is_identified = excluded.is_identified,
           created_at = excluded.created_at, version = excluded.version`,
        [
          persons.map((p) => p.project_id),
          persons.map((p) => p.uuid),
          persons.map((p) => JSON.stringify(p.properties)),
          persons.map((p) => p.is_identified),
          persons.map((p) => p.created_at),
          persons.map((p) => p.version),
        ],
      );
    }
    if (changes.newGroupTypes.length > 0) {
      const types = changes.newGroupTypes;
      await client.query(
        `INSERT INTO group_types (project_id, group_type, group_type_index)
         SELECT * FROM unnest($1::int[], $2::text[], $3::int[]) ON CONFLICT DO NOTHING`,
        [types.map((t) => t.project_id), types.map((t) => t.group_type), types.map((t) => t.group_type_index)],
      );
    }
    const groups = lastByKey(changes.upsertGroups, (g) => `${g.project_id}\u0000${g.group_type_index}\u0000${g.group_key}`);
    if (groups.length > 0) {
      await client.query(
        `INSERT INTO groups (project_id, group_type_index, group_key, properties, created_at)
         SELECT * FROM unnest($1::int[], $2::int[], $3::text[], $4::json[], $5::text[])
         ON CONFLICT (project_id, group_type_index, group_key) DO UPDATE SET properties = excluded.properties`,
        [
          groups.map((g) => g.project_id),
          groups.map((g) => g.group_type_index),
          groups.map((g) => g.group_key),
          groups.map((g) => JSON.stringify(g.properties)),
          groups.map((g) => g.created_at),
        ],
      );
    }
    await this.writeDefinitions(client, changes, now);
    const uuids = changes.eventUuids;
    if (uuids.length > 0) {
      await client.query(
        `INSERT INTO event_uuids (project_id, uuid, node, flush_seq)
         SELECT u.project_id, decode(u.hex, 'hex'), $3, $4 FROM unnest($1::int[], $2::text[]) AS u(project_id, hex) ON CONFLICT DO NOTHING`,
        [uuids.map((u) => u.project_id), uuids.map((u) => hexOf(u.uuid)), this.node, changes.flushSeq],
      );
    }
    await this.setFlushSeq(client, changes.flushSeq);
  }

  private async writeDefinitions(client: PgClient, changes: IngestChanges, now: string): Promise<void> {
    // One row per definition: the first typed sighting wins, as writing them in order gave.
    const definitions = new Map<string, IngestChanges['propertyDefinitions'][number]>();
    for (const d of changes.propertyDefinitions) {
      const key = `${d.project_id}\u0000${d.type}\u0000${d.group_type_index ?? -1}\u0000${d.name}`;
      const kept = definitions.get(key);
      if (!kept || (kept.property_type === null && d.property_type !== null)) definitions.set(key, d);
    }
    if (definitions.size > 0) {
      const list = [...definitions.values()];
      // First non-null type wins and never changes afterwards (users may edit it via the API).
      await client.query(
        `INSERT INTO property_definitions (id, project_id, name, type, group_type_index, property_type, is_numerical, created_at)
         SELECT d.id, d.project_id, d.name, d.type, d.group_type_index, d.property_type, d.property_type = 'Numeric' AND d.property_type IS NOT NULL, $7
         FROM unnest($1::text[], $2::int[], $3::text[], $4::int[], $5::int[], $6::text[]) AS d(id, project_id, name, type, group_type_index, property_type)
         ON CONFLICT (project_id, type, group_type_index, name) DO UPDATE SET property_type = excluded.property_type, is_numerical = excluded.is_numerical
         WHERE property_definitions.property_type IS NULL AND excluded.property_type IS NOT NULL`,
        [
          list.map(() => uuidv7()),
          list.map((d) => d.project_id),
          list.map((d) => d.name),
          list.map((d) => d.type),
          list.map((d) => d.group_type_index ?? -1),
          list.map((d) => d.property_type),
          now,
        ],
      );
    }
    const events = new Map<string, IngestChanges['eventDefinitions'][number]>();
    for (const e of changes.eventDefinitions) {
      const key = `${e.project_id}\u0000${e.name}`;
      const kept = events.get(key);
      if (!kept || e.last_seen_at > kept.last_seen_at) events.set(key, e);
    }
    if (events.size > 0) {
      const list = [...events.values()];
      await client.query(
        `INSERT INTO event_definitions (id, project_id, name, created_at, last_seen_at)
         SELECT d.id, d.project_id, d.name, $4, d.last_seen_at FROM unnest($1::text[], $2::int[], $3::text[], $5::text[]) AS d(id, project_id, name, last_seen_at)
         ON CONFLICT (project_id, name) DO UPDATE SET last_seen_at = greatest(event_definitions.last_seen_at, excluded.last_seen_at)`,
        [list.map(() => uuidv7()), list.map((e) => e.project_id), list.map((e) => e.name), now, list.map((e) => e.last_seen_at)],
      );
    }
    const pairs = changes.eventProperties;
    if (pairs.length > 0) {
      await client.query(
        'INSERT INTO event_properties (project_id, event, property) SELECT * FROM unnest($1::int[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING',
        [pairs.map((p) => p.project_id), pairs.map((p) => p.event), pairs.map((p) => p.property)],
      );
    }
  }

  private async setFlushSeq(client: PgClient, flushSeq: number): Promise<void> {
    await client.query('INSERT INTO ingest_state (node, flush_seq) VALUES ($1, $2) ON CONFLICT (node) DO UPDATE SET flush_seq = excluded.flush_seq', [
      this.node,
      flushSeq,
    ]);
  }

  /** A committed transaction is durable already (synchronous_commit, PostgreSQL's default). */
  async makeDurable(): Promise<void> {}

  async committedFlushSeq(): Promise<number> {
    const row = await one<{ flush_seq: string }>(this.pool, 'SELECT flush_seq FROM ingest_state WHERE node = $1', [this.node]);
    return row ? Number(row.flush_seq) : 0;
  }

  async committedFlushSeqs(): Promise<Map<string, number>> {
    const found = await rows<{ node: string; flush_seq: string }>(this.pool, 'SELECT node, flush_seq FROM ingest_state');
    return new Map(found.map((row) => [row.node, Number(row.flush_seq)]));
  }

  async personMirrorState(keys: { project_id: number; uuid: string }[]): Promise<PersonMirrorState> {
    const projects = keys.map((k) => k.project_id);
    const uuids = keys.map((k) => k.uuid);
    return transaction(this.pool, async (client) => {
      // Shared with the applies' exclusive lock: the clock is read between two applies, so a read
      // with a later version has seen every apply an earlier one saw.
      await client.query('SELECT pg_advisory_xact_lock_shared($1)', [APPLY_LOCK]);
      const [{ version }] = (await client.query('SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS version')).rows;
      const persons = await client.query(
        `SELECT p.* FROM persons p JOIN unnest($1::int[], $2::text[]) AS k(project_id, uuid) ON p.project_id = k.project_id AND p.uuid = k.uuid`,
        [projects, uuids],
      );
      const distinctIds = await client.query(
        `SELECT d.project_id, d.distinct_id, d.person_uuid FROM person_distinct_ids d
           JOIN unnest($1::int[], $2::text[]) AS k(project_id, uuid) ON d.project_id = k.project_id AND d.person_uuid = k.uuid`,
        [projects, uuids],
      );
      return { version: Number(version), persons: persons.rows.map(personFromRow), distinctIds: distinctIds.rows as PersonMirrorState['distinctIds'] };
    });
  }

  /** The person deletions that took any of the distinct ids (a redelivered batch's rule, plan/redelivered.ts). */
  private async loadDeletionsOf(projectId: number, distinctIds: string[], snapshot: IngestSnapshot): Promise<void> {
    const found = await rows<{ distinct_id: string; flushes_before: Record<string, number> | null }>(
      this.pool,
      `SELECT id.distinct_id, d.flushes_before FROM unnest($2::text[]) AS id(distinct_id)
       JOIN person_deletions d ON d.project_id = $1 AND d.distinct_id_hashes @> ARRAY[sha256(convert_to(id.distinct_id, 'UTF8'))]`,
      [projectId, distinctIds],
    );
    for (const row of found) {
      const deletions = getOrCreate((snapshot.deletionsOfDistinctIds ??= new Map()), `${projectId}:${row.distinct_id}`, () => []);
      deletions.push(row.flushes_before ?? {});
    }
  }

  async forgetUuidsAfter(flushSeq: number): Promise<void> {
    await transaction(this.pool, async (client) => {
      await client.query('DELETE FROM event_uuids WHERE node = $1 AND flush_seq > $2', [this.node, flushSeq]);
      await this.setFlushSeq(client, flushSeq);
    });
  }

  async forgetUuids(uuids: UuidsByProject): Promise<void> {
    await transaction(this.pool, async (client) => {
      for (const [projectId, hex] of uuids) {
        await client.query("DELETE FROM event_uuids WHERE project_id = $1 AND uuid IN (SELECT decode(h, 'hex') FROM unnest($2::text[]) AS h)", [projectId, hex]);
      }
    });
  }

  async personsOf(projectId: number, distinctIds: string[]): Promise<Map<string, { person: PersonRecord; distinct_ids: string[] }>> {
    const found = await rows(
      this.pool,
      `SELECT d.distinct_id AS key, p.* FROM person_distinct_ids d JOIN persons p ON p.project_id = d.project_id AND p.uuid = d.person_uuid
       WHERE d.project_id = $1 AND d.distinct_id = ANY($2::text[])`,
      [projectId, distinctIds],
    );
    const byPerson = new Map<string, { person: PersonRecord; distinct_ids: string[] }>();
    const result = new Map<string, { person: PersonRecord; distinct_ids: string[] }>();
    for (const row of found) {
      result.set(row.key as string, getOrCreate(byPerson, row.uuid as string, () => ({ person: personFromRow(row), distinct_ids: [] })));
    }
    if (byPerson.size === 0) return result;
    const ids = await rows<{ person_uuid: string; distinct_id: string }>(
      this.pool,
      'SELECT person_uuid, distinct_id FROM person_distinct_ids WHERE project_id = $1 AND person_uuid = ANY($2::text[]) ORDER BY distinct_id COLLATE "C"',
      [projectId, [...byPerson.keys()]],
    );
    for (const id of ids) byPerson.get(id.person_uuid)?.distinct_ids.push(id.distinct_id);
    return result;
  }

  /** Pages in key order, so no cursor stays open across the consumer's awaits. */
  async *allPersons(): AsyncIterable<{ person: PersonRecord; distinct_ids: string[] }> {
    let after: [number, string] = [-1, ''];
    for (;;) {
      const page = await rows(
        this.pool,
        `SELECT p.*, coalesce((SELECT array_agg(d.distinct_id) FROM person_distinct_ids d WHERE d.project_id = p.project_id AND d.person_uuid = p.uuid), '{}') AS distinct_ids
         FROM persons p WHERE (p.project_id, p.uuid COLLATE "C") > ($1, $2 COLLATE "C") ORDER BY p.project_id, p.uuid COLLATE "C" LIMIT $3`,
        [after[0], after[1], ALL_PERSONS_PAGE],
      );
      for (const row of page) yield { person: personFromRow(row), distinct_ids: row.distinct_ids as string[] };
      if (page.length < ALL_PERSONS_PAGE) return;
      const last = page[page.length - 1];
      after = [last.project_id as number, last.uuid as string];
    }
  }
}
