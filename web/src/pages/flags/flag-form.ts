/**
 * The flag editor's state, made from a stored flag and turned back into the API's body. Filters
 * the editor does not offer (cohorts, flag dependencies, holdouts) are kept as they are.
 */
import type { FeatureFlag, FlagFilters, PropertyFilter } from '../../api/types';

export interface ConditionDraft {
  properties: PropertyFilter[];
  /** Text of the rollout field ('' = 100 %). */
  rollout: string;
  variant: string;
}

export interface VariantDraft {
  key: string;
  name: string;
  rollout: string;
}

export interface FlagDraft {
  key: string;
  name: string;
  active: boolean;
  continuity: boolean;
  /** '' = persons; otherwise a group type index. */
  aggregation: string;
  conditions: ConditionDraft[];
  multivariate: boolean;
  variants: VariantDraft[];
  /** Payload JSON text by "true" or variant key. */
  payloads: Record<string, string>;
  /** Stored filter fields the editor leaves alone. */
  otherFilters: Record<string, unknown>;
}

export const NEW_FLAG: FlagDraft = {
  key: '',
  name: '',
  active: true,
  continuity: false,
  aggregation: '',
  conditions: [{ properties: [], rollout: '100', variant: '' }],
  multivariate: false,
  variants: [
    { key: 'control', name: '', rollout: '50' },
    { key: 'test', name: '', rollout: '50' },
  ],
  payloads: {},
  otherFilters: {},
};

const payloadText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

export function draftOf(flag: FeatureFlag): FlagDraft {
  const { groups, multivariate, payloads, aggregation_group_type_index, ...otherFilters } = flag.filters;
  return {
    key: flag.key,
    name: flag.name,
    active: flag.active,
    continuity: flag.ensure_experience_continuity,
    aggregation: aggregation_group_type_index == null ? '' : String(aggregation_group_type_index),
    conditions: groups.map((g) => ({ properties: g.properties ?? [], rollout: g.rollout_percentage == null ? '100' : String(g.rollout_percentage), variant: g.variant ?? '' })),
    multivariate: (multivariate?.variants.length ?? 0) > 0,
    variants: multivariate?.variants.length
      ? multivariate.variants.map((v) => ({ key: v.key, name: v.name ?? '', rollout: String(v.rollout_percentage) }))
      : NEW_FLAG.variants,
    payloads: Object.fromEntries(Object.entries(payloads ?? {}).map(([key, value]) => [key, payloadText(value)])),
    otherFilters,
  };
}

const NUMERIC_OPERATORS = new Set(['gt', 'gte', 'lt', 'lte']);
/** Operators that take several values ("any of"), typed as one comma-separated text. */
const LIST_OPERATORS = new Set(['exact', 'is_not']);

export const takesList = (operator: string | null | undefined) => LIST_OPERATORS.has(operator ?? 'exact');

/** How a stored value reads in its text field. */
export function valueText(filter: PropertyFilter): string {
  const value = filter.value;
  if (Array.isArray(value) && takesList(filter.operator)) return value.map(String).join(', ');
  return typeof value === 'string' || typeof value === 'number' ? String(value) : JSON.stringify(value ?? '');
}

/** The value to store: a list for "equals"/"does not equal", a number where the operator compares numbers, the text otherwise. */
function filterValue(filter: PropertyFilter): unknown {
  const value = filter.value;
  if (typeof value !== 'string') return value;
  if (takesList(filter.operator)) return value.split(',').map((part) => part.trim()).filter(Boolean);
  if (NUMERIC_OPERATORS.has(filter.operator ?? '') && value.trim() !== '' && !Number.isNaN(Number(value))) return Number(value);
  return value;
}

const percentage = (text: string) => (text.trim() === '' ? 100 : Number(text));

/** The body of POST/PATCH …/feature_flags/. Problems the API would also refuse are left to it, so its words are shown. */
export function bodyOf(draft: FlagDraft): Record<string, unknown> {
  const aggregation = draft.aggregation === '' ? null : Number(draft.aggregation);
  const variantKeys = new Set(draft.multivariate ? draft.variants.map((v) => v.key) : ['true']);
  const filters: FlagFilters & Record<string, unknown> = {
    ...draft.otherFilters,
    aggregation_group_type_index: aggregation,
    groups: draft.conditions.map((c) => ({
      properties: conditionProperties(c, aggregation),
      rollout_percentage: percentage(c.rollout),
      variant: draft.multivariate && c.variant ? c.variant : null,
    })),
    multivariate: draft.multivariate
      ? { variants: draft.variants.map((v) => ({ key: v.key.trim(), name: v.name.trim() || null, rollout_percentage: Number(v.rollout) })) }
      : null,
    payloads: Object.fromEntries(Object.entries(draft.payloads).filter(([key, text]) => variantKeys.has(key) && text.trim() !== '')),
  };
  return { key: draft.key.trim(), name: draft.name, active: draft.active, ensure_experience_continuity: draft.continuity, filters };
}

/** A condition's property filters as the API takes them (values typed, group filters given their type index). */
export function conditionProperties(condition: ConditionDraft, aggregation: number | null): PropertyFilter[] {
  return condition.properties.map((p) => {
    const typed: PropertyFilter = { ...p, value: filterValue(p) };
    if (typed.operator === 'is_set' || typed.operator === 'is_not_set') typed.value = typed.operator;
    if (typed.type === 'group') typed.group_type_index = aggregation;
    return typed;
  });
}

/** "100% of users", "3 conditions", "2 variants". */
export function releaseSummary(flag: FeatureFlag, groupTypes: Record<string, string>): string {
  const unit = flag.filters.aggregation_group_type_index == null ? 'users' : `${groupTypes[String(flag.filters.aggregation_group_type_index)] ?? 'unnamed'} groups`;
  const variants = flag.filters.multivariate?.variants.length ?? 0;
  const groups = flag.filters.groups;
  const conditions = groups.length === 1 && !(groups[0].properties?.length) ? `${groups[0].rollout_percentage ?? 100}% of ${unit}` : `${groups.length} condition${groups.length === 1 ? '' : 's'} on ${unit}`;
  return variants ? `${conditions}, ${variants} variants` : conditions;
}

export const FLAG_OPERATORS: { value: string; label: string }[] = [
  { value: 'exact', label: 'equals' },
  { value: 'is_not', label: 'does not equal' },
  { value: 'icontains', label: 'contains' },
  { value: 'not_icontains', label: 'does not contain' },
  { value: 'regex', label: 'matches regex' },
  { value: 'not_regex', label: 'does not match regex' },
  { value: 'gt', label: '>' },
  { value: 'gte', label: '≥' },
  { value: 'lt', label: '<' },
  { value: 'lte', label: '≤' },
  { value: 'is_set', label: 'is set' },
  { value: 'is_not_set', label: 'is not set' },
  { value: 'is_date_before', label: 'is before (date)' },
  { value: 'is_date_after', label: 'is after (date)' },
  { value: 'semver_gte', label: 'version ≥' },
  { value: 'semver_lt', label: 'version <' },
  { value: 'semver_eq', label: 'version =' },
];
