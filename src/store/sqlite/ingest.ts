import type { JsonObject } from '../../kernel/json.js';
import { v7 as uuidv7 } from 'uuid';
import { groupKeyOf, type IngestChanges, type IngestSnapshot, type IngestSnapshotRequest, type IngestStore, type PersonRecord, type UuidsByProject } from '../types.js';
import { getOrCreate } from '../../util/get-or-create.js';
import { bytesToUuid, uuidToBytes } from '../../util/uuid.js';
import { cohortsKey, distinctIdKey, groupKey, groupTypesKey, personKey, type ChangeStamps } from '../change-stamps.js';
import { parseJson, toBool, type Sqlite } from './database.js';

type Row = Record<string, unknown>;

const personFromRow = (row: Row): PersonRecord => ({
  uuid: row.uuid as string,
  project_id: row.project_id as number,
  properties: parseJson<JsonObject>(row.properties, {}),
  is_identified: toBool(row.is_identified),
  created_at: row.created_at as string,
  version: row.version as number,
});

/** Reads and writes everything one ingestion flush needs, in as few statements as possible. */
export class SqliteIngestStore implements IngestStore {
  private readonly statements;

  constructor(
    private readonly db: Sqlite,
    /** Bumped for every distinct id, person, group and group-type list a commit changed (flag threads keep them). */
    private readonly stamps: ChangeStamps,
  ) {
    this.statements = {
      reassign: db.prepare('UPDATE person_distinct_ids SET person_uuid = ? WHERE project_id = ? AND person_uuid = ?'),
      setDistinctId: db.prepare(
        'INSERT INTO person_distinct_ids (project_id, distinct_id, person_uuid) VALUES (?, ?, ?) ON CONFLICT (project_id, distinct_id) DO UPDATE SET person_uuid = excluded.person_uuid',
      ),
      deletePerson: db.prepare('DELETE FROM persons WHERE project_id = ? AND uuid = ?'),
      deletePersonId: db.prepare('DELETE FROM person_ids WHERE project_id = ? AND uuid = ?'),
      insertPersonId: db.prepare('INSERT OR IGNORE INTO person_ids (project_id, uuid) VALUES (?, ?)'),
      deleteOverrides: db.prepare('DELETE FROM flag_hash_key_overrides WHERE project_id = ? AND person_uuid = ?'),
      // A merged-away person's cohort memberships go to the person it merged into (static cohorts
      // keep their members; dynamic ones are recalculated anyway).
      moveCohortPeople: db.prepare(
        'INSERT OR IGNORE INTO cohort_people (cohort_id, person_uuid, project_id) SELECT cohort_id, ?, project_id FROM cohort_people WHERE project_id = ? AND person_uuid = ?',
      ),
      deleteCohortPeople: db.prepare('DELETE FROM cohort_people WHERE project_id = ? AND person_uuid = ?'),
      upsertPerson: db.prepare(
        `INSERT INTO persons (project_id, uuid, properties, is_identified, created_at, version) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (project_id, uuid) DO UPDATE SET properties = excluded.properties, is_identified = excluded.is_identified,
           created_at = excluded.created_at, version = excluded.version`,
      ),
      insertGroupType: db.prepare('INSERT OR IGNORE INTO group_types (project_id, group_type, group_type_index) VALUES (?, ?, ?)'),
      upsertGroup: db.prepare(
        `INSERT INTO groups (project_id, group_type_index, group_key, properties, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (project_id, group_type_index, group_key) DO UPDATE SET properties = excluded.properties`,
      ),
      // First non-null type wins and never changes afterwards (users may edit it via the API).
      upsertPropertyDefinition: db.prepare(
        `INSERT INTO property_definitions (id, project_id, name, type, group_type_index, property_type, is_numerical, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (project_id, type, group_type_index, name) DO UPDATE SET property_type = excluded.property_type,
           is_numerical = excluded.is_numerical
         WHERE property_definitions.property_type IS NULL AND excluded.property_type IS NOT NULL`,
      ),
      upsertEventDefinition: db.prepare(
        `INSERT INTO event_definitions (id, project_id, name, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (project_id, name) DO UPDATE SET last_seen_at = max(event_definitions.last_seen_at, excluded.last_seen_at)`,
      ),
      insertEventProperty: db.prepare('INSERT OR IGNORE INTO event_properties (project_id, event, property) VALUES (?, ?, ?)'),
      insertUuid: db.prepare('INSERT OR IGNORE INTO event_uuids (project_id, uuid, flush_seq) VALUES (?, ?, ?)'),
      syncNormal: db.prepare('PRAGMA synchronous = NORMAL'),
      syncFull: db.prepare('PRAGMA synchronous = FULL'),
      setFlushSeq: db.prepare("INSERT INTO ingest_state (key, value) VALUES ('flush_seq', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"),
      getFlushSeq: db.prepare("SELECT value FROM ingest_state WHERE key = 'flush_seq'"),
      personsByDistinctIds: db.prepare(
        `SELECT d.distinct_id, p.* FROM person_distinct_ids d JOIN persons p ON p.project_id = d.project_id AND p.uuid = d.person_uuid
         WHERE d.project_id = ? AND d.distinct_id IN (SELECT value FROM json_each(?))`,
      ),
      forgetUuids: db.prepare('DELETE FROM event_uuids WHERE project_id = ? AND uuid IN (SELECT unhex(value) FROM json_each(?))'),
      existingUuids: db.prepare('SELECT uuid FROM event_uuids WHERE project_id = ? AND uuid IN (SELECT unhex(value) FROM json_each(?))'),
      groupTypes: db.prepare('SELECT group_type, group_type_index FROM group_types WHERE project_id = ?'),
      group: db.prepare('SELECT properties, created_at FROM groups WHERE project_id = ? AND group_type_index = ? AND group_key = ?'),
    };
  }

