/**
 * What the events routes call: compile a request, then answer it as a JSON page, a CSV stream
 * or a single event. HTTP concerns (links, headers) stay in events/routes.ts.
 */
import { validationError } from '../kernel/errors.js';
import { EventsScope, HogQLError } from '../hogql/index.js';
import type { EventStore } from '../store/types.js';
import { CSV_CHUNK_ROWS, eventsCsv, primed, tableCsv } from './csv.js';
import { listPage } from './list.js';
import type { PersonLookup } from './persons.js';
import { buildPlan, type QueryPlan } from './plan.js';
import { eventResult, selectValues, type EventResult, eventKey, selectKey } from './rows.js';
import { queryError, streamRows, type Row, type Runner } from './run.js';
import { eventByIdQuery, groupedQuery, pageQuery } from './statements.js';
import type { StatsCache } from './stats.js';
import { compileTyped, type TypeLookup } from './typed-compile.js';
import type { Cursor, EventsQuery, Paging } from './types.js';
import { offsetRows, walkRows } from './walk.js';
import { matchStats } from './stats.js';

export async function planRequest(query: EventsQuery, lookup: TypeLookup, paging: Paging): Promise<QueryPlan> {
  let plan: QueryPlan;
  try {
    plan = await compileTyped({ now: query.now }, lookup, (ctx) => buildPlan(query, ctx));
  } catch (error) {
    if (error instanceof HogQLError) throw validationError(error.message, error.attr);
    throw error;
  }
  if (plan.orderBy && paging.cursor) throw validationError('A cursor continues the default order (newest first); with orderBy, page with offset.', 'cursor');
  return plan;
}

export interface JsonPage {
  count: number;
  results: EventResult[] | unknown[][];
  /** Keyset pages: positions for the links. Aggregating pages use plain offsets instead. */
  next: Cursor | null;
  previous: Cursor | null;
  columns?: string[];
  types?: string[];
}

/**
 * Stored events, or the rows of a `select` that does not aggregate. `pageBytes`: the event
 * store's, for reading a long page a part per query.
 */
export async function walkPage(run: Runner, persons: PersonLookup, plan: QueryPlan, paging: Paging, cache: StatsCache, pageBytes: number): Promise<JsonPage> {
  const select = plan.select;
  const { rows, ...page } = await listPage(run, plan, paging, cache, select ? selectKey : eventKey, pageBytes);
  if (select) return { ...page, columns: select.columns, types: select.types, results: rows.map((row) => selectValues(row, select.types)) };
  const people = await persons(plan.projectId, rows.map((row) => row.distinct_id as string));
  return { ...page, results: rows.map((row) => eventResult(row, people)) };
}

/**
 * Events (or `select` rows) in an `orderBy` order: offset pages, since a keyset position needs
 * the (timestamp, uuid) order; the count is the list's own.
 */
export async function orderedPage(
  run: Runner,
  persons: PersonLookup,
  plan: QueryPlan,
  paging: Paging,
  cache: StatsCache,
): Promise<{ count: number; results: unknown[]; columns?: string[]; types?: string[] }> {
  const { n } = await matchStats(run, plan, cache);
  const rows = n === 0 ? [] : await run(pageQuery(plan, { limit: paging.limit, offset: paging.offset, cursor: null, since: null }));
  const select = plan.select;
  if (select) return { count: n, columns: select.columns, types: select.types, results: rows.map((row) => selectValues(row, select.types)) };
  const people = await persons(plan.projectId, rows.map((row) => row.distinct_id as string));
  return { count: n, results: rows.map((row) => eventResult(row, people)) };
}

/** An aggregating `select`: groups are few, so they page by offset and count with a window. */
export async function groupedPage(run: Runner, plan: QueryPlan, limit: number, offset: number) {
  const select = plan.select!;
  const rows = await run(groupedQuery(plan, limit, offset));
  // A page past the last group carries no total: read it from the first group.
  const first = rows[0] ?? (offset > 0 ? (await run(groupedQuery(plan, 1, 0)))[0] : undefined);
  const count = Number(first?.__total ?? 0);
  return { count, columns: select.columns, types: select.types, results: rows.map((row) => selectValues(row, select.types)) };
}

/** How many rows the export's query matches in all (events, `select` rows or groups). */
export async function exportTotal(run: Runner, plan: QueryPlan, cache: StatsCache): Promise<number> {
  if (!plan.select?.grouped) return (await matchStats(run, plan, cache)).n;
  return (await groupedPage(run, plan, 1, 0)).count;
}

/** The CSV body; the query has already produced its first chunk when this returns. */
export async function csvExport(store: EventStore, plan: QueryPlan, paging: Paging): Promise<AsyncIterable<string>> {
  const select = plan.select;
  const rows = select?.grouped
    ? streamRows(store, groupedQuery(plan, paging.limit, paging.offset), CSV_CHUNK_ROWS)
    : plan.orderBy
      ? offsetRows((page) => streamRows(store, pageQuery(plan, page), CSV_CHUNK_ROWS), { ...paging, since: null, withPersonId: !select }, store.pageBytes)
      : walkRows(
          (page) => streamRows(store, pageQuery(plan, page), CSV_CHUNK_ROWS),
          { ...paging, since: null, withPersonId: !select },
          select ? selectKey : eventKey,
          store.pageBytes,
        );
  let chunks: AsyncIterable<Row[]>;
  try {
    chunks = await primed(rows);
  } catch (error) {
    throw queryError(error, plan.hogqlAttr);
  }
  if (!select) return eventsCsv(chunks);
  return tableCsv(select.columns, mapChunks(chunks, (row) => selectValues(row, select.types)));
}

/** Every event the plan matches (no `select`), newest first, as result objects a chunk at a time. */
export async function eventsJson(store: EventStore, persons: PersonLookup, plan: QueryPlan, paging: Paging): Promise<AsyncIterable<EventResult[]>> {
  const rows = walkRows((page) => streamRows(store, pageQuery(plan, page), CSV_CHUNK_ROWS), { ...paging, since: null, withPersonId: true }, eventKey, store.pageBytes);
  let chunks: AsyncIterable<Row[]>;
  try {
    chunks = await primed(rows);
  } catch (error) {
    throw queryError(error, plan.hogqlAttr);
  }
  return (async function* () {
    for await (const chunk of chunks) {
      const people = await persons(plan.projectId, chunk.map((row) => row.distinct_id as string));
      yield chunk.map((row) => eventResult(row, people));
    }
  })();
}

async function* mapChunks<T>(chunks: AsyncIterable<Row[]>, map: (row: Row) => T): AsyncGenerator<T[]> {
  for await (const rows of chunks) yield rows.map(map);
}

/** One stored event with its person, or null. */
export async function eventById(run: Runner, persons: PersonLookup, projectId: number, uuid: string): Promise<{ event: EventResult; row: Row } | null> {
  const [row] = await run(eventByIdQuery(new EventsScope({ propertyType: () => null, now: new Date() }, projectId), uuid));
  if (!row) return null;
  return { event: eventResult(row, await persons(projectId, [row.distinct_id as string])), row };
}
