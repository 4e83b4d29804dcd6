/**
 * ActorsQuery when the source insight aggregates by group: the actors are the groups (of one
 * type) behind the data point. Their keys come from the event store (the source kind's actors
 * statement, with the `properties` filter applied there); the groups themselves — properties,
 * created_at — from the metadata store. A key that was never identified (`$groupidentify`) is
 * still listed, with no properties and created_at null, so the list has as many groups as the
 * number it explains. The select list is a fixed set of group columns (not HogQL: the groups
 * live outside the event store), ordered and paged here.
 */
import { ir } from '../../hogql/index.js';
import { validationError } from '../../kernel/errors.js';
import type { StoredGroup } from '../../store/types.js';
import { isoWithOffset } from '../time/index.js';
import type { InsightContext, KindResponse } from '../types.js';
import { actorPropertiesCondition } from './filters.js';

/** Groups one point may list; past it the request is a 400 (keys are held in memory to sort). */
export const MAX_GROUP_ACTORS = 100_000;
export const DEFAULT_GROUP_SELECT = ['group', 'key', 'created_at'];

type GroupColumn = { kind: 'group' } | { kind: 'key' } | { kind: 'index' } | { kind: 'created_at' } | { kind: 'properties' } | { kind: 'property'; name: string };

const NAMED: Record<string, GroupColumn> = {
  group: { kind: 'group' },
  actor: { kind: 'group' },
  key: { kind: 'key' },
  group_key: { kind: 'key' },
  id: { kind: 'key' },
  index: { kind: 'index' },
  group_type_index: { kind: 'index' },
  created_at: { kind: 'created_at' },
  properties: { kind: 'properties' },
  group_properties: { kind: 'properties' },
};

const TYPES: Record<GroupColumn['kind'], string> = { group: 'Tuple', key: 'String', index: 'Int64', created_at: "DateTime64(6, 'UTC')", properties: 'String', property: 'String' };

export interface GroupActorsNode {
  groupType: number;
  select: string[];
  columns: GroupColumn[];
  order: { column: GroupColumn; desc: boolean }[];
  search: string | null;
  /** Filters on the groups' properties (ActorsQuery `properties`, `fixedProperties`). */
  properties: { json: unknown; attr: string }[];
  limit: number;
  offset: number;
}

/** Checks the select and orderBy lists against the group columns (400s naming them). */
export function parseGroupActors(groupType: number, select: string[], orderBy: string[], rest: Pick<GroupActorsNode, 'search' | 'properties' | 'limit' | 'offset'>): GroupActorsNode {
  const columns = select.map((item) => groupColumn(item.replace(/--.*$/s, '').trim(), 'select'));
  const order = orderBy.map((item) => {
    const match = /^(.*?)(?:\s+(asc|desc))?$/i.exec(item.trim())!;
    return { column: groupColumn(match[1].trim(), 'orderBy'), desc: (match[2] ?? '').toLowerCase() === 'desc' };
  });
  return { groupType, select, columns, order, ...rest };
}

function groupColumn(text: string, attr: string): GroupColumn {
  if (Object.hasOwn(NAMED, text)) return NAMED[text];
  const property = /^(?:properties|group_properties)\.([A-Za-z_$][\w$]*)$/.exec(text) ?? /^(?:properties|group_properties)\['((?:[^'\\]|\\.)*)'\]$/.exec(text);
  if (property) return { kind: 'property', name: property[1].replace(/\\(.)/g, '$1') };
  throw validationError(
    `${text.slice(0, 60)} is not a column of a group; listing groups takes ${Object.keys(NAMED).join(', ')} and properties.<name>.`,
    attr,
  );
}