  async loadSnapshot(request: IngestSnapshotRequest): Promise<IngestSnapshot> {
    const snapshot: IngestSnapshot = {
      distinctIdToPerson: new Map(),
      persons: new Map(),
      existingUuids: new Map(),
      groupTypes: new Map(),
      groups: new Map(),
    };
    const projects = new Set([...request.distinctIds.keys(), ...request.eventUuids.keys(), ...request.groups.keys()]);

    // One prepared statement per lookup, the batch's keys passed as a single JSON array: no
    // per-flush statement preparation and no parameter-count limit.
    const q = this.statements;
    for (const [projectId, ids] of request.distinctIds) {
      const mapping = getOrCreate(snapshot.distinctIdToPerson, projectId, () => new Map<string, string>());
      if (ids.size === 0) continue; // all of them were cached
      const rows = q.personsByDistinctIds.all(projectId, JSON.stringify([...ids])) as (Row & { distinct_id: string })[];
      for (const row of rows) {
        mapping.set(row.distinct_id, row.uuid as string);
        if (!snapshot.persons.has(row.uuid as string)) snapshot.persons.set(row.uuid as string, personFromRow(row));
      }
    }

    for (const [projectId, uuids] of request.eventUuids) {
      const existing = getOrCreate(snapshot.existingUuids, projectId, () => new Set<string>());
      const hex = uuids.map((uuid) => uuid.replace(/-/g, ''));
      for (const row of q.existingUuids.all(projectId, JSON.stringify(hex)) as { uuid: Uint8Array }[]) existing.add(bytesToUuid(row.uuid));
    }

    for (const projectId of projects) {
      const types = new Map<string, number>();
      const rows = q.groupTypes.all(projectId) as {
        group_type: string;
        group_type_index: number;
      }[];
      for (const row of rows) types.set(row.group_type, row.group_type_index);
      snapshot.groupTypes.set(projectId, types);
    }

    for (const [projectId, keys] of request.groups) {
      const groups = getOrCreate(snapshot.groups, projectId, () => new Map());
      const types = snapshot.groupTypes.get(projectId);
      for (const composite of keys) {
        const [type, key] = composite.split('\u0000');
        const index = types?.get(type);
        if (index === undefined) continue; // a type never seen has no groups yet
        const row = q.group.get(projectId, index, key) as Row | undefined;
        if (row) groups.set(groupKeyOf(index, key), { properties: parseJson<JsonObject>(row.properties, {}), created_at: row.created_at as string });
      }
    }
    return snapshot;
  }

