/**
 * One page of the events list (or of a non-aggregating `select`), newest first, with keyset
 * cursors for the links: a page continues strictly below the (timestamp, uuid) of the last row
 * it showed, so events arriving meanwhile — at any timestamp — never shift a walk, which thus
 * shows every event that existed when it started exactly once.
 *
 * The events table has no index, only min/max per row group. A plain ORDER BY … LIMIT reads
 * every row group, so the page query first asks only for rows newer than a lower bound sized
 * from the match statistics (about twice the span that should hold the page), widening it
 * until the page is full or the bound passes the oldest match.
 */
import type { QueryPlan } from './plan.js';
import type { Row, Runner } from './run.js';
import type { RowKey } from './rows.js';
import { timestampText } from '../hogql/dates.js';
import { pageQuery, type PageRequest } from './statements.js';
import { matchStats, type MatchStats, type StatsCache } from './stats.js';
import type { Cursor, Paging } from './types.js';
import { collectRows, walkRows } from './walk.js';

const MIN_SPAN_MS = 1_000;
const GROWTH = 8;

export interface ListPage {
  count: number;
  rows: Row[];
  next: Cursor | null;
  previous: Cursor | null;
}

export async function listPage(run: Runner, plan: QueryPlan, paging: Paging, cache: StatsCache, key: RowKey, pageBytes: number): Promise<ListPage> {
  const stats = await matchStats(run, plan, cache);
  const fetched = stats.n === 0 ? [] : await fetchRows(run, plan, paging, stats, (page) => collectRows(walkRows((part) => run(pageQuery(plan, part)), page, key, pageBytes)));
  const more = fetched.length > paging.limit;
  const reverse = paging.cursor?.reverse === true;
  const rows = fetched.slice(0, paging.limit);
  if (reverse) rows.reverse();
  const at = (row: Row | undefined, reverseWalk: boolean): Cursor | null =>
    row ? { reverse: reverseWalk, inclusive: false, ...key(row) } : null;
  const first = rows[0];
  const last = rows[rows.length - 1];
  let next: Cursor | null;
  let previous: Cursor | null;
  if (reverse) {
    next = at(last, false);
    previous = more ? at(first, true) : null;
  } else {
    next = more ? at(last, false) : null;
    const afterStart = paging.cursor !== null || paging.offset > 0;
    // An empty page reached by a cursor goes back to the rows from that position on.
    previous = !afterStart ? null : first ? at(first, true) : paging.cursor && { ...paging.cursor, reverse: true, inclusive: true };
  }
  return { count: stats.n, rows, next, previous };
}

/**
 * limit + 1 rows (the extra one tells whether there is a next page); `read` reads a page's rows
 * (a long page a part per query, walk.ts).
 */
async function fetchRows(run: Runner, plan: QueryPlan, paging: Paging, stats: MatchStats, read: (page: PageRequest) => Promise<Row[]>): Promise<Row[]> {
  const page = { limit: paging.limit + 1, offset: paging.offset, cursor: paging.cursor };
  const needed = paging.offset + paging.limit + 1;
  const everything = () => read({ ...page, since: null });
  // Walking back up (a `previous` link) is bounded below by the cursor itself.
  if (paging.cursor?.reverse || stats.lo === null || stats.hi === null || stats.n <= needed) return everything();
  const cursorMs = paging.cursor ? Date.parse(`${paging.cursor.timestamp.slice(0, 23)}Z`) : Infinity;
  const upper = Math.min(cursorMs, stats.hi);
  let span = Math.max(MIN_SPAN_MS, ((stats.hi - stats.lo) * needed * 2) / stats.n);
  for (;;) {
    const since = upper - span;
    if (since <= stats.lo) return everything();
    const rows = await read({ ...page, since: timestampText(new Date(since)) });
    if (rows.length === page.limit) return rows;
    span *= GROWTH;
  }
}

