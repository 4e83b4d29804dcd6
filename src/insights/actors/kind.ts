/**
 * ActorsQuery (query-api.md §1.13): persons, as rows. Alone it lists the project's persons
 * (newest first, `search` over e-mail, name, id and distinct ids, `properties` over person
 * properties); with an InsightActorsQuery source it lists the actors behind one data point of
 * that insight, asking the source's kind for them (QueryKind.actors). The select list is HogQL
 * over `persons`; `person` (or `actor`) stands for the person as an object and
 * `person_display_name` for its display name. When the insight aggregates by group the actors
 * are groups, listed by groups.ts.
 */
import { HogQLError, ir, parseSelect, StatementCompiler, type SelectStatement } from '../../hogql/index.js';
import { validationError } from '../../kernel/errors.js';
import { clickHouseType, countField, displayName, parseObject, rowArrays } from '../tabular/columns.js';
import type { ActorsPoint, InsightContext, QueryKind, Row } from '../types.js';
import { actorPropertiesCondition } from './filters.js';
import { DEFAULT_GROUP_SELECT, listGroupActors, parseGroupActors, type GroupActorsNode } from './groups.js';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 10_000;
const MAX_ITEMS = 50;
/** The plain columns `person` / `person_display_name` are built from, after the user's own. */
const PERSON_COLUMNS = ['id', 'properties', 'created_at', 'is_identified'];

interface Source {
  kind: QueryKind<unknown>;
  node: unknown;
  point: ActorsPoint;
}

export interface ActorsNode {
  select: string[];
  /** The persons statement (null when the actors are groups). */
  statement: SelectStatement | null;
  source: Source | null;
  /** `properties` and `fixedProperties` (property filters on the actors), as given, with their request field. */
  properties: { json: unknown; attr: string }[];
  limit: number;
  offset: number;
  /** Set when the source's actors are groups: then the list is made by groups.ts instead. */
  groups: GroupActorsNode | null;
}

/** Select items that stand for the person as an object (read from the plain columns after the user's own). */
const isPersonObject = (item: string) => item === 'person' || item === 'actor' || item === 'person_display_name';