  /**
   * Without an fsync of its own (synchronous = NORMAL for this transaction only): the flush log
   * has made the flush durable already, and replays it if a power cut takes this commit away.
   */
  async applyChanges(changes: IngestChanges): Promise<void> {
    const s = this.statements;
    const now = new Date().toISOString();
    s.syncNormal.run();
    try {
      this.applyInTransaction(changes, now);
    } finally {
      s.syncFull.run();
    }
    this.bumpStamps(changes);
  }

  /** After the commit: a reader that saw the old stamps must read again. */
  private bumpStamps(changes: IngestChanges): void {
    for (const d of changes.setDistinctIds) this.stamps.bump(distinctIdKey(d.project_id, d.distinct_id));
    for (const r of changes.reassignDistinctIds) this.stamps.bump(personKey(r.project_id, r.from_person_uuid));
    for (const p of changes.deletePersons) {
      this.stamps.bump(personKey(p.project_id, p.uuid));
      this.stamps.bump(cohortsKey(p.project_id));
    }
    for (const p of changes.upsertPersons) this.stamps.bump(personKey(p.project_id, p.uuid));
    for (const t of changes.newGroupTypes) this.stamps.bump(groupTypesKey(t.project_id));
    for (const g of changes.upsertGroups) this.stamps.bump(groupKey(g.project_id, g.group_type_index, g.group_key));
  }

  private applyInTransaction(changes: IngestChanges, now: string): void {
    const s = this.statements;
    this.write(() => {
      for (const r of changes.reassignDistinctIds) {
        s.reassign.run(r.to_person_uuid, r.project_id, r.from_person_uuid);
        s.moveCohortPeople.run(r.to_person_uuid, r.project_id, r.from_person_uuid);
      }
      for (const d of changes.setDistinctIds) s.setDistinctId.run(d.project_id, d.distinct_id, d.person_uuid);
      for (const p of changes.deletePersons) {
        s.deletePerson.run(p.project_id, p.uuid);
        s.deletePersonId.run(p.project_id, p.uuid);
        s.deleteOverrides.run(p.project_id, p.uuid);
        s.deleteCohortPeople.run(p.project_id, p.uuid);
      }
      for (const p of changes.upsertPersons) {
        s.upsertPerson.run(p.project_id, p.uuid, JSON.stringify(p.properties), p.is_identified ? 1 : 0, p.created_at, p.version);
        s.insertPersonId.run(p.project_id, p.uuid);
      }
      for (const t of changes.newGroupTypes) s.insertGroupType.run(t.project_id, t.group_type, t.group_type_index);
      for (const g of changes.upsertGroups) {
        s.upsertGroup.run(g.project_id, g.group_type_index, g.group_key, JSON.stringify(g.properties), g.created_at);
      }
      for (const d of changes.propertyDefinitions) {
        s.upsertPropertyDefinition.run(
          uuidv7(),
          d.project_id,
          d.name,
          d.type,
          d.group_type_index ?? -1,
          d.property_type,
          d.property_type === 'Numeric' ? 1 : 0,
          now,
        );
      }
      for (const e of changes.eventDefinitions) s.upsertEventDefinition.run(uuidv7(), e.project_id, e.name, now, e.last_seen_at);
      for (const p of changes.eventProperties) s.insertEventProperty.run(p.project_id, p.event, p.property);
      for (const u of changes.eventUuids) s.insertUuid.run(u.project_id, uuidToBytes(u.uuid), changes.flushSeq);
      s.setFlushSeq.run(changes.flushSeq);
    });
  }

