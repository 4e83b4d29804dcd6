/**
 * Field names → IR for one table in scope. Column names come only from the schema; property
 * keys stay data. `person.…` on events (and on person_distinct_ids) is a lazy join: the first
 * use records it on the binding, and whoever builds the FROM clause adds the joins
 * (`lazyJoins`), scoped to the same project like every table.
 */
import { errorAt, quoteForMessage } from './errors.js';
import { type IrExpr, type IrJoin, type TableName, call, column, op } from './ir.js';
import { publicColumn } from './schema.js';
import type { PropertyKind } from './context.js';

export type LazyJoin = 'pdi' | 'person';

/** A table in scope, as SQL will name it. */
export interface TableBinding {
  alias: string;
  table: TableName;
  projectId: number;
  /** Lazy joins the fields resolved so far need. */
  lazy: Set<LazyJoin>;
}

export const binding = (alias: string, table: TableName, projectId: number): TableBinding => ({ alias, table, projectId, lazy: new Set() });

const pdiAlias = (b: TableBinding) => `${b.alias}__pdi`;
const personAlias = (b: TableBinding) => `${b.alias}__person`;

/** A property read: where it lives, for declared types and for building the IR. */
export interface PropertyAccess {
  kind: PropertyKind;
  path: string[];
  ir: IrExpr;
}

/**
 * Resolves `names` (a dotted chain, brackets flattened) against one table; null when the table
 * has no such field. Property reads come back through `onProperty`, which applies declared types.
 */
export function resolveTableField(b: TableBinding, names: string[], onProperty: (access: PropertyAccess) => IrExpr): IrExpr | null {
  const [first, second] = names;
  const property = (kind: PropertyKind, table: string, base: TableName, path: string[]) =>
    path.length > 0 && path.every((key) => typeof key === 'string') ? onProperty({ kind, path, ir: { kind: 'property', table, base, column: 'properties', path, type: 'String' } }) : null;

  if (names.length === 1) {
    if (b.table === 'events' && first === 'person_id') return currentPersonId(b);
    if (b.table === 'events' && first === '$session_id') return property('event', b.alias, 'events', ['$session_id']);
    const spec = publicColumn(b.table, first);
    return spec ? column(b.alias, b.table, first, spec.type) : null;
  }
  if (first === 'properties' && publicColumn(b.table, 'properties')?.json) {
    return property(b.table === 'persons' ? 'person' : b.table === 'groups' ? 'group' : 'event', b.alias, b.table, names.slice(1));
  }
  if (first === 'person' && (b.table === 'events' || b.table === 'person_distinct_ids')) {
    const rest = names.slice(1);
    if (rest.length === 1 && rest[0] === 'id') return b.table === 'events' ? currentPersonId(b) : column(b.alias, b.table, 'person_id', 'UUID');
    if (second === 'properties' && names.length >= 3) {
      useJoins(b, 'person');
      return property('person', personAlias(b), 'persons', names.slice(2));
    }
    const spec = rest.length === 1 ? publicColumn('persons', rest[0]) : null;
    if (spec && rest[0] !== 'properties') {
      useJoins(b, 'person');
      return column(personAlias(b), 'persons', rest[0], spec.type);
    }
    if (rest.length === 1 && rest[0] === 'properties') {
      useJoins(b, 'person');
      return column(personAlias(b), 'persons', 'properties', 'String');
    }
  }
  return null;
}

function useJoins(b: TableBinding, join: LazyJoin): void {
  if (b.table === 'events') b.lazy.add('pdi');
  if (join === 'person') b.lazy.add('person');
}

/** The event's person now, after merges; the person stored with it when its id has none. */
function currentPersonId(b: TableBinding): IrExpr {
  b.lazy.add('pdi');
  return eventPerson(b).personId;
}

const eventPerson = (b: TableBinding) => currentPersonOf(b.alias, column(b.alias, 'events', 'distinct_id', 'String'), column(b.alias, 'events', '$stored_person_id', 'UUID'), b.projectId);

/**
 * The current person (after merges) of a row holding an event's distinct id and stored person
 * id — on events, or on a derived table of them (a statement that groups events first): the
 * join to the person mirror, named after `alias`, and the person id over it.
 */
export function currentPersonOf(alias: string, distinctId: IrExpr, storedPersonId: IrExpr, projectId: number): { join: IrJoin; personId: IrExpr } {
  const pdi = `${alias}__pdi`;
  return {
    join: {
      type: 'LEFT',
      item: { kind: 'table', table: 'person_distinct_ids', alias: pdi, projectId },
      on: op('=', [column(pdi, 'person_distinct_ids', 'distinct_id', 'String'), distinctId]),
    },
    personId: call('coalesce', [column(pdi, 'person_distinct_ids', 'person_id', 'UUID'), storedPersonId], 'UUID'),
  };
}

/** The joins a binding's fields need, in order, each scoped to the binding's project. */
export function lazyJoins(b: TableBinding): IrJoin[] {
  const joins: IrJoin[] = [];
  const eq = (a: IrExpr, c: IrExpr) => op('=', [a, c]);
  if (b.table === 'events' && b.lazy.has('pdi')) joins.push(eventPerson(b).join);
  if (b.lazy.has('person')) {
    const personId = b.table === 'events' ? column(pdiAlias(b), 'person_distinct_ids', 'person_id', 'UUID') : column(b.alias, b.table, 'person_id', 'UUID');
    joins.push({
      type: 'LEFT',
      item: { kind: 'table', table: 'persons', alias: personAlias(b), projectId: b.projectId },
      on: eq(column(personAlias(b), 'persons', 'id', 'UUID'), personId),
    });
  }
  return joins;
}

/** `Unknown field 'a.b' at position n`. */
export function unknownField(names: string[], start: number) {
  return errorAt(`Unknown field ${quoteForMessage(names.join('.'))}`, start);
}
