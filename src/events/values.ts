/**
 * `GET …/events/values/?key=<property>`: the distinct values of one event property, most
 * frequent first, stringified as PostHog does (`true`/`false`, numbers as text, objects as JSON)
 * with lists flattened into their items. Like PostHog it looks at the last 7 days, which keeps
 * the JSON scan bounded; when those hold no value at all it looks at all time instead.
 */
import { escapePointerSegment } from '../hogql/printer.js';
import { toSqlTimestamp } from '../hogql/dates.js';
import type { EventQuery } from '../store/types.js';
import type { Runner } from './run.js';

export const DEFAULT_VALUES_LIMIT = 10;
export const MAX_VALUES_LIMIT = 100;
const RECENT_MS = 7 * 24 * 3600 * 1000;

export interface ValuesRequest {
  projectId: number;
  key: string;
  /** Only events with one of these names (none: every event). */
  eventNames: string[];
  /** Case-insensitive substring the value must contain. */
  value: string | null;
  limit: number;
  now: Date;
}

function valuesQuery(request: ValuesRequest, since: Date | null): EventQuery {
  const params: unknown[] = [request.projectId, `/${escapePointerSegment(request.key)}`];
  const add = (value: unknown) => `$${params.push(value)}`;
  const rowFilters = [`e.project_id = CAST($1 AS INTEGER)`];
  if (since) rowFilters.push(`e."timestamp" >= CAST(${add(toSqlTimestamp(since))} AS TIMESTAMP)`);
  if (request.eventNames.length > 0) rowFilters.push(`e.event IN (SELECT unnest(from_json(${add(JSON.stringify(request.eventNames))}, '["VARCHAR"]')))`);
  // strpos-style contains() keeps % and _ in the search literal.
  const match = request.value === null ? '' : ` AND contains(lower(name), lower(CAST(${add(request.value)} AS VARCHAR)))`;
  const sql =
    'SELECT name, count(*) AS n FROM (' +
    `SELECT unnest(CASE WHEN json_type(j) = 'ARRAY' THEN json_extract_string(j, '$[*]') ELSE [json_extract_string(j, '$')] END) AS name ` +
    `FROM (SELECT json_extract(e.properties, $2) AS j FROM events e WHERE ${rowFilters.join(' AND ')}) WHERE j IS NOT NULL` +
    `) WHERE name IS NOT NULL${match} GROUP BY name ORDER BY n DESC, name LIMIT ${Math.trunc(request.limit)}`;
  return { sql, params };
}

export async function propertyValues(run: Runner, request: ValuesRequest): Promise<{ name: string }[]> {
  let rows = await run(valuesQuery(request, new Date(request.now.getTime() - RECENT_MS)));
  if (rows.length === 0) rows = await run(valuesQuery(request, null));
  return rows.map((row) => ({ name: row.name as string }));
}
