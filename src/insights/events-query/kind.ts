/**
 * EventsQuery (query-api.md §1.6): the events API's HogQL lists (select / where / orderBy) and
 * filters, compiled by events/plan.ts and run with its statements (a page of events newest
 * first, or groups when the select aggregates), answered in PostHog's row shape. `*` and
 * `person` / `person_display_name` select whole objects, built from plain columns here.
 */
import { buildPlan } from '../../events/plan.js';
import { actionOfNode, type ResolvedAction } from '../series/node.js';
import { groupedQuery, pageQuery } from '../../events/statements.js';
import type { EventsQuery } from '../../events/types.js';
import { HogQLError } from '../../hogql/index.js';
import { validationError } from '../../kernel/errors.js';
import { clickHouseType, countField, dateBound, dateTimeText, displayName, parseObject } from '../tabular/columns.js';
import type { InsightContext, QueryKind, Row } from '../types.js';
import type { ActionStep } from '../../store/types.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../hogql/kind.js';

/** More select items than this is not a real query. */
const MAX_ITEMS = 100;
const EVENT_FIELDS = ['uuid', 'event', 'properties', 'timestamp', 'distinct_id', 'elements_chain', 'created_at'];
const PERSON_FIELDS = ['person_id', 'person.created_at', 'person.properties', 'distinct_id'];

type Item = { label: string; kind: 'expr' | 'event' | 'person' | 'display'; from: number; count: number };

export interface EventsNode {
  select: string[];
  items: Item[];
  expressions: string[];
  where: string[] | null;
  orderBy: string[] | null;
  properties: unknown[];
  filterTestAccounts: boolean;
  event: string | null;
  events: string[] | null;
  personId: string | null;
  /** `actionId`: the action the query service resolved (null: unresolved); undefined: none. */
  action?: ResolvedAction | null;
  after: string;
  before: string | null;
  limit: number;
  offset: number;
}

export const eventsQuery: QueryKind<EventsNode> = {
  kind: 'EventsQuery',

  parse(node) {
    const select = stringList(node.select, 'select', true)!;
    if (select.length === 0) throw validationError('select needs at least one expression.', 'select', 'required');
    const { items, expressions } = expand(select);
    const properties = [...filterList(node.properties, 'properties'), ...filterList(node.fixedProperties, 'fixedProperties')];
    const event = optionalText(node.event, 'event');
    const events = stringList(node.events, 'events', false);
    const personId = optionalText(node.personId, 'personId');
    const after = optionalText(node.after, 'after') ?? '-24h';
    const before = optionalText(node.before, 'before');
    const limit = countField(node.limit, 'limit', DEFAULT_LIMIT, MAX_LIMIT);
    const offset = countField(node.offset, 'offset', 0, Number.MAX_SAFE_INTEGER);
    const action = node.actionId === undefined || node.actionId === null ? undefined : actionOfNode(node, '', 'actionId');
    return {
      select,
      items,
      expressions,
      where: stringList(node.where, 'where', false),
      orderBy: stringList(node.orderBy, 'orderBy', false),
      properties,
      filterTestAccounts: node.filterTestAccounts === true,
      event,
      events,
      personId,
      action,
      after,
      before,
      limit,
      offset,
    };
  },

  async run(node, ctx) {
    const query: EventsQuery = {
      projectId: ctx.project.id,
      now: ctx.now,
      after: node.after === 'all' ? null : dateBound(node.after, 'after', ctx.now),
      before: dateBound(node.before ?? new Date(ctx.now.getTime() + 5_000).toISOString(), 'before', ctx.now),
      distinctId: null,
      event: node.event,
      personId: node.personId,
      actionSteps: actionStepsOf(node),
      groupValues: null,
      properties: [...node.properties, ...(node.filterTestAccounts ? ctx.project.testAccountFilters : [])],
      select: node.expressions,
      where: node.where,
      orderBy: node.orderBy?.map(postHogOrder) ?? null,
    };
    if (node.events && node.events.length > 0) {
      const list = node.events.map((name) => `'${name.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`).join(', ');
      query.where = [...(query.where ?? []), `event in (${list})`];
    }
    let plan;
    try {
      plan = buildPlan(query, { propertyType: () => null, now: ctx.now, timeZone: ctx.project.timeZone });
    } catch (error) {
      if (error instanceof HogQLError) throw validationError(error.message, error.attr ?? 'select');
      throw error;
    }
    const select = plan.select!;
    const statement = select.grouped
      ? groupedQuery(plan, node.limit + 1, node.offset)
      : pageQuery(plan, { limit: node.limit + 1, offset: node.offset, cursor: null, since: query.after });
    const rows = await ctx.run(statement);
    const hasMore = rows.length > node.limit;
    const page = hasMore ? rows.slice(0, node.limit) : rows;
    const tz = ctx.project.timeZone;
    return {
      results: page.map((row) => node.items.map((item) => cell(item, row, select.exprs, ctx, tz))),
      columns: node.items.map((item) => item.label),
      types: node.items.map((item) => (item.kind === 'expr' ? clickHouseType(select.exprs[item.from]) : 'Tuple')),
      hogql: null,
      hasMore,
      limit: node.limit,
      offset: node.offset,
    };
  },

  freshForSeconds: () => 60,
};

