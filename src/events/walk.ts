/**
 * Reading many rows of a keyset walk a page per query. DuckDB sorts a query's rows in memory
 * (`SIGHTLINE_DUCKDB_MEMORY_LIMIT`), and wide rows (events of a few KB, as browsers send them
 * with GeoIP and person properties) need a few times their bytes: one query for 100,000 such
 * events ran out of 256 MB. The first query asks for a few rows; each later one for as many as
 * fit `pageBytes`, judged by the rows before it, continuing strictly after the last row read.
 */
import type { RowKey } from './rows.js';
import type { Row } from './run.js';
import type { PageRequest } from './statements.js';

/** Rows of the first query, before their size is known; and the most rows of any query. */
const FIRST_PAGE_ROWS = 200;
const MAX_PAGE_ROWS = 100_000;

/** Rows from `first` on, `first.limit` at most, in chunks as `fetch` gives them. */
export async function* walkRows(
  fetch: (page: PageRequest) => AsyncIterable<Row[]> | Promise<Row[]>,
  first: PageRequest,
  key: RowKey,
  pageBytes: number,
): AsyncGenerator<Row[]> {
  let page = first;
  let pageRows = FIRST_PAGE_ROWS;
  for (let remaining = first.limit; remaining > 0; ) {
    const limit = Math.min(remaining, pageRows);
    let last: Row | undefined;
    let read = 0;
    let bytes = 0;
    const fetched = fetch({ ...page, limit });
    for await (const chunk of fetched instanceof Promise ? [await fetched] : fetched) {
      read += chunk.length;
      for (const row of chunk) bytes += rowBytes(row);
      last = chunk[chunk.length - 1] ?? last;
      yield chunk;
    }
    if (read < limit || !last) return;
    remaining -= read;
    page = { ...page, offset: 0, cursor: { reverse: page.cursor?.reverse === true, inclusive: false, ...key(last) } };
    pageRows = Math.min(MAX_PAGE_ROWS, Math.max(1, Math.floor(pageBytes / (bytes / read))));
  }
}

/** All of a walk's rows in one array. */
export async function collectRows(rows: AsyncIterable<Row[]>): Promise<Row[]> {
  const all: Row[] = [];
  for await (const chunk of rows) for (const row of chunk) all.push(row);
  return all;
}

/** About what a row takes in the store's sort: its text, and a few bytes for anything else. */
function rowBytes(row: Row): number {
  let bytes = 0;
  for (const key in row) {
    const value = row[key];
    bytes += typeof value === 'string' ? value.length + 16 : 16;
  }
  return bytes;
}
