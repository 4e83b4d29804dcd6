/**
 * `GET …/events/values/?key=<property>`: the distinct values of one event property, most
 * frequent first, stringified as PostHog does (`true`/`false`, numbers as text, objects as JSON)
 * with lists flattened into their items. Like PostHog it looks at the last 7 days, which keeps
 * the JSON scan bounded; when those hold no value at all it looks at all time instead.
 */
import { ir } from '../hogql/index.js';
import { timestampText } from '../hogql/dates.js';
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

const text = (value: string) => ir.constant(value, 'String');

function valuesQuery(request: ValuesRequest, since: Date | null): ir.IrSelect {
  const events = ir.column('e', 'events', 'event', 'String');
  // The property's JSON value, then its text (a list's items one by one).
  const raw = ir.select({
    columns: [{ expr: ir.call('__jsonRaw', [ir.column('e', 'events', 'properties', 'String'), text(request.key)], 'Any'), name: 'j' }],
    from: { kind: 'table', table: 'events', alias: 'e', projectId: request.projectId },
    where: ir.allOf([
      since ? ir.op('>=', [ir.column('e', 'events', 'timestamp', 'DateTime'), ir.constant(timestampText(since), 'DateTime')]) : null,
      request.eventNames.length > 0 ? ir.op('in', [events, ...request.eventNames.map(text)]) : null,
    ]),
  });
  const j = ir.column('r', null, 'j', 'Any');
  const names = ir.select({
    columns: [{ expr: ir.call('arrayJoin', [ir.call('__jsonTexts', [j], 'Array', { item: 'String' })], 'String'), name: 'name' }],
    from: { kind: 'subquery', query: raw, alias: 'r' },
    where: ir.op('isNotNull', [j]),
  });
  const name = ir.column('v', null, 'name', 'String');
  const n = ir.call('count', [], 'Integer');
  return ir.select({
    columns: [
      { expr: name, name: 'name' },
      { expr: n, name: 'n' },
    ],
    from: { kind: 'subquery', query: names, alias: 'v' },
    where: ir.allOf([ir.op('isNotNull', [name]), request.value === null ? null : ir.call('__icontains', [name, text(request.value)], 'Boolean')]),
    groupBy: [name],
    orderBy: [
      { expr: n, desc: true },
      { expr: name, desc: false },
    ],
    limit: ir.constant(Math.trunc(request.limit), 'Integer'),
  });
}

export async function propertyValues(run: Runner, request: ValuesRequest): Promise<{ name: string }[]> {
  let rows = await run(valuesQuery(request, new Date(request.now.getTime() - RECENT_MS)));
  if (rows.length === 0) rows = await run(valuesQuery(request, null));
  return rows.map((row) => ({ name: row.name as string }));
}
