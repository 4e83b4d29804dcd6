/**
 * The DuckDB statements of the events API, built from a QueryPlan. Values always travel as
 * parameters; the only numbers written into the text are limits, offsets and flush sequence
 * numbers that this code produced itself.
 */
import { ParamSink, type ParamValue } from '../hogql/index.js';
import { toSqlTimestamp } from '../hogql/dates.js';
import type { EventQuery } from '../store/types.js';
import { fromSql, type QueryPlan } from './plan.js';
import type { Cursor } from './types.js';

/** Microsecond ISO text without zone: the form cursors and results carry. */
const ISO_TIMESTAMP = `strftime(e."timestamp", '%Y-%m-%dT%H:%M:%S.%f')`;
const NEWEST_FIRST = 'e."timestamp" DESC, e.uuid DESC';
const OLDEST_FIRST = 'e."timestamp" ASC, e.uuid ASC';
const FLUSH_SEQ = "(SELECT value FROM sync_state WHERE key = 'flush_seq')";

/** The stored event as the list and retrieve answers need it. */
export const EVENT_COLUMNS = `CAST(e.uuid AS VARCHAR) AS id, e.distinct_id, e.properties, e.event, ${ISO_TIMESTAMP} AS ts, e.elements_chain`;
/**
 * The current person of the event's distinct id (after merges; the mirror changes in the same
 * transaction as the events), else the one stored with the event. Needs DISTINCT_ID_JOIN, or
 * the compiler's person joins, which start with the same `pdi`.
 */
const PERSON_ID = 'CAST(coalesce(pdi.person_id, e.person_id) AS VARCHAR) AS person_id';
const DISTINCT_ID_JOIN = 'LEFT JOIN person_distinct_ids pdi ON pdi.project_id = e.project_id AND pdi.distinct_id = e.distinct_id';
/** Hidden key columns of a `select` row, for the next page's cursor. */
const KEY_COLUMNS = `${ISO_TIMESTAMP} AS __ts, CAST(e.uuid AS VARCHAR) AS __uuid`;

const query = (sql: string, params: ParamValue[]): EventQuery => ({ sql, params });

/** A sink already holding `values` as $1..$n, for statements that add their own. */
function continueParams(values: ParamValue[]): ParamSink {
  const sink = new ParamSink();
  for (const value of values) sink.add(value);
  return sink;
}

/** Column aliases c0, c1, … keep repeated or odd expression texts apart in row objects. */
export const selectColumns = (selectSql: string[]) => selectSql.map((sql, i) => `${sql} AS c${i}`).join(', ');

/**
 * Count, oldest and newest timestamp of the matching rows written by flushes after `afterSeq`
 * (every row when -1), and the flush sequence they were read at — one snapshot, one statement.
 */
export function statsQuery(plan: QueryPlan, afterSeq: number): EventQuery {
  return query(
    `SELECT ${FLUSH_SEQ} AS seq, count(*) AS n, min(e."timestamp") AS lo, max(e."timestamp") AS hi FROM ${fromSql(plan.filterNeedsPerson)} ` +
      `WHERE ${plan.where} AND e.flush_seq > ${Math.trunc(afterSeq)} AND e.flush_seq <= ${FLUSH_SEQ}`,
    plan.filterParams,
  );
}

export interface PageRequest {
  limit: number;
  offset: number;
  cursor: Cursor | null;
  /** Lower time bound that lets DuckDB skip old row groups; null scans everything. */
  since: Date | null;
  /** CSV rows also carry the current person id. */
  withPersonId?: boolean;
}

/**
 * One page of rows (events, or `select` rows with their key columns), newest first unless
 * reversed. Late materialisation: the top-N runs over row ids and the sort key only, then the
 * wide columns (the properties JSON above all) are read for just the rows of the page.
 */
export function pageQuery(plan: QueryPlan, page: PageRequest): EventQuery {
  const sink = continueParams(plan.params);
  const conditions = [plan.where];
  if (page.cursor) conditions.push(cursorCondition(page.cursor, sink));
  if (page.since) conditions.push(`e."timestamp" >= CAST(${sink.add(toSqlTimestamp(page.since))} AS TIMESTAMP)`);
  const order = page.cursor?.reverse ? OLDEST_FIRST : NEWEST_FIRST;
  const columns = plan.select ? `${selectColumns(plan.select.selectSql)}, ${KEY_COLUMNS}` : EVENT_COLUMNS;
  const personId = page.withPersonId ? `, ${PERSON_ID}` : '';
  const from = plan.select?.needsPerson ? fromSql(true) : page.withPersonId ? `${fromSql(false)} ${DISTINCT_ID_JOIN}` : fromSql(false);
  return query(
    `WITH page AS (SELECT e.rowid AS row_id FROM ${fromSql(plan.filterNeedsPerson)} WHERE ${conditions.join(' AND ')} ` +
      `ORDER BY ${order} LIMIT ${Math.trunc(page.limit)} OFFSET ${Math.trunc(page.offset)}) ` +
      `SELECT ${columns}${personId} FROM ${from} WHERE e.rowid IN (SELECT row_id FROM page) ORDER BY ${order}`,
    sink.values,
  );
}

/** Rows strictly after the position in the walk's direction (or from it, when inclusive). */
function cursorCondition(cursor: Cursor, sink: ParamSink): string {
  const ts = `CAST(${sink.add(cursor.timestamp)} AS TIMESTAMP)`;
  const uuid = `CAST(${sink.add(cursor.uuid)} AS UUID)`;
  const [wide, strict] = cursor.reverse ? ['>=', '>'] : ['<=', '<'];
  const tie = cursor.inclusive ? wide : strict;
  // The first, redundant bound is a plain column comparison DuckDB can prune row groups with.
  return `e."timestamp" ${wide} ${ts} AND (e."timestamp" ${strict} ${ts} OR e.uuid ${tie} ${uuid})`;
}

/** Aggregating `select`: groups ordered by the first aggregate (largest first), with their total. */
export function groupedQuery(plan: QueryPlan, limit: number, offset: number): EventQuery {
  const select = plan.select!;
  const firstAggregate = select.selectSql.findIndex((sql) => !select.groupBy.includes(sql));
  const order = select.selectSql.map((_, i) => `c${i}`);
  if (firstAggregate >= 0) order.unshift(`c${firstAggregate} DESC NULLS LAST`);
  return query(
    `SELECT ${selectColumns(select.selectSql)}, count(*) OVER () AS __total FROM ${fromSql(plan.filterNeedsPerson || select.needsPerson)} ` +
      `WHERE ${plan.where}${select.groupBy.length > 0 ? ` GROUP BY ${select.groupBy.join(', ')}` : ''}` +
      `${select.having ? ` HAVING ${select.having}` : ''} ORDER BY ${order.join(', ')} LIMIT ${Math.trunc(limit)} OFFSET ${Math.trunc(offset)}`,
    plan.params,
  );
}

export function eventByIdQuery(projectId: number, uuid: string): EventQuery {
  return query(
    `SELECT ${EVENT_COLUMNS}, ${PERSON_ID} FROM ${fromSql(false)} ${DISTINCT_ID_JOIN} WHERE e.project_id = CAST($1 AS INTEGER) AND e.uuid = CAST($2 AS UUID) LIMIT 1`,
    [projectId, uuid],
  );
}
