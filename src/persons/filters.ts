/**
 * The persons list's `properties` parameter: a JSON list of person property filters, as the
 * events API takes them, tested with the flag engine's matcher (PostHog's operators, RE2 regexes).
 */
import { validationError } from '../kernel/errors.js';
import type { JsonObject } from '../kernel/json.js';
import { compilePropertyFilter, isPropertyOperator } from '../flags/engine/operators.js';
import { StepBudget } from '../flags/engine/regex.js';
import type { PropertyFilter } from '../flags/engine/types.js';

const ATTR = 'properties';

/** null when there is nothing to test. */
export function personPropertyMatcher(raw: string | null, now: Date): ((properties: JsonObject) => boolean) | null {
  if (raw === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw validationError('properties must be valid JSON.', ATTR);
  }
  // PostHog also sends a property group {type: AND, values: [...]}; a flat list of its values is the same filter.
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && Array.isArray((parsed as { values?: unknown }).values)) {
    const group = parsed as { type?: unknown; values: unknown[] };
    if (group.type !== undefined && group.type !== 'AND') throw validationError('Only AND groups of person property filters are supported here.', ATTR);
    parsed = group.values;
  }
  if (!Array.isArray(parsed)) throw validationError('properties must be a JSON list of property filters.', ATTR);
  const matchers = parsed.map((filter, index) => compileOne(filter, index));
  if (matchers.length === 0) return null;
  return (properties) => {
    const scope = { now, regexBudget: new StepBudget() };
    try {
      return matchers.every((match) => match(properties, scope));
    } catch {
      // A regex that needed too much work on this person's value: not a match.
      return false;
    }
  };
}

function compileOne(raw: unknown, index: number) {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw validationError(`properties[${index}] must be an object.`, ATTR);
  const filter = raw as Record<string, unknown>;
  if (filter.type !== undefined && filter.type !== 'person') {
    throw validationError(`properties[${index}]: only person property filters apply to persons (type "person").`, ATTR);
  }
  if (typeof filter.key !== 'string' || filter.key === '') throw validationError(`properties[${index}] needs a key.`, ATTR);
  const operator = filter.operator ?? 'exact';
  if (!isPropertyOperator(operator)) throw validationError(`properties[${index}]: unknown operator ${JSON.stringify(operator)}.`, ATTR);
  const compiled = { key: filter.key, value: filter.value, operator, type: 'person' } satisfies PropertyFilter;
  try {
    const match = compilePropertyFilter(compiled);
    return filter.negation === true ? (p: JsonObject, s: Parameters<typeof match>[1]) => !match(p, s) : match;
  } catch (error) {
    throw validationError(`properties[${index}]: ${(error as Error).message}`, ATTR);
  }
}