/** `kinds`: the registry, for the source's kind (passed in: the registry lists this kind too). */
export const actorsQuery = (kinds: () => ReadonlyMap<string, QueryKind<unknown>>): QueryKind<ActorsNode> => ({
  kind: 'ActorsQuery',

  parse(node) {
    const source = parseSource(node.source, kinds());
    const groupType = source?.kind.actorsGroupType?.(source.node, source.point) ?? null;
    const select = node.select === undefined || node.select === null ? (groupType === null ? ['person', 'id', 'created_at'] : DEFAULT_GROUP_SELECT) : node.select;
    if (!Array.isArray(select) || select.length === 0 || select.length > MAX_ITEMS || select.some((s) => typeof s !== 'string' || s.includes(';'))) {
      throw validationError(`select must be a list of 1 to ${MAX_ITEMS} HogQL expressions.`, 'select', 'invalid');
    }
    const search = node.search === undefined || node.search === null ? null : node.search;
    if (search !== null && (typeof search !== 'string' || search.length > 500)) throw validationError('search must be a string.', 'search', 'invalid');
    const orderBy = node.orderBy === undefined || node.orderBy === null ? (groupType === null ? ['created_at DESC'] : []) : node.orderBy;
    if (!Array.isArray(orderBy) || orderBy.some((o) => typeof o !== 'string' || o.includes(';'))) throw validationError('orderBy must be a list of HogQL expressions.', 'orderBy', 'invalid');
    const limit = countField(node.limit, 'limit', DEFAULT_LIMIT, MAX_LIMIT);
    const offset = countField(node.offset, 'offset', 0, Number.MAX_SAFE_INTEGER);
    const properties = (['properties', 'fixedProperties'] as const).flatMap((attr) => {
      const json = propertyList(node[attr], attr);
      return json === null ? [] : [{ json, attr }];
    });
    if (groupType !== null) {
      const groups = parseGroupActors(groupType, select as string[], orderBy as string[], { search, properties, limit, offset });
      return { select: select as string[], statement: null, source, properties, limit, offset, groups };
    }
    const items = (select as string[]).map((s) => (isPersonObject(s) ? 'id' : s.replace(/--.*$/s, '')));
    // The user's text is compiled as HogQL (persons only, scoped like any statement); the search
    // term goes in as a string literal the lexer reads back exactly.
    const conditions = search ? [searchCondition(search)] : [];
    const text = `select ${[...items, ...PERSON_COLUMNS].join(', ')} from persons${conditions.length ? ` where ${conditions.join(' and ')}` : ''} order by ${(orderBy as string[]).map(personOrder).join(', ')}`;
    let statement: SelectStatement;
    try {
      statement = parseSelect(text);
    } catch (error) {
      if (error instanceof HogQLError) throw validationError(error.message.replace(/ at position \d+$/, ''), 'select');
      throw error;
    }
    return { select: select as string[], statement, source, properties, limit, offset, groups: null };
  },

  async run(node, ctx) {
    if (node.groups) return listGroupActors(node.groups, await node.source!.kind.actors!(node.source!.node, node.source!.point, ctx), ctx);
    let compiled;
    try {
      compiled = new StatementCompiler({ propertyType: () => null, now: ctx.now, timeZone: ctx.project.timeZone }, ctx.project.id).compile(node.statement!);
    } catch (error) {
      if (error instanceof HogQLError) throw validationError(error.message.replace(/ at position \d+$/, ''), 'select');
      throw error;
    }
    const top = compiled.query as ir.IrSelect;
    const alias = top.from!.alias;
    let where = ir.allOf([top.where, ...node.properties.map(({ json, attr }) => actorPropertiesCondition(json, { persons: alias }, ctx, attr))]);
    if (node.source) {
      const actors = await node.source.kind.actors!(node.source.node, node.source.point, ctx);
      const ids = ir.select({ columns: [{ expr: ir.column('a', null, ir.outputColumns(actors)[0].name, 'UUID'), name: 'actor_id' }], from: { kind: 'subquery', query: actors, alias: 'a' } });
      const id = ir.column(alias, 'persons', 'id', 'UUID');
      where = ir.allOf([where, ir.op('in', [id, { kind: 'subquery', query: ids, type: 'UUID' }])]);
    }
    const statement: ir.IrSelect = { ...top, where, limit: ir.constant(node.limit + 1, 'Integer'), offset: node.offset > 0 ? ir.constant(node.offset, 'Integer') : null };
    const rows = await ctx.run(statement);
    const hasMore = rows.length > node.limit;
    const page = hasMore ? rows.slice(0, node.limit) : rows;
    const own = top.columns.slice(0, node.select.length);
    const base = top.columns.slice(node.select.length);
    const distinctIds = await distinctIdsOf(page.map((row) => String(row[base[0].name])), ctx);
    const values = rowArrays(page, top.columns, ctx.project.timeZone);
    const results = values.map((row) =>
      node.select.map((item, i) => {
        if (!isPersonObject(item)) return row[i];
        const [id, properties, createdAt, identified] = row.slice(own.length);
        const props = parseObject(properties);
        const ids = distinctIds.get(String(id)) ?? [];
        const display = displayName(props, ids[0] ?? String(id));
        if (item === 'person_display_name') return { display_name: display, id, distinct_id: ids[0] ?? null };
        return { id, uuid: id, distinct_ids: ids, properties: props, created_at: createdAt, is_identified: identified, name: display };
      }),
    );
    return {
      results,
      columns: node.select,
      types: node.select.map((item, i) => (isPersonObject(item) ? 'Tuple' : clickHouseType(own[i].expr))),
      hogql: null,
      hasMore,
      limit: node.limit,
      offset: node.offset,
      missing_actors_count: null,
    };
  },

  freshForSeconds: () => 60,
});

