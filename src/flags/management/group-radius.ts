/**
 * The blast radius of a group flag's condition: how many groups of the flag's type its group
 * property filters match, of all groups of that type. Each group is tested with the engine's own
 * matchers, so the count means what `/flags` would answer for that group's stored properties.
 */
import { validationError } from '../../kernel/errors.js';
import type { GroupCursor, GroupStore } from '../../store/types.js';
import { UncomputableFilterError } from '../engine/errors.js';
import { compilePropertyFilter, isPropertyOperator } from '../engine/operators.js';
import { StepBudget } from '../engine/regex.js';
import type { PropertyFilter } from '../engine/types.js';

/** PostHog's five group type slots. */
const MAX_GROUP_TYPE_INDEX = 4;
/** Groups read per store call: few round trips, bounded memory. */
const PAGE_SIZE = 1_000;

/** The preview's group type index: an integer slot, or a 400 naming the field. */
export function groupTypeIndexOf(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_GROUP_TYPE_INDEX) {
    throw validationError(`group_type_index must be an integer from 0 to ${MAX_GROUP_TYPE_INDEX}.`, 'group_type_index');
  }
  return value;
}

/**
 * The condition's filters, each a property filter on this group type. Person, cohort and flag
 * filters are refused: a group has none of them to test (PostHog's group flags take group
 * properties only).
 */
export function groupFiltersOf(properties: unknown[], groupTypeIndex: number): PropertyFilter[] {
  return properties.map((filter, i) => {
    const attr = `condition.properties.${i}`;
    if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) throw validationError('A property filter must be an object.', attr);
    const f = filter as Record<string, unknown>;
    if (f.type !== undefined && f.type !== 'group') throw validationError(`A group flag's condition takes group property filters, not "${String(f.type)}".`, `${attr}.type`, 'invalid_choice');
    if (f.group_type_index !== undefined && f.group_type_index !== null && f.group_type_index !== groupTypeIndex) {
      throw validationError(`The filter is on group type ${String(f.group_type_index)}, the preview counts group type ${groupTypeIndex}.`, `${attr}.group_type_index`);
    }
    if (typeof f.key !== 'string' || f.key === '') throw validationError('A property filter needs a key.', `${attr}.key`, 'required');
    if (f.operator !== undefined && f.operator !== null && !isPropertyOperator(f.operator)) throw validationError(`Unknown operator ${JSON.stringify(f.operator)}.`, `${attr}.operator`);
    return { key: f.key, value: f.value, operator: f.operator as PropertyFilter['operator'], type: 'group', group_type_index: groupTypeIndex };
  });
}

/** Every group of the type, page by page (newest first, as the store lists them), tested against every filter. */
export async function countMatchingGroups(
  groups: Pick<GroupStore, 'list'>,
  projectId: number,
  groupTypeIndex: number,
  filters: PropertyFilter[],
): Promise<{ matching: number; total: number }> {
  const matchers = filters.map(compilePropertyFilter);
  const now = new Date();
  let matching = 0;
  let total = 0;
  let after: GroupCursor | null = null;
  do {
    const page = await groups.list({ projectId, groupTypeIndex, search: null, after, limit: PAGE_SIZE });
    for (const group of page.results) {
      total++;
      const scope = { now, regexBudget: new StepBudget() };
      try {
        if (matchers.every((match) => match(group.properties, scope))) matching++;
      } catch (error) {
        // A regex that needs too much work decides nothing: the group is counted as not matching.
        if (!(error instanceof UncomputableFilterError)) throw error;
      }
    }
    const last = page.results.at(-1);
    after = page.more && last ? { created_at: last.created_at, group_key: last.group_key } : null;
  } while (after !== null);
  return { matching, total };
}