/** The page of groups behind the point whose actors statement is `actors` (first column: the group key). */
export async function listGroupActors(node: GroupActorsNode, actors: ir.IrQuery, ctx: InsightContext): Promise<KindResponse> {
  const key = ir.column('a', null, ir.outputColumns(actors)[0].name, 'String');
  const rows = await ctx.run(
    ir.select({
      distinct: true,
      columns: [{ expr: key, name: 'group_key' }],
      from: { kind: 'subquery', query: actors, alias: 'a' },
      where: ir.allOf([ir.op('!=', [key, ir.constant('', 'String')]), ...node.properties.map(({ json, attr }) => actorPropertiesCondition(json, { groupType: node.groupType, key }, ctx, attr))]),
      limit: ir.constant(MAX_GROUP_ACTORS + 1, 'Integer'),
    }),
  );
  if (rows.length > MAX_GROUP_ACTORS) throw validationError(`This point has more than ${MAX_GROUP_ACTORS} groups; narrow it with properties.`, 'source');
  const keys = rows.map((row) => String(row.group_key));
  const stored = new Map((await (ctx.groupsOfKeys?.(node.groupType, keys) ?? Promise.resolve([]))).map((group) => [group.group_key, group]));
  let groups = keys.map((k): StoredGroup | Unidentified => stored.get(k) ?? { group_type_index: node.groupType, group_key: k, properties: {}, created_at: null });
  if (node.search) groups = groups.filter((group) => matchesSearch(group, node.search!));
  groups.sort(comparator(node.order));
  const page = groups.slice(node.offset, node.offset + node.limit);
  const timeZone = ctx.project.timeZone;
  return {
    results: page.map((group) => node.columns.map((column) => cell(group, column, timeZone))),
    columns: node.select,
    types: node.columns.map((column) => TYPES[column.kind]),
    hogql: null,
    hasMore: groups.length > node.offset + node.limit,
    limit: node.limit,
    offset: node.offset,
    missing_actors_count: null,
  };
}

/** A key seen on events whose group was never identified. */
type Unidentified = Omit<StoredGroup, 'created_at'> & { created_at: null };
type Listed = StoredGroup | Unidentified;

/** As the groups API searches: the key or the `name` property contains it, case-insensitively. */
function matchesSearch(group: Listed, search: string): boolean {
  const needle = search.toLowerCase();
  const name = group.properties.name;
  return group.group_key.toLowerCase().includes(needle) || (typeof name === 'string' && name.toLowerCase().includes(needle));
}

/** `created_at DESC` by default; ties (and groups without created_at, last) by key, for a stable page order. */
function comparator(order: GroupActorsNode['order']): (a: Listed, b: Listed) => number {
  const keys = order.length > 0 ? order : [{ column: { kind: 'created_at' } as GroupColumn, desc: true }];
  return (a, b) => {
    for (const { column, desc } of keys) {
      const x = sortValue(a, column);
      const y = sortValue(b, column);
      if (x === y) continue;
      if (x === null) return 1;
      if (y === null) return -1;
      const cmp = typeof x === 'number' && typeof y === 'number' ? x - y : String(x) < String(y) ? -1 : 1;
      return desc ? -cmp : cmp;
    }
    return a.group_key < b.group_key ? -1 : a.group_key > b.group_key ? 1 : 0;
  };
}

function sortValue(group: Listed, column: GroupColumn): string | number | null {
  switch (column.kind) {
    case 'created_at':
      return group.created_at === null ? null : Date.parse(group.created_at);
    case 'key':
      return group.group_key;
    case 'index':
      return group.group_type_index;
    // PostHog orders a list by its actor column through the display name.
    case 'group':
      return propertyText(group, 'name');
    case 'property':
      return propertyText(group, column.name);
    case 'properties':
      return JSON.stringify(group.properties);
  }
}

function cell(group: Listed, column: GroupColumn, timeZone: string): unknown {
  const createdAt = group.created_at === null ? null : isoWithOffset(Date.parse(group.created_at), timeZone);
  switch (column.kind) {
    case 'group':
      return { id: group.group_key, type: 'group', group_key: group.group_key, group_type_index: group.group_type_index, created_at: createdAt, group_properties: group.properties, properties: group.properties };
    case 'key':
      return group.group_key;
    case 'index':
      return group.group_type_index;
    case 'created_at':
      return createdAt;
    case 'properties':
      return JSON.stringify(group.properties);
    case 'property':
      return propertyText(group, column.name);
  }
}

/** A property as HogQL reads JSON text: strings as they are, other values as JSON, missing or null as null. */
function propertyText(group: Listed, name: string): string | null {
  const value = Object.hasOwn(group.properties, name) ? group.properties[name] : null;
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : JSON.stringify(value);
}
