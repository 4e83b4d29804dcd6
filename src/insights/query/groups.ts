/**
 * Group properties in insights. The event store keeps each event's group keys but not the
 * groups' properties (they live in the metadata store), so before a query runs the service
 * finds every group property it reads — `{type: "group"}` filters anywhere in the node (series,
 * steps, entities, the query's own and the project's test-account filters) and group breakdowns —
 * and reads each one's value for every group that has it (events/group-filters.ts, bounded).
 * The kinds then read a property through the event's `$group_N` key.
 */
import type { GroupProperty } from '../../events/group-filters.js';
import { isRecord } from '../series/node.js';

/** Nodes nest (an actors query holds its insight's query); deeper than this is not a query. */
const MAX_DEPTH = 12;

const groupIndex = (value: unknown): number | null => (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 4 ? value : null);

/** The group properties a query node reads, however nested. */
export function groupPropertiesOf(node: unknown, found: GroupProperty[] = [], depth = 0): GroupProperty[] {
  if (depth > MAX_DEPTH) return found;
  if (Array.isArray(node)) {
    for (const item of node) groupPropertiesOf(item, found, depth + 1);
    return found;
  }
  if (!isRecord(node)) return found;
  // A filter `{type: "group", key, group_type_index}` or a breakdown `{type: "group", property, group_type_index}`.
  const index = groupIndex(node.group_type_index);
  const name = typeof node.key === 'string' ? node.key : node.property;
  if (node.type === 'group' && index !== null && typeof name === 'string') found.push({ index, key: name });
  // The single breakdown of a breakdownFilter.
  const breakdownIndex = groupIndex(node.breakdown_group_type_index);
  if (node.breakdown_type === 'group' && breakdownIndex !== null && typeof node.breakdown === 'string') found.push({ index: breakdownIndex, key: node.breakdown });
  for (const value of Object.values(node)) if (value !== null && typeof value === 'object') groupPropertiesOf(value, found, depth + 1);
  return found;
}
