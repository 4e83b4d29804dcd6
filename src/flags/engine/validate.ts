/**
 * Management-API validation of a flag's key and `filters`, with PostHog's rules and
 * DRF-style `attr` paths, so a stored flag is always one the evaluator can read.
 */
import { isPlainObject, type JsonObject } from '../../kernel/json.js';
import { FlagValidationError } from './errors.js';
import { parseDateValue } from './dates.js';
import { isPropertyOperator } from './operators.js';
import { compileFlagRegex } from './regex.js';
import { caretRange, parseSemver, tildeRange, wildcardRange } from './semver.js';
import type {
  FlagCondition,
  FlagFilters,
  FlagHoldout,
  FlagMultivariate,
  FlagVariant,
  PropertyFilter,
} from './types.js';

export { FlagValidationError } from './errors.js';

const KEY_PATTERN = /^[a-zA-Z0-9_-]+$/;
const MAX_KEY_LENGTH = 400;
const MAX_LIST_VALUES = 1000;
const MAX_GROUP_TYPE_INDEX = 4;

function fail(attr: string, detail: string, code?: FlagValidationError['code']): never {
  throw new FlagValidationError(attr, detail, code);
}

export function validateFlagKey(key: unknown): string {
  if (typeof key !== 'string') fail('key', 'Not a valid string.', 'invalid');
  if (key.length === 0) fail('key', 'This field may not be blank.', 'blank');
  if (key.length > MAX_KEY_LENGTH) fail('key', `Ensure this field has no more than ${MAX_KEY_LENGTH} characters.`, 'max_length');
  if (!KEY_PATTERN.test(key)) fail('key', 'Only letters, numbers, hyphens (-) & underscores (_) are allowed.', 'invalid_key');
  return key;
}

/** Validates and normalises `filters`; unknown top-level keys are kept as they are. */
export function validateFlagFilters(filters: unknown): FlagFilters {
  if (!isPlainObject(filters)) fail('filters', 'Filters must be an object.');
  const aggregation = groupTypeIndex(filters.aggregation_group_type_index, 'filters__aggregation_group_type_index');
  const multivariate = validateMultivariate(filters.multivariate);
  const variantKeys = new Set((multivariate?.variants ?? []).map((variant) => variant.key));

  const rawGroups = filters.groups ?? [];
  if (!Array.isArray(rawGroups)) fail('filters__groups', 'Expected a list of condition sets.');
  const groups = rawGroups.map((condition, index) =>
    validateCondition(condition, `filters__groups__${index}`, variantKeys, aggregation),
  );

  const normalised: FlagFilters = {
    ...filters,
    groups,
    multivariate,
    payloads: validatePayloads(filters.payloads, variantKeys),
    aggregation_group_type_index: aggregation,
  };
  if ('holdout' in filters) normalised.holdout = validateHoldout(filters.holdout);
  if (filters.super_groups !== undefined && filters.super_groups !== null) {
    if (!Array.isArray(filters.super_groups)) fail('filters__super_groups', 'Expected a list of condition sets.');
    // Early-access enrollment is a person concept, whatever the flag aggregates on.
    normalised.super_groups = filters.super_groups.map((condition, index) =>
      validateCondition(condition, `filters__super_groups__${index}`, variantKeys, null),
    );
  }
  for (const name of ['early_exit', 'feature_enrollment'] as const) {
    const value = filters[name];
    if (value !== undefined && value !== null && typeof value !== 'boolean') fail(`filters__${name}`, 'Must be a boolean.');
  }
  return normalised;
}

function groupTypeIndex(value: unknown, attr: string): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_GROUP_TYPE_INDEX) {
    fail(attr, `Group type index must be an integer between 0 and ${MAX_GROUP_TYPE_INDEX}.`);
  }
  return value;
}

function isPercentage(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 100;
}