  /** A committed transaction with the default synchronous = FULL syncs the WAL, and so every earlier commit. */
  async makeDurable(): Promise<void> {
    const s = this.statements;
    this.write(() => s.setFlushSeq.run((s.getFlushSeq.get() as { value: number } | undefined)?.value ?? 0));
  }

  /**
   * One transaction; if it fails (disk full, read-only file system, I/O error) and SQLite left
   * it open, roll it back here: otherwise every later flush would fail on "cannot start a
   * transaction within a transaction" even after the disk is fixed.
   */
  private write(work: () => void): void {
    try {
      this.db.transaction(work)();
    } catch (error) {
      if (this.db.isTransaction) {
        try {
          this.db.exec('ROLLBACK');
        } catch {
          // still failing: the next write tries again
        }
      }
      throw error;
    }
  }

  async committedFlushSeq(): Promise<number> {
    const row = this.statements.getFlushSeq.get() as { value: number } | undefined;
    return row?.value ?? 0;
  }

  async forgetUuidsAfter(flushSeq: number): Promise<void> {
    this.write(() => {
      this.db.prepare('DELETE FROM event_uuids WHERE flush_seq > ?').run(flushSeq);
      this.statements.setFlushSeq.run(flushSeq);
    });
  }

  async forgetUuids(uuids: UuidsByProject): Promise<void> {
    this.write(() => {
      for (const [projectId, hex] of uuids) this.statements.forgetUuids.run(projectId, JSON.stringify(hex));
    });
  }

  async personsOf(projectId: number, distinctIds: string[]): Promise<Map<string, { person: PersonRecord; distinct_ids: string[] }>> {
    const rows = this.db
      .prepare(
        'SELECT d.distinct_id AS key, p.* FROM person_distinct_ids d JOIN persons p ON p.project_id = d.project_id AND p.uuid = d.person_uuid ' +
          'WHERE d.project_id = ? AND d.distinct_id IN (SELECT value FROM json_each(?))',
      )
      .all(projectId, JSON.stringify(distinctIds)) as Row[];
    const byPerson = new Map<string, { person: PersonRecord; distinct_ids: string[] }>();
    const found = new Map<string, { person: PersonRecord; distinct_ids: string[] }>();
    for (const row of rows) {
      found.set(row.key as string, getOrCreate(byPerson, row.uuid as string, () => ({ person: personFromRow(row), distinct_ids: [] })));
    }
    // Every distinct id of those persons in one statement, not one per person.
    const ids = this.db
      .prepare('SELECT person_uuid, distinct_id FROM person_distinct_ids WHERE project_id = ? AND person_uuid IN (SELECT value FROM json_each(?)) ORDER BY distinct_id')
      .all(projectId, JSON.stringify([...byPerson.keys()])) as { person_uuid: string; distinct_id: string }[];
    for (const id of ids) byPerson.get(id.person_uuid)?.distinct_ids.push(id.distinct_id);
    return found;
  }

  async *allPersons(): AsyncIterable<{ person: PersonRecord; distinct_ids: string[] }> {
    const ids = this.db.prepare('SELECT distinct_id FROM person_distinct_ids WHERE project_id = ? AND person_uuid = ?');
    // Materialise first: the cursor must not stay open across the consumer's awaits.
    const rows = this.db.prepare('SELECT * FROM persons').all() as Row[];
    for (const row of rows) {
      const person = personFromRow(row);
      const distinctIds = (ids.all(person.project_id, person.uuid) as { distinct_id: string }[]).map((r) => r.distinct_id);
      yield { person, distinct_ids: distinctIds };
    }
  }
}