function parseSource(value: unknown, kinds: ReadonlyMap<string, QueryKind<unknown>>): Source | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw validationError('source must be an InsightActorsQuery or a FunnelsActorsQuery.', 'source', 'invalid');
  const source = value as Record<string, unknown>;
  if (source.kind !== 'InsightActorsQuery' && source.kind !== 'FunnelsActorsQuery') throw validationError('source must be an InsightActorsQuery or a FunnelsActorsQuery.', 'source.kind', 'invalid_choice');
  // FunnelsActorsQuery names its breakdown value funnelStepBreakdown.
  const breakdown = source.kind === 'FunnelsActorsQuery' ? source.funnelStepBreakdown : source.breakdown;
  const inner = source.source as Record<string, unknown> | undefined;
  if (!inner || typeof inner !== 'object' || Array.isArray(inner)) throw validationError('source.source must be an insight query.', 'source.source', 'required');
  const kind = kinds.get(String(inner.kind));
  if (!kind || !kind.actors) {
    throw validationError(`Listing the persons behind a ${String(inner.kind).slice(0, 50)} is not supported.`, 'source.source.kind', 'invalid_choice');
  }
  const point: ActorsPoint = {
    day: pick(source.day, ['string', 'number']) as ActorsPoint['day'],
    series: pick(source.series, ['number']) as number | null,
    breakdown: breakdown ?? null,
    compare: source.compare === 'previous' ? 'previous' : source.compare === 'current' ? 'current' : null,
    status: pick(source.status, ['string']) as string | null,
    funnelStep: pick(source.funnelStep, ['number']) as number | null,
    interval: pick(source.interval, ['number']) as number | null,
    funnelTrendsEntrancePeriodStart: pick(source.funnelTrendsEntrancePeriodStart, ['string']) as string | null,
    funnelTrendsDropOff: pick(source.funnelTrendsDropOff, ['boolean']) as boolean | null,
    pathStartKey: pick(source.pathStartKey, ['string']) as string | null,
    pathEndKey: pick(source.pathEndKey, ['string']) as string | null,
    pathDropoffKey: pick(source.pathDropoffKey, ['string']) as string | null,
  };
  return { kind, node: kind.parse(inner), point };
}

const pick = (value: unknown, types: string[]) => (types.includes(typeof value) ? value : null);

/** PostHog orders a list by its `person` (or `actor`) column through the e-mail; other items are HogQL as written. */
const personOrder = (item: string) => item.trim().replace(/^(?:person|actor)(\s+(?:asc|desc))?$/i, 'properties.email$1');

/** A property filter list or AND/OR group as given (checked when compiled); null when absent or empty. */
function propertyList(value: unknown, attr: string): unknown {
  if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) return null;
  if (typeof value !== 'object') throw validationError(`${attr} must be a list of property filters or an AND/OR group.`, attr, 'invalid');
  return value;
}

/** `search`, as PostHog's: the e-mail, the name, the id or one of the distinct ids contains it (any case). */
function searchCondition(search: string): string {
  const literal = `'${search.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const contains = (text: string) => `${text} ilike concat('%', ${literal}, '%')`;
  return `(${contains('properties.email')} or ${contains('properties.name')} or ${contains('toString(id)')} or id in (select person_id from person_distinct_ids where ${contains('distinct_id')}))`;
}

async function distinctIdsOf(ids: string[], ctx: InsightContext): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (ids.length === 0) return out;
  const personId = ir.column('d', 'person_distinct_ids', 'person_id', 'UUID');
  const rows: Row[] = await ctx.run(
    ir.select({
      columns: [
        { expr: ir.cast(personId, 'String'), name: 'person_id' },
        { expr: ir.column('d', 'person_distinct_ids', 'distinct_id', 'String'), name: 'distinct_id' },
      ],
      from: { kind: 'table', table: 'person_distinct_ids', alias: 'd', projectId: ctx.project.id },
      where: ir.op('in', [personId, ...ids.map((id) => ir.constant(id, 'UUID'))]),
      orderBy: [{ expr: ir.column('d', 'person_distinct_ids', 'distinct_id', 'String'), desc: false }],
    }),
  );
  for (const row of rows) {
    const list = out.get(String(row.person_id)) ?? [];
    list.push(String(row.distinct_id));
    out.set(String(row.person_id), list);
  }
  return out;
}


