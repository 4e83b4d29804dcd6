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

/**
 * Does `properties` satisfy `filter`? Throws `UncomputableFilterError` for what cannot be
 * decided here: cohort and flag filters, and operators this engine does not know.
 */
export function matchProperty(filter: PropertyFilter, properties: Record<string, unknown>, now: Date): boolean {
  if (filter.type === 'cohort') {
    throw new UncomputableFilterError(`cohort filters cannot be evaluated (cohort ${String(filter.value)})`);
  }
  if (filter.type === 'flag') {
    throw new UncomputableFilterError(`flag filter on "${filter.key}" needs the other flags of the request`);
  }
  const operator = filter.operator || 'exact';
  if (!KNOWN_OPERATORS.has(operator)) {
    throw new UncomputableFilterError(`unknown operator "${operator}"`);
  }

  const actual = Object.prototype.hasOwnProperty.call(properties, filter.key) ? properties[filter.key] : undefined;
  if (actual === undefined) return MATCH_WHEN_ABSENT.has(operator);
  if (operator === 'is_set') return true;
  if (operator === 'is_not_set') return false;
  if (actual === null && !NULL_AS_TEXT.has(operator)) return false;
  return compareValues(operator as PropertyOperator, filter.value, actual, now);
}

function compareValues(operator: PropertyOperator, expected: unknown, actual: unknown, now: Date): boolean {
  switch (operator) {
    case 'exact':
      return exactMatch(expected, actual);
    case 'is_not':
      return !exactMatch(expected, actual);
    case 'icontains':
      return asciiLower(actual).includes(asciiLower(expected));
    case 'not_icontains':
      return !asciiLower(actual).includes(asciiLower(expected));
    case 'starts_with':
      return asciiLower(actual).startsWith(asciiLower(expected));
    case 'not_starts_with':
      return !asciiLower(actual).startsWith(asciiLower(expected));
    case 'ends_with':
      return asciiLower(actual).endsWith(asciiLower(expected));
    case 'not_ends_with':
      return !asciiLower(actual).endsWith(asciiLower(expected));
    case 'regex':
    case 'not_regex': {
      const regex = compileFlagRegex(String(expected));
      // An invalid pattern matches nothing, for the negation too.
      if (!regex) return false;
      return regex.test(String(actual)) === (operator === 'regex');
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return orderedMatch(operator, expected, actual);
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact':
      return dateMatch(operator, expected, actual, now);
    case 'semver_eq':
    case 'semver_neq':
    case 'semver_gt':
    case 'semver_gte':
    case 'semver_lt':
    case 'semver_lte':
      return semverCompareMatch(operator, expected, actual);
    case 'semver_tilde':
      return semverRangeMatch(tildeRange(expected), actual);
    case 'semver_caret':
      return semverRangeMatch(caretRange(expected), actual);
    case 'semver_wildcard':
      return semverRangeMatch(wildcardRange(expected), actual);
    case 'is_set':
    case 'is_not_set':
      return operator === 'is_set';
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

function exactMatch(expected: unknown, actual: unknown): boolean {
  // "true"/"false" filters (or lists of them) compare truthiness, so `true` matches "True".
  if (isBooleanLike(expected)) return isTruthy(expected) === isTruthy(actual);
  const actualText = matchText(actual).toLowerCase();
  if (Array.isArray(expected)) return expected.some((item) => matchText(item).toLowerCase() === actualText);
  return matchText(expected).toLowerCase() === actualText;
}

// --- substring family ----------------------------------------------------------------------

// Only ASCII letters fold, as in PostHog's service and the SDK.
function asciiLower(value: unknown): string {
  return String(value).replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

// --- gt / gte / lt / lte ---------------------------------------------------------------------

function orderedMatch(operator: 'gt' | 'gte' | 'lt' | 'lte', expected: unknown, actual: unknown): boolean {
  // Same leniency as the SDK (parseFloat), so "10px" compares as 10.
  const expectedNumber = typeof expected === 'number' ? expected : parseFloat(String(expected));
  const actualNumber = typeof actual === 'number' ? actual : parseFloat(String(actual));
  if (Number.isFinite(expectedNumber) && Number.isFinite(actualNumber)) {
    return ordered(operator, actualNumber, expectedNumber);
  }
  return ordered(operator, String(actual), String(expected));
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

function semverCompareMatch(
  operator: 'semver_eq' | 'semver_neq' | 'semver_gt' | 'semver_gte' | 'semver_lt' | 'semver_lte',
  expected: unknown,
  actual: unknown,
): boolean {
  const value = parseSemver(actual);
  const bound = parseSemver(expected);
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
}

function semverRangeMatch(range: SemverRange | null, actual: unknown): boolean {
  const value: SemverTuple | null = parseSemver(actual);
  return !!range && !!value && inRange(value, range);
}
