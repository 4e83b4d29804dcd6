/**
 * ActorsQuery's `properties` (and `fixedProperties`): PostHog property filters over the listed
 * actors' own properties — person properties when the actors are persons, properties of the
 * groups of the listed type when they are groups. Any other filter type is a 400: an actor list
 * has no events to filter by. Group properties come from the values the query service loaded
 * (events/group-filters.ts), read through the listed group's key.
 */
import { EventsScope, HogQLError, ir } from '../../hogql/index.js';
import { compilePropertyFilters, type FilterSources, type PropertyReader } from '../../hogql/property-filters.js';
import { groupReader } from '../../events/group-filters.js';
import { validationError } from '../../kernel/errors.js';
import type { InsightContext } from '../types.js';

const MAX_DEPTH = 12;

/** Who the filters read: a persons table alias, or the group type and the expression holding each listed group's key. */
export type ActorProperties = { persons: string } | { groupType: number; key: ir.IrExpr };

/** The condition of the filters in `json` (null when there are none); a 400 naming `attr` otherwise. */
export function actorPropertiesCondition(json: unknown, actors: ActorProperties, ctx: InsightContext, attr: string): ir.IrExpr | null {
  if (json === undefined || json === null || (Array.isArray(json) && json.length === 0)) return null;
  const wanted = 'persons' in actors ? 'person' : 'group';
  for (const type of filterTypes(json)) {
    if (type !== wanted) throw validationError(`${attr} filters the listed ${wanted === 'person' ? 'persons by person' : 'groups by group'} properties only (type "${wanted}"), not "${type.slice(0, 40)}".`, attr);
  }
  // The resolver only types the comparisons; no filter here reads an event field.
  const resolver = new EventsScope({ propertyType: () => null, now: ctx.now, timeZone: ctx.project.timeZone }, ctx.project.id).resolver();
  const refuse = (): PropertyReader => {
    throw new HogQLError(`${attr} filters the listed actors' own properties only.`, null, attr);
  };
  const sources: FilterSources = { resolver, event: refuse, person: refuse };
  if ('persons' in actors) {
    sources.person = (key) => {
      const text: ir.IrExpr = { kind: 'property', table: actors.persons, base: 'persons', column: 'properties', path: [key], type: 'String' };
      return { typed: text, text };
    };
  } else {
    const read = groupReader(ctx.groupValues ?? new Map(), () => actors.key);
    sources.group = (key, index) => {
      if (index !== actors.groupType) throw new HogQLError(`${attr}: the listed groups are of type ${actors.groupType}, not ${index}.`, null, attr);
      return read(key, index);
    };
  }
  try {
    return compilePropertyFilters(json, sources, attr);
  } catch (error) {
    if (error instanceof HogQLError) throw validationError(error.message, attr);
    throw error;
  }
}

/** The `type` of every filter in a list or AND/OR group, however nested (`event` when absent, as PostHog). */
function filterTypes(node: unknown, found = new Set<string>(), depth = 0): Set<string> {
  if (depth > MAX_DEPTH || node === null || typeof node !== 'object') return found;
  if (Array.isArray(node)) {
    for (const item of node) filterTypes(item, found, depth + 1);
    return found;
  }
  const record = node as Record<string, unknown>;
  if ((record.type === 'AND' || record.type === 'OR') && 'values' in record) return filterTypes(record.values, found, depth + 1);
  found.add(typeof record.type === 'string' ? record.type : 'event');
  return found;
}
