/**
 * One property filter against one property map, server-side: the map is the full stored
 * (and overridden) set of properties, so an absent key is a plain non-match rather than the
 * SDK's "inconclusive". Where a key is present, results follow posthog-node's local
 * evaluator, so a user gets the same answer from the server as from local evaluation.
 */
import { parseDateValue } from './dates.js';
import { UncomputableFilterError } from './errors.js';
import { compileFlagRegex } from './regex.js';
import {
  caretRange,
  compareSemver,
  inRange,
  parseSemver,
  tildeRange,
  wildcardRange,
  type SemverRange,
  type SemverTuple,
} from './semver.js';
import type { PropertyFilter, PropertyOperator } from './types.js';

export const PROPERTY_OPERATORS: readonly PropertyOperator[] = [
  'exact',
  'is_not',
  'icontains',
  'not_icontains',
  'regex',
  'not_regex',
  'gt',
  'gte',
  'lt',
  'lte',
  'is_set',
  'is_not_set',
  'is_date_before',
  'is_date_after',
  'is_date_exact',
  'semver_eq',
  'semver_neq',
  'semver_gt',
  'semver_gte',
  'semver_lt',
  'semver_lte',
  'semver_tilde',
  'semver_caret',
  'semver_wildcard',
  'starts_with',
  'not_starts_with',
  'ends_with',
  'not_ends_with',
];

const KNOWN_OPERATORS = new Set<string>(PROPERTY_OPERATORS);

export function isPropertyOperator(operator: unknown): operator is PropertyOperator {
  return typeof operator === 'string' && KNOWN_OPERATORS.has(operator);
}

// The negative operators hold for a property the person/group does not have.
const MATCH_WHEN_ABSENT = new Set<string>([
  'is_not',
  'not_icontains',
  'not_regex',
  'not_starts_with',
  'not_ends_with',
  'is_not_set',
]);

// String operators read a null value as the text "null"; every other operator fails on null.
const NULL_AS_TEXT = new Set<string>([
  'exact',
  'is_not',
  'icontains',
  'not_icontains',
  'starts_with',
  'not_starts_with',
  'ends_with',
  'not_ends_with',
  'regex',
  'not_regex',
]);

/** A property filter prepared for repeated use: tests one property map. */
export type PropertyMatcher = (properties: Record<string, unknown>, now: Date) => boolean;

/** Compares a present (non-undefined) property value with the filter's operand. */
type Comparison = (actual: unknown, now: Date) => boolean;

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Does `properties` satisfy `filter`? Throws `UncomputableFilterError` for what cannot be
 * decided here: cohort and flag filters, and operators this engine does not know.
 */
export function matchProperty(filter: PropertyFilter, properties: Record<string, unknown>, now: Date): boolean {
  return compilePropertyFilter(filter)(properties, now);
}

/**
 * `matchProperty` split in two: the filter's own side (operator, operand, compiled regex …) is
 * worked out once here, so each evaluation only reads and converts the property value. A filter
 * that cannot be decided compiles to a matcher that throws when it is reached, as before.
 */
export function compilePropertyFilter(filter: PropertyFilter): PropertyMatcher {
  if (filter.type === 'cohort') {
    return undecidable(`cohort filters cannot be evaluated (cohort ${String(filter.value)})`);
  }
  if (filter.type === 'flag') {
    return undecidable(`flag filter on "${filter.key}" needs the other flags of the request`);
  }
  const operator = filter.operator || 'exact';
  if (!KNOWN_OPERATORS.has(operator)) {
    return undecidable(`unknown operator "${operator}"`);
  }

  const key = filter.key;
  const whenAbsent = MATCH_WHEN_ABSENT.has(operator);
  // is_set / is_not_set are decided by presence alone, before the null rule.
  const nullFails = !NULL_AS_TEXT.has(operator) && operator !== 'is_set' && operator !== 'is_not_set';
  const compare = compileComparison(operator as PropertyOperator, filter.value);
  return (properties, now) => {
    const actual = hasOwn.call(properties, key) ? properties[key] : undefined;
    if (actual === undefined) return whenAbsent;
    if (actual === null && nullFails) return false;
    return compare(actual, now);
  };
}

function undecidable(message: string): PropertyMatcher {
  return () => {
    throw new UncomputableFilterError(message);
  };
}