function validateMultivariate(raw: unknown): FlagMultivariate | null {
  if (raw === undefined || raw === null) return null;
  if (!isPlainObject(raw)) fail('filters__multivariate', 'Multivariate must be an object with a list of variants.');
  const attr = 'filters__multivariate__variants';
  if (!Array.isArray(raw.variants) || raw.variants.length === 0) fail(attr, 'Multivariate flags need at least one variant.');

  const seen = new Set<string>();
  const variants: FlagVariant[] = raw.variants.map((variant: unknown, index: number) => {
    const at = `${attr}__${index}`;
    if (!isPlainObject(variant)) fail(at, 'Each variant must be an object.');
    const { key, name, rollout_percentage: rollout } = variant;
    if (typeof key !== 'string' || key.length > MAX_KEY_LENGTH || !KEY_PATTERN.test(key)) {
      fail(`${at}__key`, 'Variant keys may only contain letters, numbers, hyphens (-) & underscores (_).');
    }
    if (seen.has(key)) fail(attr, `Duplicate variant key "${key}".`);
    seen.add(key);
    if (!isPercentage(rollout)) fail(`${at}__rollout_percentage`, 'Variant rollout percentage must be a number between 0 and 100.');
    if (name !== undefined && name !== null && typeof name !== 'string') fail(`${at}__name`, 'Variant name must be a string.');
    return { ...variant, key, rollout_percentage: rollout } as FlagVariant;
  });

  const sum = variants.reduce((total, variant) => total + variant.rollout_percentage, 0);
  // Tolerate float noise such as 33.3 + 33.3 + 33.4, which is still "exactly" 100.
  if (Math.abs(sum - 100) > 1e-9) fail(attr, 'Invalid variant definitions: Variant rollout percentages must sum to 100.');
  return { ...raw, variants };
}

function validateCondition(
  raw: unknown,
  attr: string,
  variantKeys: ReadonlySet<string>,
  flagAggregation: number | null,
): FlagCondition {
  if (!isPlainObject(raw)) fail(attr, 'Each condition set must be an object.');

  const rollout = raw.rollout_percentage ?? null;
  if (rollout !== null && !isPercentage(rollout)) {
    fail(`${attr}__rollout_percentage`, 'Rollout percentage must be a number between 0 and 100, or null.');
  }

  const variant = raw.variant ?? null;
  if (variant !== null && (typeof variant !== 'string' || !variantKeys.has(variant))) {
    fail(`${attr}__variant`, 'Filters are not valid (variant override does not exist)');
  }

  const condition: FlagCondition = { ...raw, properties: [], rollout_percentage: rollout, variant };
  let aggregation = flagAggregation;
  if ('aggregation_group_type_index' in raw) {
    const own = groupTypeIndex(raw.aggregation_group_type_index, `${attr}__aggregation_group_type_index`);
    condition.aggregation_group_type_index = own;
    aggregation = own ?? flagAggregation;
  }

  const properties = raw.properties ?? [];
  if (!Array.isArray(properties)) fail(`${attr}__properties`, 'Expected a list of properties.');
  condition.properties = properties.map((property, index) =>
    validateProperty(property, `${attr}__properties__${index}`, aggregation),
  );
  return condition;
}

function validateProperty(raw: unknown, attr: string, aggregation: number | null): PropertyFilter {
  if (!isPlainObject(raw)) fail(attr, 'Each property must be an object.');
  const key = typeof raw.key === 'number' ? String(raw.key) : raw.key;
  if (typeof key !== 'string' || key.trim() === '') fail(`${attr}__key`, 'Property key is required.');
  if (raw.negation !== undefined && typeof raw.negation !== 'boolean') fail(`${attr}__negation`, 'Must be a boolean.');

  // Untyped filters are read as the condition's own kind of property.
  const type = raw.type ?? (aggregation === null ? 'person' : 'group');
  const property: PropertyFilter = { ...raw, key, type: String(type) };

  if (aggregation === null) {
    if (type !== 'person' && type !== 'cohort' && type !== 'flag') {
      fail(`${attr}__type`, 'Filters are not valid (can only use person, cohort, and flag properties)');
    }
  } else {
    if (type !== 'group') fail(`${attr}__type`, 'Filters are not valid (can only use group properties)');
    const index = raw.group_type_index ?? aggregation;
    if (index !== aggregation) fail(`${attr}__group_type_index`, 'Filters are not valid (can only use group properties)');
    property.group_type_index = aggregation;
  }

  if (type === 'flag') validateFlagDependency(raw, attr);
  else if (type === 'cohort') validateCohortFilter(raw, attr);
  else validatePropertyValue(raw, key, attr);
  return property;
}

