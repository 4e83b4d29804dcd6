/**
 * Small helpers shared by the ingestion integration tests: raw HTTP to the capture routes,
 * client-side uuids, and reading what a stopped server stored (including the event store's
 * person mirror, which the query layer joins on).
 */
import assert from 'node:assert/strict';
import { v7 as uuidv7 } from 'uuid';

import { DuckDbEventStore } from '../../src/store/duckdb/event-store.js';
import { clickhouseEnvFor, clickhouseRows } from './clickhouse-databases.js';
import type { TestServer } from './server.js';
import { readStores, type StoredSnapshot } from './stores.js';

export const newUuid = (): string => uuidv7();

export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** Any method, any body (string or bytes), exact headers: nothing added but what fetch needs. */
export async function send(
  server: TestServer,
  pathAndQuery: string,
  init: { method?: string; body?: string | Uint8Array; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  const response = await fetch(server.url + pathAndQuery, {
    method: init.method ?? 'POST',
    headers: init.headers ?? {},
    // Bytes as an exact-length ArrayBuffer copy: the DOM typings refuse a Buffer-backed view.
    body: typeof init.body === 'string' || init.body === undefined ? init.body : new Uint8Array(init.body).buffer,
  });
  return readReply(response);
}

/** Status, headers, text and (when the body is JSON) the parsed body of a response. */
export async function readReply(response: Response): Promise<RawResponse> {
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** POSTs a JSON value (or pre-encoded body) and asserts the capture answer `200 {status: 1}`. */
export async function capture(server: TestServer, pathAndQuery: string, body: unknown, headers: Record<string, string> = {}): Promise<void> {
  const raw = typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
  const response = await send(server, pathAndQuery, { body: raw, headers: { 'content-type': 'application/json', ...headers } });
  assert.equal(response.status, 200, `POST ${pathAndQuery} → ${response.status} ${response.text}`);
  assert.deepEqual(response.json, { status: 1 });
}

/** Stops the server (expecting a clean exit) and reads its data dir. */
export async function stopAndRead(server: TestServer): Promise<StoredSnapshot> {
  const code = await server.stop();
  assert.equal(code, 0, `server exit code ${code}\n${server.output().slice(-4000)}`);
  return readStores(server.dataDir);
}

export type StoredEvent = StoredSnapshot['events'][number];
export type StoredPerson = StoredSnapshot['persons'][number];

export function eventsByUuid(snapshot: StoredSnapshot): Map<string, StoredEvent> {
  return new Map(snapshot.events.map((e) => [e.uuid, e]));
}

/** distinct id → person (the metadata store's view). */
export function personsByDistinctId(snapshot: StoredSnapshot): Map<string, StoredPerson> {
  const map = new Map<string, StoredPerson>();
  for (const person of snapshot.persons) for (const id of person.distinct_ids) map.set(id, person);
  return map;
}

type MirrorRow = Record<string, unknown>;

/** The mirror's rows where the server kept them: its ClickHouse database (live rows under FINAL) or its DuckDB file. */
async function readMirrorRows(dataDir: string): Promise<{ ids: MirrorRow[]; persons: MirrorRow[] }> {
  const clickhouse = clickhouseEnvFor(dataDir);
  if (clickhouse.SIGHTLINE_CLICKHOUSE_URL) {
    const select = (sql: string) => clickhouseRows<MirrorRow>(clickhouse.SIGHTLINE_CLICKHOUSE_URL.split(',')[0], clickhouse.SIGHTLINE_CLICKHOUSE_DATABASE, sql);
    return {
      ids: await select('SELECT distinct_id, person_id FROM person_distinct_ids FINAL WHERE is_deleted = 0'),
      persons: (await select('SELECT id, properties, is_identified FROM persons FINAL WHERE is_deleted = 0')).map((p) => ({ ...p, is_identified: p.is_identified === 1 })),
    };
  }
  const store = await DuckDbEventStore.open(dataDir);
  try {
    return {
      ids: await store.query({ sql: 'SELECT distinct_id, person_id::VARCHAR AS person_id FROM person_distinct_ids', params: [] }),
      persons: await store.query({ sql: 'SELECT id::VARCHAR AS id, properties::VARCHAR AS properties, is_identified FROM persons', params: [] }),
    };
  } finally {
    await store.close();
  }
}

/** The event store's person mirror: distinct id → person uuid, and the mirrored person uuids. */
export async function readPersonMirror(dataDir: string): Promise<{ distinctIds: Map<string, string>; persons: Map<string, Record<string, unknown>> }> {
  const { ids, persons } = await readMirrorRows(dataDir);
  const distinctIds = new Map<string, string>();
  for (const row of ids) {
    assert.ok(!distinctIds.has(row.distinct_id as string), `mirror has distinct id ${row.distinct_id} twice`);
    distinctIds.set(row.distinct_id as string, row.person_id as string);
  }
  const byId = new Map<string, Record<string, unknown>>();
  for (const row of persons) {
    assert.ok(!byId.has(row.id as string), `mirror has person ${row.id} twice`);
    byId.set(row.id as string, { ...row, properties: JSON.parse(row.properties as string) });
  }
  return { distinctIds, persons: byId };
}

/** The event store's person mirror must say exactly what the metadata store says. */
export async function assertMirrorMatches(dataDir: string, snapshot: StoredSnapshot): Promise<void> {
  const mirror = await readPersonMirror(dataDir);
  const expectedIds = new Map<string, string>();
  for (const person of snapshot.persons) for (const id of person.distinct_ids) expectedIds.set(id, person.uuid);
  assert.deepEqual(new Map([...mirror.distinctIds].sort()), new Map([...expectedIds].sort()), 'person_distinct_ids mirror differs from the metadata store');
  assert.deepEqual(
    [...mirror.persons.keys()].sort(),
    snapshot.persons.map((p) => p.uuid).sort(),
    'persons mirror differs from the metadata store',
  );
  for (const person of snapshot.persons) {
    const mirrored = mirror.persons.get(person.uuid)!;
    assert.deepEqual(mirrored.properties, person.properties, `mirrored properties of ${person.uuid}`);
    assert.equal(mirrored.is_identified, person.is_identified, `mirrored is_identified of ${person.uuid}`);
  }
}

/** The person an event belongs to now, the way queries resolve it (mirror first, then the column). */
export function currentPersonOf(snapshot: StoredSnapshot, event: StoredEvent): string | null {
  return personsByDistinctId(snapshot).get(event.distinct_id)?.uuid ?? event.person_id;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
