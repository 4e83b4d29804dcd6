/**
 * Group property filters (`{type: "group", key, group_type_index}`) of the events API and of the
 * insights, and the insights' group breakdowns. The event
 * store keeps each event's group keys (`$group_0` … `$group_4`) but not the groups' properties,
 * which live in the metadata store. So before compiling, the request's group filters are found,
 * and for each the property's value of every group that has it is read; the filter then reads
 * the value through the event's group key, as one CASE over constant key lists. Every operator
 * keeps its meaning (a group without the property, or no group, reads as a missing property).
 *
 * Bounded: a filter over more than MAX_GROUPS groups having the property is a 400 until the
 * event store mirrors groups.
 */
import { validationError } from '../kernel/errors.js';
import { ir } from '../hogql/index.js';
import type { PropertyReader } from '../hogql/property-filters.js';
import type { GroupStore } from '../store/types.js';

export const MAX_GROUPS = 10_000;
const MAX_DEPTH = 12;

/** `index\u0000key` → group key → the property's text. */
export type GroupValues = Map<string, Map<string, string>>;

const slot = (index: number, key: string) => `${index}\u0000${key}`;

/** A group property some filter or breakdown reads: the group type's index and the property's key. */
export interface GroupProperty {
  index: number;
  key: string;
}

/** Reads what the request's group filters need; null when it has none. */
export function loadGroupValues(properties: unknown, projectId: number, groups: Pick<GroupStore, 'propertyOfGroups'> | null): Promise<GroupValues | null> {
  return loadGroupProperties(groupPropertiesOf(properties), projectId, groups, 'properties');
}

const groupIndex = (value: unknown): number | null => (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 4 ? value : null);

/**
 * The group properties a request reads, however nested: `{type: "group", key, group_type_index}`
 * filters, and in query nodes group breakdowns (`{type: "group", property, group_type_index}`, or a
 * breakdownFilter's `breakdown_type: "group"` with `breakdown_group_type_index`).
 */
export function groupPropertiesOf(node: unknown, found: GroupProperty[] = [], depth = 0): GroupProperty[] {
  if (depth > MAX_DEPTH || node === null || typeof node !== 'object') return found;
  if (Array.isArray(node)) {
    for (const item of node) groupPropertiesOf(item, found, depth + 1);
    return found;
  }
  const record = node as Record<string, unknown>;
  const index = groupIndex(record.group_type_index);
  const name = typeof record.key === 'string' ? record.key : record.property;
  if (record.type === 'group' && index !== null && typeof name === 'string') found.push({ index, key: name });
  const breakdownIndex = groupIndex(record.breakdown_group_type_index);
  if (record.breakdown_type === 'group' && breakdownIndex !== null && typeof record.breakdown === 'string') found.push({ index: breakdownIndex, key: record.breakdown });
  for (const value of Object.values(record)) if (value !== null && typeof value === 'object') groupPropertiesOf(value, found, depth + 1);
  return found;
}

/** Each property's value of every group that has it; null when none is wanted. A 400 on `attr` past MAX_GROUPS. */
export async function loadGroupProperties(wanted: GroupProperty[], projectId: number, groups: Pick<GroupStore, 'propertyOfGroups'> | null, attr: string): Promise<GroupValues | null> {
  if (wanted.length === 0) return null;
  if (!groups) throw validationError('Group properties are not available with this metadata store.', attr);
  const values: GroupValues = new Map();
  for (const { index, key } of wanted) {
    if (values.has(slot(index, key))) continue;
    const found = await groups.propertyOfGroups(projectId, index, key, MAX_GROUPS + 1);
    if (found.size > MAX_GROUPS) {
      throw validationError(`Group properties can be read for at most ${MAX_GROUPS} groups having the property; ${key} has more.`, attr);
    }
    values.set(slot(index, key), found);
  }
  return values;
}

/**
 * The `group` filter source over loaded values (both readers are text: groups have no declared
 * types). `keyOf` is where the group key is read: the event's `$group_N` unless said otherwise.
 */
export function groupReader(values: GroupValues, keyOf: (index: number) => ir.IrExpr = (index) => ir.column('e', 'events', `$group_${index}`, 'String')): (key: string, index: number) => PropertyReader {
  return (key, index) => {
    const byKey = values.get(slot(index, key)) ?? new Map<string, string>();
    const column = keyOf(index);
    const keysByValue = new Map<string, string[]>();
    for (const [group, value] of byKey) keysByValue.set(value, [...(keysByValue.get(value) ?? []), group]);
    const missing = ir.constant(null, 'String');
    const text: ir.IrExpr =
      keysByValue.size === 0
        ? missing
        : {
            kind: 'case',
            branches: [...keysByValue].map(([value, keys]): [ir.IrExpr, ir.IrExpr] => [
              ir.op('in', [column, ...keys.map((group) => ir.constant(group, 'String'))]),
              ir.constant(value, 'String'),
            ]),
            otherwise: missing,
            type: 'String',
          };
    return { typed: text, text };
  };
}