function compileComparison(operator: PropertyOperator, expected: unknown): Comparison {
  switch (operator) {
    case 'exact':
      return exactMatcher(expected);
    case 'is_not': {
      const exact = exactMatcher(expected);
      return (actual) => !exact(actual);
    }
    case 'icontains':
    case 'not_icontains': {
      const needle = asciiLower(expected);
      const wanted = operator === 'icontains';
      return (actual) => asciiLower(actual).includes(needle) === wanted;
    }
    case 'starts_with':
    case 'not_starts_with': {
      const prefix = asciiLower(expected);
      const wanted = operator === 'starts_with';
      return (actual) => asciiLower(actual).startsWith(prefix) === wanted;
    }
    case 'ends_with':
    case 'not_ends_with': {
      const suffix = asciiLower(expected);
      const wanted = operator === 'ends_with';
      return (actual) => asciiLower(actual).endsWith(suffix) === wanted;
    }
    case 'regex':
    case 'not_regex': {
      const regex = compileFlagRegex(String(expected));
      // An invalid pattern matches nothing, for the negation too.
      if (!regex) return () => false;
      const wanted = operator === 'regex';
      return (actual) => regex.test(String(actual)) === wanted;
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return orderedMatcher(operator, expected);
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact':
      // Relative dates (`-7d`) move with the clock, so the operand is read per evaluation.
      return (actual, now) => dateMatch(operator, expected, actual, now);
    case 'semver_eq':
    case 'semver_neq':
    case 'semver_gt':
    case 'semver_gte':
    case 'semver_lt':
    case 'semver_lte':
      return semverCompareMatcher(operator, expected);
    case 'semver_tilde':
      return semverRangeMatcher(tildeRange(expected));
    case 'semver_caret':
      return semverRangeMatcher(caretRange(expected));
    case 'semver_wildcard':
      return semverRangeMatcher(wildcardRange(expected));
    case 'is_set':
      return () => true;
    case 'is_not_set':
      return () => false;
  }
}

// --- exact / is_not ---------------------------------------------------------------------

function isBooleanLike(value: unknown): boolean {
  if (typeof value === 'boolean') return true;
  if (typeof value === 'string') {
    const lower = value.toLowerCase();
    return lower === 'true' || lower === 'false';
  }
  return Array.isArray(value) && value.every(isBooleanLike);
}

function isTruthy(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') return value.toLowerCase() === 'true';
  return Array.isArray(value) && value.every(isTruthy);
}

/** The text a value is compared as: strings as they are, anything else as canonical JSON. */
function matchText(value: unknown): string {
  return typeof value === 'string' ? value : canonicalJson(value);
}

// JSON with sorted object keys, like the service's serde_json maps.
function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const fields = Object.keys(record)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
    return `{${fields.join(',')}}`;
  }
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  return JSON.stringify(value) ?? 'null';
}

function exactMatcher(expected: unknown): (actual: unknown) => boolean {
  // "true"/"false" filters (or lists of them) compare truthiness, so `true` matches "True".
  if (isBooleanLike(expected)) {
    const truth = isTruthy(expected);
    return (actual) => isTruthy(actual) === truth;
  }
  if (Array.isArray(expected)) {
    const texts = new Set(expected.map((item) => matchText(item).toLowerCase()));
    return (actual) => texts.has(matchText(actual).toLowerCase());
  }
  const text = matchText(expected).toLowerCase();
  return (actual) => matchText(actual).toLowerCase() === text;
}

// --- substring family ----------------------------------------------------------------------

// Only ASCII letters fold, as in PostHog's service and the SDK.
function asciiLower(value: unknown): string {
  const text = String(value);
  return HAS_UPPER.test(text) ? text.replace(UPPER_RUNS, (letters) => letters.toLowerCase()) : text;
}

const HAS_UPPER = /[A-Z]/;
const UPPER_RUNS = /[A-Z]+/g;

// --- gt / gte / lt / lte ---------------------------------------------------------------------

function orderedMatcher(operator: 'gt' | 'gte' | 'lt' | 'lte', expected: unknown): Comparison {
  // Same leniency as the SDK (parseFloat), so "10px" compares as 10.
  const expectedNumber = typeof expected === 'number' ? expected : parseFloat(String(expected));
  const expectedText = String(expected);
  const numeric = Number.isFinite(expectedNumber);
  return (actual) => {
    const actualNumber = typeof actual === 'number' ? actual : parseFloat(String(actual));
    if (numeric && Number.isFinite(actualNumber)) return ordered(operator, actualNumber, expectedNumber);
    return ordered(operator, String(actual), expectedText);
  };
}

function ordered<T extends number | string>(operator: 'gt' | 'gte' | 'lt' | 'lte', left: T, right: T): boolean {
  switch (operator) {
    case 'gt':
      return left > right;
    case 'gte':
      return left >= right;
    case 'lt':
      return left < right;
    case 'lte':
      return left <= right;
  }
}

// --- dates -------------------------------------------------------------------------------------

function dateMatch(
  operator: 'is_date_before' | 'is_date_after' | 'is_date_exact',
  expected: unknown,
  actual: unknown,
  now: Date,
): boolean {
  const bound = parseDateValue(expected, now);
  const value = parseDateValue(actual, now);
  if (!bound || !value || Number.isNaN(bound.getTime()) || Number.isNaN(value.getTime())) return false;
  const diff = value.getTime() - bound.getTime();
  if (operator === 'is_date_before') return diff < 0;
  if (operator === 'is_date_after') return diff > 0;
  return diff === 0;
}

// --- semver ------------------------------------------------------------------------------------

function semverCompareMatcher(
  operator: 'semver_eq' | 'semver_neq' | 'semver_gt' | 'semver_gte' | 'semver_lt' | 'semver_lte',
  expected: unknown,
): Comparison {
  const bound = parseSemver(expected);
  return (actual) => {
    const value = parseSemver(actual);
    if (!value || !bound) return false;
    const order = compareSemver(value, bound);
    switch (operator) {
      case 'semver_eq':
        return order === 0;
      case 'semver_neq':
        return order !== 0;
      case 'semver_gt':
        return order > 0;
      case 'semver_gte':
        return order >= 0;
      case 'semver_lt':
        return order < 0;
      case 'semver_lte':
        return order <= 0;
    }
  };
}

function semverRangeMatcher(range: SemverRange | null): Comparison {
  return (actual) => {
    const value: SemverTuple | null = parseSemver(actual);
    return !!range && !!value && inRange(value, range);
  };
}
