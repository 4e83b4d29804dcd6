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
import { walkRows } from './walk.js';

export async function planRequest(query: EventsQuery, lookup: TypeLookup): Promise<QueryPlan> {
  try {
    return await compileTyped({ now: query.now }, lookup, (ctx) => buildPlan(query, ctx));
  } catch (error) {
    if (error instanceof HogQLError) throw validationError(error.message, error.attr);
    throw error;
  }
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

/** An aggregating `select`: groups are few, so they page by offset and count with a window. */
export async function groupedPage(run: Runner, plan: QueryPlan, limit: number, offset: number) {
  const select = plan.select!;
  const rows = await run(groupedQuery(plan, limit, offset));
  // A page past the last group carries no total: read it from the first group.
  const first = rows[0] ?? (offset > 0 ? (await run(groupedQuery(plan, 1, 0)))[0] : undefined);
  const count = Number(first?.__total ?? 0);
  return { count, columns: select.columns, types: select.types, results: rows.map((row) => selectValues(row, select.types)) };
}

/** The CSV body; the query has already produced its first chunk when this returns. */
export async function csvExport(store: EventStore, plan: QueryPlan, paging: Paging): Promise<AsyncIterable<string>> {
  const select = plan.select;
  const rows = select?.grouped
    ? streamRows(store, groupedQuery(plan, paging.limit, paging.offset), CSV_CHUNK_ROWS)
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

async function* mapChunks<T>(chunks: AsyncIterable<Row[]>, map: (row: Row) => T): AsyncGenerator<T[]> {
  for await (const rows of chunks) yield rows.map(map);
}

/** One stored event with its person, or null. */
export async function eventById(run: Runner, persons: PersonLookup, projectId: number, uuid: string): Promise<{ event: EventResult; row: Row } | null> {
  const [row] = await run(eventByIdQuery(new EventsScope({ propertyType: () => null, now: new Date() }, projectId), uuid));
  if (!row) return null;
  return { event: eventResult(row, await persons(projectId, [row.distinct_id as string])), row };
}