function validateFlagDependency(raw: JsonObject, attr: string): void {
  if (raw.operator !== 'flag_evaluates_to') {
    fail(`${attr}__operator`, "Flag properties must use the 'flag_evaluates_to' operator");
  }
  if (typeof raw.value !== 'boolean' && (typeof raw.value !== 'string' || raw.value === '')) {
    fail(`${attr}__value`, 'Flag properties must compare to true, false or a variant key.');
  }
}

function validateCohortFilter(raw: JsonObject, attr: string): void {
  const operator = raw.operator ?? 'in';
  if (operator !== 'in' && operator !== 'not_in') fail(`${attr}__operator`, `Unknown cohort operator: ${String(operator)}`);
  const id = raw.value;
  if (!(typeof id === 'number' && Number.isInteger(id)) && !(typeof id === 'string' && /^\d+$/.test(id))) {
    fail(`${attr}__value`, 'Cohort filters need a cohort id.');
  }
}

function validatePropertyValue(raw: JsonObject, key: string, attr: string): void {
  const operator = raw.operator ?? 'exact';
  if (!isPropertyOperator(operator)) fail(`${attr}__operator`, `Unknown operator: ${String(operator)}`, 'invalid_operator');
  const value = raw.value;
  const at = `${attr}__value`;
  const invalid = (): never => fail(at, `Invalid value for operator ${operator}: ${JSON.stringify(value)}`, 'invalid_value');

  switch (operator) {
    case 'is_set':
    case 'is_not_set':
      return;
    case 'exact':
    case 'is_not': {
      const items = Array.isArray(value) ? value : [value];
      if (items.length > MAX_LIST_VALUES) {
        fail(at, `Property group expressions of type ${key} cannot contain more than ${MAX_LIST_VALUES} values.`);
      }
      if (!items.every((item) => ['string', 'number', 'boolean'].includes(typeof item))) invalid();
      return;
    }
    case 'regex':
    case 'not_regex':
      if (typeof value !== 'string') invalid();
      if (!compileFlagRegex(value as string)) fail(at, `Invalid regular expression: ${String(value)}`, 'invalid_value');
      return;
    case 'icontains':
    case 'not_icontains':
    case 'starts_with':
    case 'not_starts_with':
    case 'ends_with':
    case 'not_ends_with':
      if (typeof value !== 'string') invalid();
      return;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      if (typeof value !== 'string' && !(typeof value === 'number' && Number.isFinite(value))) invalid();
      return;
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact':
      if (!parseDateValue(value, new Date())) fail(at, `Invalid date value: ${String(value)}`, 'invalid_date');
      return;
    case 'semver_tilde':
      if (!tildeRange(value)) fail(at, `Invalid semver value: ${String(value)}`, 'invalid_value');
      return;
    case 'semver_caret':
      if (!caretRange(value)) fail(at, `Invalid semver value: ${String(value)}`, 'invalid_value');
      return;
    case 'semver_wildcard':
      if (typeof value !== 'string' || !wildcardRange(value)) fail(at, `Invalid semver value: ${String(value)}`, 'invalid_value');
      return;
    default:
      // semver_eq / neq / gt / gte / lt / lte
      if ((typeof value !== 'string' && typeof value !== 'number') || !parseSemver(value)) {
        fail(at, `Invalid semver value: ${String(value)}`, 'invalid_value');
      }
  }
}

function validatePayloads(raw: unknown, variantKeys: ReadonlySet<string>): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (!isPlainObject(raw)) fail('filters__payloads', 'Payloads must be passed as a dictionary');
  for (const [key, value] of Object.entries(raw)) {
    if (key !== 'true' && !variantKeys.has(key)) {
      fail('filters__payloads', `Payload key "${key}" is neither "true" nor a variant key.`);
    }
    if (typeof value === 'string') {
      try {
        JSON.parse(value);
      } catch {
        fail(`filters__payloads__${key}`, 'Payload value is not valid JSON');
      }
    }
  }
  return { ...raw };
}

function validateHoldout(raw: unknown): FlagHoldout | null {
  if (raw === null || raw === undefined) return null;
  if (!isPlainObject(raw) || typeof raw.id !== 'number' || !Number.isInteger(raw.id) || !isPercentage(raw.exclusion_percentage)) {
    fail('filters__holdout', 'Holdout must be an object with an integer id and an exclusion_percentage between 0 and 100.');
  }
  return { ...raw, id: raw.id, exclusion_percentage: raw.exclusion_percentage };
}