/** `*`, `person` and `person_display_name` stand for several plain columns. */
function expand(select: string[]): { items: Item[]; expressions: string[] } {
  const expressions: string[] = [];
  const items = select.map((label): Item => {
    // `expr -- Label`: the comment is the column's display name; the lexer skips it.
    const bare = label.replace(/--.*$/s, '').trim();
    const add = (kind: Item['kind'], exprs: string[]): Item => {
      const from = expressions.length;
      expressions.push(...exprs);
      return { label, kind, from, count: exprs.length };
    };
    if (bare === '*') return add('event', EVENT_FIELDS);
    if (bare === 'person') return add('person', PERSON_FIELDS);
    if (bare === 'person_display_name') return add('display', ['person.properties', 'person_id', 'distinct_id']);
    return add('expr', [label]);
  });
  return { items, expressions };
}

function cell(item: Item, row: Row, exprs: readonly { type: string }[], ctx: InsightContext, tz: string): unknown {
  const value = (i: number) => {
    const v = row[`c${item.from + i}`];
    return exprs[item.from + i].type === 'DateTime' && typeof v === 'string' ? dateTimeText(v, tz) : v;
  };
  switch (item.kind) {
    case 'expr':
      return value(0);
    case 'event':
      return {
        uuid: value(0),
        event: value(1),
        properties: parseObject(value(2)),
        timestamp: value(3),
        team_id: ctx.project.id,
        distinct_id: value(4),
        elements_chain: value(5) ?? '',
        created_at: value(6),
        person_mode: 'full',
      };
    case 'person':
      return value(1) === null ? { distinct_id: value(3) } : { uuid: value(0), created_at: value(1), properties: parseObject(value(2)), distinct_id: value(3) };
    case 'display': {
      return { display_name: displayName(parseObject(value(0)), String(value(2))), id: value(1), distinct_id: value(2) };
    }
  }
}


/** `timestamp DESC` (PostHog) → `-timestamp` (the events API's form). */
function postHogOrder(text: string): string {
  const match = /^(.*?)\s+(asc|desc)\s*$/is.exec(text);
  if (!match) return text;
  return match[2].toLowerCase() === 'desc' ? `-${match[1]}` : match[1];
}


function stringList(value: unknown, attr: string, required: boolean): string[] | null {
  if (value === undefined || value === null) {
    if (required) throw validationError(`${attr} is required.`, attr, 'required');
    return null;
  }
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) throw validationError(`${attr} must be a list of strings.`, attr, 'not_a_list');
  if (value.length > MAX_ITEMS) throw validationError(`${attr} has too many items (limit ${MAX_ITEMS}).`, attr, 'max_length');
  return value as string[];
}

function filterList(value: unknown, attr: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value;
  // A property group ({type: AND|OR, values}) is one filter of the list.
  if (typeof value === 'object') return [value];
  throw validationError(`${attr} must be a list of property filters.`, attr, 'not_a_list');
}

function optionalText(value: unknown, attr: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw validationError(`${attr} must be a string.`, attr, 'invalid');
  if (value.length > 10_000) throw validationError(`${attr} is too long.`, attr, 'max_length');
  return value;
}


function actionStepsOf(node: EventsNode): ActionStep[] | null {
  if (node.action === null) throw validationError('The action of actionId was not resolved.', 'actionId');
  return node.action?.steps ?? null;
}
