/**
 * The whitelist of fields an expression may read. Column SQL comes only from this table;
 * property keys stay data (bound later as JSON pointer parameters).
 */
import type { Expr, Field, Index } from './ast.js';
import { errorAt, quoteForMessage } from './errors.js';
import type { HogQLType } from './types.js';
import type { PropertyKind } from './params.js';

export interface ColumnRef {
  kind: 'column';
  sql: string;
  type: HogQLType;
  needsPerson: boolean;
}

export interface PropertyRef {
  kind: 'property';
  source: PropertyKind;
  /** Key path below `properties`: `['$browser']`, or several keys for nested JSON. */
  path: string[];
}

export type FieldRef = ColumnRef | PropertyRef;

// Event-table alias `e`, person joins `pdi` and `p` (see compile.ts for the FROM clause).
const COLUMNS: Record<string, ColumnRef> = {
  event: column('e.event', 'String'),
  distinct_id: column('e.distinct_id', 'String'),
  timestamp: column('e."timestamp"', 'DateTime'),
  created_at: column('e.created_at', 'DateTime'),
  uuid: column('e.uuid', 'UUID'),
  elements_chain: column('e.elements_chain', 'String'),
  person_id: { kind: 'column', sql: 'coalesce(pdi.person_id, e.person_id)', type: 'UUID', needsPerson: true },
  $group_0: column('e."$group_0"', 'String'),
  $group_1: column('e."$group_1"', 'String'),
  $group_2: column('e."$group_2"', 'String'),
  $group_3: column('e."$group_3"', 'String'),
  $group_4: column('e."$group_4"', 'String'),
};

function column(sql: string, type: HogQLType): ColumnRef {
  return { kind: 'column', sql, type, needsPerson: false };
}

/** Resolves a field or `x['key']` access, or throws "Unknown field" at its position. */
export function resolveField(expr: Field | Index): FieldRef {
  const names = flatten(expr);
  const [first, second] = names;
  if (names.length === 1 && Object.hasOwn(COLUMNS, first)) return COLUMNS[first];
  if (first === 'properties' && names.length >= 2) return { kind: 'property', source: 'event', path: names.slice(1) };
  if (first === 'person' && second === 'properties' && names.length >= 3) {
    return { kind: 'property', source: 'person', path: names.slice(2) };
  }
  throw errorAt(`Unknown field ${quoteForMessage(names.join('.'))}`, expr.start);
}

/** `a.b['c']` → ['a', 'b', 'c']; only string keys may appear inside brackets. */
function flatten(expr: Expr): string[] {
  if (expr.kind === 'field') return expr.chain.map((part) => part.name);
  if (expr.kind === 'index') {
    if (expr.index.kind !== 'constant' || typeof expr.index.value !== 'string') {
      throw errorAt('Only string keys are supported inside []', expr.index.start);
    }
    if (expr.target.kind !== 'field' && expr.target.kind !== 'index') {
      throw errorAt('[] can only be applied to properties', expr.start);
    }
    return [...flatten(expr.target), expr.index.value];
  }
  throw errorAt('[] can only be applied to properties', expr.start);
}
