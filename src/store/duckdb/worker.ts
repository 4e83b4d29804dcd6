/**
 * The child process side of ThreadedEventStore: hosts the DuckDB event store and answers its
 * calls (util/worker-calls.ts).
 */
import { answerCalls, callerInput } from '../../util/worker-calls.js';
import type { EventQuery, EventSlice, PersonRecord, StoredEvent } from '../types.js';
import { DuckDbEventStore, type DuckOptions } from './event-store.js';
import { IncomingFlushes } from './incoming-flushes.js';
import { LoggedFlushReader } from './logged-flushes.js';

export interface EventStoreWorkerData {
  dataDir: string;
  options: DuckOptions;
}

type PersonRow = { person: PersonRecord; distinct_ids: string[] };

/**
 * How long an opening waits for another process's lock on the file to go: the event store of a
 * server killed with -9 learns it from its closed pipe and exits, which can take a moment longer
 * than the next server takes to start.
 */
const LOCK_WAIT_MS = 10_000;
const LOCK_RETRY_MS = 100;

const { dataDir, options } = callerInput<EventStoreWorkerData>();
let store: DuckDbEventStore | null = null;
const streams = new Map<number, AsyncIterator<Record<string, unknown>[]>>();
/** Queries running or waiting, by the id their caller cancels them with. */
const queries = new Map<number, AbortController>();
/** The record bytes of the write under way. */
let incoming: IncomingFlushes | null = null;
const logged = new LoggedFlushReader();
/** Person rows of a mirror rebuild, sent in chunks, written when the last one arrived. */
let rebuildRows: PersonRow[] = [];

async function* each<T>(items: T[]): AsyncIterable<T> {
  yield* items;
}

async function openWhenUnlocked(): Promise<DuckDbEventStore> {
  const started = Date.now();
  for (;;) {
    try {
      return await DuckDbEventStore.open(dataDir, options);
    } catch (error) {
      if (!/Conflicting lock/.test(String(error)) || Date.now() - started > LOCK_WAIT_MS) throw error;
      await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
    }
  }
}

function opened(): DuckDbEventStore {
  if (!store) throw new Error('the event store is not open');
  return store;
}

const handlers: Record<string, (...args: any[]) => unknown> = {
  /** Answers whether queries may read the materialized columns yet (ThreadedEventStore's dialect). */
  open: async () => {
    store = await openWhenUnlocked();
    return store.materializedReady;
  },
  materializedReady: () => opened().materializedReady,
  /** The slice's flushes come without their bytes, which follow as `flushBytes` calls. */
  write: async (slice: EventSlice) => {
    if (incoming) throw new Error('a write is already under way');
    const flushes = (incoming = new IncomingFlushes());
    try {
      return await opened().write(slice, () => flushes.take());
    } finally {
      flushes.end();
      incoming = null;
    }
  },
  /** The slice's flushes come with where the flush log holds them, and are read from there. */
  writeLogged: async (slice: EventSlice) => {
    try {
      return await opened().write(slice, (flush) => logged.read(flush.logged!));
    } finally {
      logged.close();
    }
  },
  flushBytes: (bytes: Uint8Array) => {
    if (!incoming) throw new Error('no write is under way');
    return incoming.push(bytes);
  },
  position: () => opened().position(),
  importEvents: (events: StoredEvent[]) => opened().importEvents(events),
  countEvents: () => opened().countEvents(),
  query: async (query: EventQuery, queryId: number) => {
    const cancel = new AbortController();
    queries.set(queryId, cancel);
    try {
      return await opened().query(query, cancel.signal);
    } finally {
      queries.delete(queryId);
    }
  },
  cancelQuery: (queryId: number) => queries.get(queryId)?.abort(),
  ping: () => opened().ping(),
  sizeBytes: () => opened().sizeBytes(),
  checkpoint: () => opened().checkpoint(),
  expireEvents: (cutoff: Date, limit: number) => opened().expireEvents(cutoff, limit),
  compact: () => opened().compact(),
  erasePerson: (input: Parameters<DuckDbEventStore['erasePerson']>[0]) => opened().erasePerson(input),
  replaceCohortMembers: (projectId: number, cohortId: number, personUuids: string[]) => opened().replaceCohortMembers(projectId, cohortId, personUuids),
  interruptQueries: () => store?.interruptQueries(),
  streamOpen: (streamId: number, query: EventQuery, chunkRows: number) => {
    streams.set(streamId, opened().stream(query, chunkRows)[Symbol.asyncIterator]());
  },
  streamNext: async (streamId: number) => {
    const iterator = streams.get(streamId);
    if (!iterator) throw new Error(`no stream ${streamId}`);
    const next = await iterator.next();
    if (next.done) streams.delete(streamId);
    return next.done ? null : next.value;
  },
  streamClose: async (streamId: number) => {
    const iterator = streams.get(streamId);
    streams.delete(streamId);
    await iterator?.return?.();
  },
  rebuildRows: (rows: PersonRow[]) => {
    for (const row of rows) rebuildRows.push(row);
  },
  rebuildEnd: async () => {
    const rows = rebuildRows;
    rebuildRows = [];
    await opened().rebuildPersonMirror(each(rows));
  },
  close: async () => {
    for (const iterator of streams.values()) await iterator.return?.();
    streams.clear();
    await store?.close();
    store = null;
  },
};

answerCalls(handlers);
