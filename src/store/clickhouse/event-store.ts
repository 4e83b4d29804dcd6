/**
 * The distributed mode's event store: events in ClickHouse (schema.ts), written in bulk as
 * pre-built JSONEachRow text, read through the ClickHouse dialect (hogql/clickhouse/). ClickHouse
 * has no transactions, so a write is: check the position, insert the events, apply the person
 * mirror's changes, record the position. A write retried after a failure between those steps
 * inserts the same rows again, which the ReplacingMergeTree on uuid (read with FINAL) and, on a
 * cluster, the replicated block de-duplication make harmless.
 */
import { createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import { positionAfter } from '../event-slice.js';
import { queryFailure, QueryTimeoutError, QueryCancelledError } from '../errors.js';
import { storeUnavailable } from '../../kernel/errors.js';
import { readFlushRecord } from '../flush-record.js';
import { combinePersonChanges, type PersonChanges } from '../person-changes.js';
import type { EventQuery, EventSlice, EventStore, EventStorePosition, IngestChanges, PersonErasure, PersonMirrorState, PersonRecord, StoredEvent, UuidsByProject } from '../types.js';
import { getOrCreate } from '../../util/get-or-create.js';
import { answersWithinMs, withinMs } from '../../util/within-ms.js';
import { ClickHouseDialect } from '../../hogql/clickhouse/dialect.js';
import { stringLiteral } from '../../hogql/clickhouse/values.js';
import { materializedColumns, materializedValues } from './materialized.js';
import { clickhouseMigrations, migrationsTable, type SchemaTarget } from './schema.js';
import { retryWhileQuorumBusy } from './quorum.js';
import { inProcessConnection } from './transport.js';

export interface ClickHouseSettingsInput {
  /** Server URLs; the first is written to and queried (a Distributed table reaches the others). */
  urls: string[];
  database: string;
  /** remote_servers cluster name: events are a Distributed table over its shards. */
  cluster: string | null;
  /** This node's name: its flush position is kept under it. */
  node: string;
  queryTimeoutMs: number;
}

/**
 * Rows per INSERT the flush path aims for: each insert makes a part per shard, so fewer, bigger
 * inserts mean fewer merges; 10,000 (~15 MB of typical events) is what the probe inserted at
 * 50–70k events/s, and small enough for the feed's memory bound (it also writes less when due).
 */
const WRITE_UNIT = 10_000;
const MUTATION_WAIT_MS = 60_000;
/** /_ready's probe of one shard must answer quickly, even from a server that hangs. */
const PING_SHARD_MS = 1_000;
/** Rows of the cohort mirror per INSERT (one query text each). */
const COHORT_LINES_PER_INSERT = 10_000;

/** ClickHouse error codes → the store's engine-neutral failures (store/errors.ts). */
const TIMEOUT = new Set([159, 160]);
const MEMORY = new Set([241]);
/** A server of the cluster cannot be reached (a shard down): NETWORK_ERROR, SOCKET_TIMEOUT, ALL_CONNECTION_TRIES_FAILED, NO_REMOTE_SHARD_AVAILABLE. */
const UNREACHABLE = new Set([209, 210, 279, 519]);
const UNREACHABLE_SYSTEM = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** Errors of evaluating a user's expression over the data: the request's fault (a 400). */
const EVALUATION = new Set([6, 27, 36, 38, 41, 42, 43, 44, 53, 69, 70, 72, 76, 184, 215, 386, 427]);

function errorCode(error: unknown): number | null {
  const code = Number((error as { code?: unknown })?.code);
  if (Number.isFinite(code)) return code;
  const match = /Code: (\d+)/.exec(error instanceof Error ? error.message : '');
  return match ? Number(match[1]) : null;
}

function classify(error: unknown, timeoutMs: number): unknown {
  if (error instanceof Error && error.name === 'AbortError') return error;
  const system = (error as { code?: unknown })?.code;
  if (typeof system === 'string' && UNREACHABLE_SYSTEM.has(system)) return storeUnavailable('EventStoreUnavailableError', error);
  const code = errorCode(error);
  // A query over the Distributed table with a shard down fails (never silently partial): 503.
  if (code !== null && UNREACHABLE.has(code)) return storeUnavailable('EventStoreUnavailableError', error);
  if (code !== null && TIMEOUT.has(code)) return new QueryTimeoutError(timeoutMs);
  if (code !== null && MEMORY.has(code)) return queryFailure('QueryOutOfMemoryError', (error as Error).message);
  if (code !== null && EVALUATION.has(code)) return queryFailure('QueryEvaluationError', firstLine((error as Error).message));
  return error;
}

const firstLine = (message: string) => message.split('\n')[0].replace(/, e\.what\(\) = .*$/, '');

const micros = (date: Date) => date.getTime() * 1000;

/** 22.1 on: window functions on by default (21.x had them behind an experimental setting), JSONExtract, any joins. */
async function isCurrentServer(client: ClickHouseClient): Promise<boolean> {
  const result = await client.query({ query: 'SELECT version() AS v', format: 'JSONEachRow' });
  const [row] = await result.json<{ v: string }>();
  const major = Number(/^(\d+)\./.exec(row?.v ?? '')?.[1] ?? 0);
  return major >= 22;
}

export class ClickHouseEventStore implements EventStore {
  readonly writeUnit = WRITE_UNIT;
  readonly keepsOneRowPerUuid = true;
  readonly pageBytes = 64 * 2 ** 20;
  readonly dialect: ClickHouseDialect;
  private readonly target: SchemaTarget;
  private readonly running = new Set<AbortController>();
  /** Versions of the mirror's rows: increasing within this node (ms since the epoch × 1000 + a counter). */
  private lastVersion = 0;
  /** Set with several nodes on one metadata store (followPersons). */
  private personSource: ((persons: { project_id: number; uuid: string }[]) => Promise<PersonMirrorState>) | null = null;
  private writes: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly client: ClickHouseClient,
    private readonly settings: ClickHouseSettingsInput,
    current: boolean,
  ) {
    this.target = { database: settings.database, cluster: settings.cluster };
    this.dialect = new ClickHouseDialect({ database: settings.database, node: settings.node, materialized: materializedColumns(), current });
  }

  static async open(settings: ClickHouseSettingsInput, { migrate = true } = {}): Promise<ClickHouseEventStore> {
    const client = connect(settings, settings.database);
    try {
      if (migrate) await ClickHouseEventStore.migrate(settings);
      const store = new ClickHouseEventStore(client, settings, await isCurrentServer(client));
      return store;
    } catch (error) {
      await client.close();
      throw error;
    }
  }

  /** Creates the database and applies the pending migrations; says which it applied. */
  static async migrate(settings: Pick<ClickHouseSettingsInput, 'urls' | 'database' | 'cluster'>): Promise<number[]> {
    const target = { database: settings.database, cluster: settings.cluster };
    const admin = connect({ ...settings, queryTimeoutMs: 0 }, 'default');
    try {
      const onCluster = target.cluster ? ` ON CLUSTER \`${target.cluster}\`` : '';
      await admin.command({ query: `CREATE DATABASE IF NOT EXISTS \`${target.database}\`${onCluster}` });
      await admin.command({ query: migrationsTable(target) });
      const result = await admin.query({ query: `SELECT version FROM \`${target.database}\`.schema_migrations`, format: 'JSONEachRow' });
      const applied = new Set((await result.json<{ version: number }>()).map((row) => Number(row.version)));
      const done: number[] = [];
      for (const migration of clickhouseMigrations(target)) {
        if (applied.has(migration.version)) continue;
        for (const statement of migration.statements) {
          if (typeof statement === 'string') await admin.command({ query: statement });
          else if (!(await hasColumn(admin, target.database, statement.unlessColumn))) {
            // A node starting at the same time may have added it between the check and the ALTER.
            await admin.command({ query: statement.sql }).catch(async (error: unknown) => {
              if (!(await hasColumn(admin, target.database, statement.unlessColumn))) throw error;
            });
          }
        }
        await admin.insert({
          table: `\`${target.database}\`.schema_migrations`,
          values: [{ version: migration.version, applied_at: Math.floor(Date.now() / 1000) }],
          format: 'JSONEachRow',
        });
        done.push(migration.version);
      }
      return done;
    } finally {
      await admin.close();
    }
  }

  private table(name: string): string {
    return `\`${this.settings.database}\`.\`${name}\``;
  }

  private nextVersion(): number {
    this.lastVersion = Math.max(this.lastVersion + 1, Date.now() * 1000);
    return this.lastVersion;
  }

  /** One write at a time: each checks the position the one before recorded. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.writes.then(work, work);
    this.writes = next.catch(() => undefined);
    return next;
  }

  /** Inserts into the mirror wait for every replica, so that each shard's joins see them at once. */
  private get mirrorSettings(): ClickHouseSettings {
    return this.settings.cluster ? { insert_quorum: String(this.settings.urls.length) } : {};
  }

  /** Mirror writes wait for every replica, retried while another node's quorum insert runs (quorum.ts). */
  private mirrorCommand(query: string): Promise<void> {
    return retryWhileQuorumBusy(async () => {
      await this.client.command({ query, clickhouse_settings: this.mirrorSettings });
    });
  }

  private insertMirror(table: string, lines: string[]): Promise<void> {
    return retryWhileQuorumBusy(() => this.insertText(table, lines, this.mirrorSettings));
  }

  private async insertText(table: string, lines: string[], settings: ClickHouseSettings = {}): Promise<void> {
    if (lines.length === 0) return;
    await this.client.command({
      query: `INSERT INTO ${this.table(table)} FORMAT JSONEachRow\n${lines.join('\n')}`,
      clickhouse_settings: settings,
    });
  }

  write(slice: EventSlice): Promise<void> {
    return this.serial(async () => {
      const stored = await this.position();
      const expected = { seq: slice.after, events: slice.from };
      if (stored.seq !== expected.seq || stored.events !== expected.events) {
        throw new Error(`the event store holds ${JSON.stringify(stored)}, not ${JSON.stringify(expected)}; the write is skipped`);
      }
      const parts = slice.flushes.map((flush, i) => {
        const record = readFlushRecord(flush.bytes);
        return { record, start: i === 0 ? slice.from : 0, end: i === slice.flushes.length - 1 ? slice.to : record.count };
      });
      const lines: string[] = [];
      for (const part of parts) for (const e of part.record.events(part.start, part.end)) lines.push(eventLine(e, part.record.changes.flushSeq, this.settings.node));
      await this.insertText('events', lines, this.settings.cluster ? { insert_distributed_sync: 1 } : {});
      const changes = parts.filter((part) => part.start === 0).map((part) => part.record.changes);
      if (this.personSource) await this.copyPersons(changes, this.personSource);
      else for (const run of combinePersonChanges(changes)) await this.mirrorPersons(run);
      await this.recordPosition(positionAfter(slice));
    });
  }

  /** Imports (types.ts): outside the flush log, under this node's name, flush_seq 0. */
  importEvents(events: StoredEvent[]): Promise<void> {
    return this.serial(async () => {
      const lines = events.map((e) => eventLine(e, 0, this.settings.node));
      await this.insertText('events', lines, this.settings.cluster ? { insert_distributed_sync: 1 } : {});
    });
  }

  async countEvents(): Promise<number> {
    const [row] = await this.rows<{ n: string }>(`SELECT count() AS n FROM ${this.table('events')} FINAL`);
    return Number(row?.n ?? 0);
  }

  async *exportEvents(chunkRows = 2_048): AsyncIterable<StoredEvent[]> {
    const query = `SELECT project_id, uuid, event, distinct_id, stored_person_id, timestamp, created_at, properties, elements_chain,
                     \`$group_0\` AS g0, \`$group_1\` AS g1, \`$group_2\` AS g2, \`$group_3\` AS g3, \`$group_4\` AS g4
                   FROM ${this.table('events')} FINAL`;
    for await (const rows of this.stream({ sql: query, params: [] }, chunkRows)) yield rows.map(storedEventOfRow);
  }

  private async recordPosition(position: EventStorePosition): Promise<void> {
    const row = { node: this.settings.node, seq: position.seq, events: position.events, version: this.nextVersion() };
    await this.insertMirror('sync_state', [JSON.stringify(row)]);
  }

  followPersons(source: (persons: { project_id: number; uuid: string }[]) => Promise<PersonMirrorState>): void {
    this.personSource = source;
  }

  /**
   * The mirror rows of every person these flushes touched, as the metadata store has them now
   * (a person it no longer has is a deletion), under the version of that read; also the persons
   * of events written again after a redelivery (`refreshPersons`).
   */
  private async copyPersons(changes: (PersonChanges & Pick<IngestChanges, 'refreshPersons'>)[], source: (persons: { project_id: number; uuid: string }[]) => Promise<PersonMirrorState>): Promise<void> {
    const touched = new Map<string, { project_id: number; uuid: string }>();
    const touch = (project_id: number, uuid: string) => touched.set(`${project_id}:${uuid.toLowerCase()}`, { project_id, uuid });
    for (const c of changes) {
      for (const p of c.upsertPersons) touch(p.project_id, p.uuid);
      for (const p of c.deletePersons) touch(p.project_id, p.uuid);
      for (const r of c.reassignDistinctIds) (touch(r.project_id, r.from_person_uuid), touch(r.project_id, r.to_person_uuid));
      for (const d of c.setDistinctIds) touch(d.project_id, d.person_uuid);
      for (const p of c.refreshPersons ?? []) touch(p.project_id, p.uuid);
    }
    if (touched.size === 0) return;
    const state = await source([...touched.values()]);
    const found = new Set(state.persons.map((p) => `${p.project_id}:${p.uuid.toLowerCase()}`));
    const gone = [...touched].filter(([key]) => !found.has(key)).map(([, p]) => p);
    const persons = [
      ...state.persons.map((p) => personLine(p, 0, state.version)),
      ...gone.map((p) => personLine({ ...p, properties: {}, is_identified: false, created_at: new Date(0).toISOString() }, 1, state.version)),
    ];
    await this.insertMirror('persons', persons);
    const ids = state.distinctIds.map((d) => JSON.stringify({ project_id: d.project_id, distinct_id: d.distinct_id, person_id: d.person_uuid.toLowerCase(), is_deleted: 0, version: state.version }));
    await this.insertMirror('person_distinct_ids', ids);
  }

  /** Merges first (distinct ids of one person move to another), then deletions, upserts and assignments. */
  private async mirrorPersons(batch: PersonChanges): Promise<void> {
    const ids: string[] = [];
    for (const r of batch.reassignDistinctIds) {
      const moved = await this.rows<{ distinct_id: string }>(
        `SELECT distinct_id FROM ${this.table('person_distinct_ids')} FINAL WHERE project_id = ${Number(r.project_id)} AND person_id = ${stringLiteral(r.from_person_uuid.toLowerCase())} AND is_deleted = 0`,
      );
      const version = this.nextVersion();
      for (const { distinct_id } of moved) ids.push(JSON.stringify({ project_id: r.project_id, distinct_id, person_id: r.to_person_uuid.toLowerCase(), is_deleted: 0, version }));
    }
    await this.insertMirror('person_distinct_ids', ids);
    const persons: string[] = [];
    for (const p of batch.deletePersons) persons.push(personLine({ project_id: p.project_id, uuid: p.uuid, properties: {}, is_identified: false, created_at: new Date(0).toISOString() }, 1, this.nextVersion()));
    for (const p of batch.upsertPersons) persons.push(personLine(p, 0, this.nextVersion()));
    await this.insertMirror('persons', persons);
    const version = this.nextVersion();
    const assigned = batch.setDistinctIds.map((d) => JSON.stringify({ project_id: d.project_id, distinct_id: d.distinct_id, person_id: d.person_uuid.toLowerCase(), is_deleted: 0, version }));
    await this.insertMirror('person_distinct_ids', assigned);
  }

  async position(): Promise<EventStorePosition> {
    const [row] = await this.rows<{ seq: string; events: string }>(
      `SELECT seq, events FROM ${this.table('sync_state')} FINAL WHERE node = ${stringLiteral(this.settings.node)}`,
    );
    return row ? { seq: Number(row.seq), events: Number(row.events) } : { seq: 0, events: 0 };
  }

  async dataVersion(): Promise<string> {
    const [positions, [mirror]] = await Promise.all([
      this.syncState(),
      // A deletion or a split changes the mirror without new events: its rows carry new versions.
      this.rows<{ persons: string; ids: string }>(
        `SELECT (SELECT max(version) FROM ${this.table('persons')}) AS persons, (SELECT max(version) FROM ${this.table('person_distinct_ids')}) AS ids`,
      ),
    ]);
    return `${positions.map((p) => `${p.node}:${p.seq}.${p.events}`).join(',')};${mirror?.persons}.${mirror?.ids}`;
  }

  async storedFlushSeqs(): Promise<Map<string, number>> {
    return new Map((await this.syncState()).map((row) => [row.node, Number(row.seq)]));
  }

  /** Every node's position, by node. */
  private syncState(): Promise<{ node: string; seq: string; events: string }[]> {
    return this.rows(`SELECT node, seq, events FROM ${this.table('sync_state')} FINAL ORDER BY node`);
  }

  private async rows<T>(query: string, settings: ClickHouseSettings = {}): Promise<T[]> {
    const result = await this.client.query({ query, format: 'JSONEachRow', clickhouse_settings: settings });
    return result.json<T>();
  }

  rebuildPersonMirror(rows: AsyncIterable<{ person: PersonRecord; distinct_ids: string[] }>): Promise<void> {
    return this.serial(async () => {
      // Everything there now is marked deleted first; the rebuilt rows come after, with newer versions.
      const version = this.nextVersion();
      await this.mirrorCommand(`INSERT INTO ${this.table('persons')} SELECT project_id, id, '{}', 0, 0, 1, ${version} FROM ${this.table('persons')} FINAL WHERE is_deleted = 0`);
      await this.mirrorCommand(`INSERT INTO ${this.table('person_distinct_ids')} SELECT project_id, distinct_id, person_id, 1, ${version} FROM ${this.table('person_distinct_ids')} FINAL WHERE is_deleted = 0`);
      const persons: string[] = [];
      const ids: string[] = [];
      for await (const { person, distinct_ids } of rows) {
        const next = this.nextVersion();
        persons.push(personLine(person, 0, next));
        for (const distinctId of distinct_ids) ids.push(JSON.stringify({ project_id: person.project_id, distinct_id: distinctId, person_id: person.uuid.toLowerCase(), is_deleted: 0, version: next }));
      }
      await this.insertMirror('persons', persons);
      await this.insertMirror('person_distinct_ids', ids);
    });
  }

  private querySettings(): ClickHouseSettings {
    const settings: ClickHouseSettings = { join_use_nulls: 1 };
    if (this.settings.queryTimeoutMs > 0) settings.max_execution_time = Math.ceil(this.settings.queryTimeoutMs / 1000);
    // IN subqueries are printed GLOBAL (run once, here). A joined subquery over the Distributed
    // table runs on each shard: 18.16 loses the columns of a GLOBAL JOIN … ON ("Unknown identifier _data1.x").
    if (this.settings.cluster) settings.distributed_product_mode = 'allow';
    return settings;
  }

  async query(query: EventQuery, signal?: AbortSignal): Promise<Record<string, unknown>[]> {
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    this.running.add(controller);
    try {
      const result = await this.client.query({ query: query.sql, format: 'JSONEachRow', clickhouse_settings: this.querySettings(), abort_signal: controller.signal });
      return await result.json<Record<string, unknown>>();
    } catch (error) {
      if (signal?.aborted) throw new QueryCancelledError();
      if (controller.signal.aborted) throw queryFailure('QueryInterruptedError', 'the event store is closing');
      throw classify(error, this.settings.queryTimeoutMs);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.running.delete(controller);
    }
  }

  /** Exports: the rows come as ClickHouse streams them, in chunks; no time limit. */
  async *stream(query: EventQuery, chunkRows = 2048): AsyncIterable<Record<string, unknown>[]> {
    const controller = new AbortController();
    this.running.add(controller);
    try {
      const settings = { ...this.querySettings(), max_execution_time: 0 };
      const result = await this.client.query({ query: query.sql, format: 'JSONEachRow', clickhouse_settings: settings, abort_signal: controller.signal });
      let pending: Record<string, unknown>[] = [];
      for await (const rows of result.stream()) {
        for (const row of rows) pending.push(row.json<Record<string, unknown>>());
        if (pending.length >= chunkRows) {
          yield pending;
          pending = [];
        }
      }
      if (pending.length > 0) yield pending;
    } catch (error) {
      throw classify(error, 0);
    } finally {
      this.running.delete(controller);
    }
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.client.ping()).success;
    } catch {
      return false;
    }
  }

  /**
   * Whether each shard of the cluster answers, asked through server 1 (`remote()` to the shard's
   * replicas, as system.clusters lists them), within PING_SHARD_MS; without a cluster, the server.
   * Server 1 down: every shard counts as down (nothing reaches them through this node).
   */
  async pingShards(): Promise<Record<string, boolean>> {
    const cluster = this.settings.cluster;
    if (!cluster) return { 1: await this.ping() };
    let replicas: { shard_num: number; host_address: string; port: number }[];
    try {
      replicas = await withinMs(PING_SHARD_MS, this.rows(`SELECT shard_num, host_address, port FROM system.clusters WHERE cluster = ${stringLiteral(cluster)}`));
    } catch {
      return { 1: false };
    }
    const shards = new Map<number, string[]>();
    for (const r of replicas) getOrCreate(shards, Number(r.shard_num), () => []).push(`${r.host_address}:${r.port}`);
    const answers = await Promise.all(
      [...shards].map(async ([shard, addresses]) => {
        const probe = this.rows(`SELECT dummy FROM remote(${stringLiteral(addresses.join('|'))}, system.one)`);
        return [shard, await answersWithinMs(PING_SHARD_MS, probe)] as const;
      }),
    );
    return Object.fromEntries(answers);
  }

  async sizeBytes(): Promise<number> {
    // This server's parts (each shard's own server reports its share).
    const [row] = await this.rows<{ bytes: string }>(`SELECT sum(bytes) AS bytes FROM system.parts WHERE active AND database = ${stringLiteral(this.settings.database)}`);
    return Number(row?.bytes ?? 0);
  }

  /** ClickHouse writes parts whole; there is no WAL to fold in. */
  async checkpoint(): Promise<void> {}

  async expireEvents(cutoff: Date, limit: number): Promise<UuidsByProject> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`invalid limit ${limit}`);
    return this.serial(async () => {
      const rows = await this.rows<{ project_id: string; uuid: string }>(
        `SELECT project_id, toString(uuid) AS uuid FROM ${this.table('events')} FINAL WHERE timestamp < ${micros(cutoff)} LIMIT ${limit}`,
      );
      if (rows.length > 0) await this.deleteEvents(`timestamp < ${micros(cutoff)} AND uuid IN (${rows.map((r) => stringLiteral(r.uuid)).join(', ')})`);
      const uuids: UuidsByProject = new Map();
      for (const row of rows) getOrCreate(uuids, Number(row.project_id), () => []).push(row.uuid.replace(/-/g, ''));
      return uuids;
    });
  }

  /** A mutation on every shard, waited for: the next read must not see the rows. */
  private async deleteEvents(condition: string): Promise<void> {
    const table = this.settings.cluster ? 'events_local' : 'events';
    const onCluster = this.settings.cluster ? ` ON CLUSTER \`${this.settings.cluster}\`` : '';
    await this.client.command({ query: `ALTER TABLE ${this.table(table)}${onCluster} DELETE WHERE ${condition}` });
    const deadline = Date.now() + MUTATION_WAIT_MS;
    for (;;) {
      const [row] = await this.rows<{ pending: string }>(
        `SELECT count() AS pending FROM system.mutations WHERE database = ${stringLiteral(this.settings.database)} AND table = ${stringLiteral(table)} AND is_done = 0`,
      );
      if (Number(row?.pending ?? 0) === 0) return;
      if (Date.now() > deadline) throw new Error('the event deletion did not finish in time');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async erasePerson(input: PersonErasure): Promise<number> {
    if (!Number.isSafeInteger(input.afterFlushSeq)) throw new Error(`invalid flush seq ${input.afterFlushSeq}`);
    return this.serial(async () => {
      const project = Number(input.projectId);
      const person = stringLiteral(input.personUuid.toLowerCase());
      const ids = input.distinctIds.map(stringLiteral).join(', ') || "''";
      let deleted = 0;
      if (input.events) {
        const condition = `project_id = ${project} AND ${flushedBefore(input)} AND (stored_person_id = ${person} OR distinct_id IN (${ids}))`;
        const [row] = await this.rows<{ n: string }>(`SELECT count() AS n FROM ${this.table('events')} FINAL WHERE ${condition}`);
        deleted = Number(row?.n ?? 0);
        if (deleted > 0) await this.deleteEvents(condition);
      }
      const version = this.nextVersion();
      await this.mirrorCommand(`INSERT INTO ${this.table('persons')} SELECT project_id, id, '{}', 0, 0, 1, ${version} FROM ${this.table('persons')} FINAL WHERE project_id = ${project} AND id = ${person}`);
      await this.mirrorCommand(`INSERT INTO ${this.table('person_distinct_ids')} SELECT project_id, distinct_id, person_id, 1, ${version} FROM ${this.table('person_distinct_ids')} FINAL
                WHERE project_id = ${project} AND (person_id = ${person} OR distinct_id IN (${ids}))`);
      await this.mirrorCommand(`INSERT INTO ${this.table('cohort_people')} SELECT project_id, cohort_id, person_id, 1, ${version} FROM ${this.table('cohort_people')} FINAL
                WHERE project_id = ${project} AND person_id = ${person} AND is_deleted = 0`);
      const persons: string[] = [];
      const kept: string[] = [];
      for (const { person: p, distinct_ids } of input.keep) {
        const next = this.nextVersion();
        persons.push(personLine(p, 0, next));
        for (const distinctId of distinct_ids) kept.push(JSON.stringify({ project_id: p.project_id, distinct_id: distinctId, person_id: p.uuid.toLowerCase(), is_deleted: 0, version: next }));
      }
      await this.insertMirror('persons', persons);
      await this.insertMirror('person_distinct_ids', kept);
      return deleted;
    });
  }

  /** The old members marked deleted, then the new ones written with a later version. */
  async replaceCohortMembers(projectId: number, cohortId: number, personUuids: string[]): Promise<void> {
    if (!Number.isSafeInteger(projectId) || !Number.isSafeInteger(cohortId)) throw new Error('invalid cohort');
    return this.serial(async () => {
      await this.mirrorCommand(`INSERT INTO ${this.table('cohort_people')} SELECT project_id, cohort_id, person_id, 1, ${this.nextVersion()} FROM ${this.table('cohort_people')} FINAL
                WHERE project_id = ${projectId} AND cohort_id = ${cohortId} AND is_deleted = 0`);
      const version = this.nextVersion();
      const lines = personUuids.map((uuid) => JSON.stringify({ project_id: projectId, cohort_id: cohortId, person_id: uuid.toLowerCase(), is_deleted: 0, version }));
      for (let i = 0; i < lines.length; i += COHORT_LINES_PER_INSERT) await this.insertMirror('cohort_people', lines.slice(i, i + COHORT_LINES_PER_INSERT));
    });
  }

  /** Merges every part (dropping replaced rows and deleted ones' bytes). */
  compact(): Promise<void> {
    return this.serial(async () => {
      const onCluster = this.settings.cluster ? ` ON CLUSTER \`${this.settings.cluster}\`` : '';
      for (const table of [this.settings.cluster ? 'events_local' : 'events', 'persons', 'person_distinct_ids', 'cohort_people']) {
        await this.client.command({ query: `OPTIMIZE TABLE ${this.table(table)}${onCluster} FINAL` }).catch((error: unknown) => {
          if (!nothingToMerge(error)) throw error;
        });
      }
    });
  }

  async interruptQueries(): Promise<void> {
    for (const controller of this.running) controller.abort();
  }

  async close(): Promise<void> {
    await this.interruptQueries();
    await this.writes;
    await this.client.close();
  }
}

/**
 * The rows of flushes committed before a person's deletion. Each node numbers its own flushes, so
 * with several nodes writing this store every node's bound is its own; a node without one had
 * committed nothing yet.
 */
function flushedBefore({ afterFlushSeq, flushesBefore }: Pick<PersonErasure, 'afterFlushSeq' | 'flushesBefore'>): string {
  if (!flushesBefore) return `flush_seq <= ${Number(afterFlushSeq)}`;
  const perNode = Object.entries(flushesBefore).map(([node, seq]) => `(node = ${stringLiteral(node)} AND flush_seq <= ${Number(seq)})`);
  return perNode.length > 0 ? `(${perNode.join(' OR ')})` : '0';
}

/**
 * ClickHouse 18.16 answers OPTIMIZE … FINAL on a replicated table without parts (on any host of
 * ON CLUSTER) with this error instead of doing nothing; the hosts that have parts still merge them.
 */
function nothingToMerge(error: unknown): boolean {
  return error instanceof Error && error.message.includes('Unknown log entry type: 0');
}

async function hasColumn(client: ClickHouseClient, database: string, { table, column }: { table: string; column: string }): Promise<boolean> {
  const result = await client.query({
    query: `SELECT count() AS n FROM system.columns WHERE database = ${stringLiteral(database)} AND table = ${stringLiteral(table)} AND name = ${stringLiteral(column)}`,
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ n: string }>();
  return Number(row?.n ?? 0) > 0;
}

function connect(settings: Pick<ClickHouseSettingsInput, 'urls' | 'queryTimeoutMs'>, database: string): ClickHouseClient {
  return createClient({
    url: settings.urls[0],
    database,
    // 18.16 knows neither JSONCompactEachRow (the client's default insert format) nor parameters.
    clickhouse_settings: { output_format_json_quote_64bit_integers: 1 },
    request_timeout: Math.max(settings.queryTimeoutMs + 10_000, 60_000),
    log: { level: 127 as never },
    connection: inProcessConnection(),
  });
}

function eventLine(e: StoredEvent, flushSeq: number, node: string): string {
  const [g0, g1, g2, g3, g4] = e.groups;
  return JSON.stringify({
    project_id: e.project_id,
    uuid: e.uuid.toLowerCase(),
    event: e.event,
    distinct_id: e.distinct_id,
    stored_person_id: e.person_id?.toLowerCase() ?? null,
    timestamp: micros(e.timestamp),
    created_at: micros(e.created_at),
    properties: e.properties_json,
    ...materializedValues(e.properties_json),
    elements_chain: e.elements_chain,
    $group_0: g0,
    $group_1: g1,
    $group_2: g2,
    $group_3: g3,
    $group_4: g4,
    flush_seq: flushSeq,
    node,
  });
}

/** A row of the events table back as the event it stores (timestamps are µs since the epoch). */
function storedEventOfRow(row: Record<string, unknown>): StoredEvent {
  return {
    project_id: Number(row.project_id),
    uuid: String(row.uuid),
    event: String(row.event),
    distinct_id: String(row.distinct_id),
    person_id: row.stored_person_id === null || row.stored_person_id === undefined ? null : String(row.stored_person_id),
    timestamp: new Date(Math.floor(Number(row.timestamp) / 1000)),
    created_at: new Date(Math.floor(Number(row.created_at) / 1000)),
    properties_json: String(row.properties),
    elements_chain: String(row.elements_chain),
    groups: [String(row.g0), String(row.g1), String(row.g2), String(row.g3), String(row.g4)],
  };
}

function personLine(p: Pick<PersonRecord, 'project_id' | 'uuid' | 'properties' | 'is_identified' | 'created_at'>, deleted: 0 | 1, version: number): string {
  return JSON.stringify({
    project_id: p.project_id,
    id: p.uuid.toLowerCase(),
    properties: JSON.stringify(p.properties),
    is_identified: p.is_identified ? 1 : 0,
    created_at: new Date(p.created_at).getTime() * 1000,
    is_deleted: deleted,
    version,
  });
}

