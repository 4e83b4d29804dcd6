/** Query parameters that carry lists: search words, JSON-encoded lists, comma lists. */
import { validationError } from '../kernel/errors.js';
import type { JsonSchema } from './schemas.js';

/** Words of a search box; each must match. */
export const searchWords = (search: string | undefined): string[] => (search ?? '').split(/\s+/).filter(Boolean);

/** A JSON-encoded list of strings, or null when absent (an empty value counts as absent). */
export function jsonStringList(raw: string | undefined, attr: string): string[] | null {
  if (raw === undefined || raw === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    value = undefined;
  }
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw validationError(`${attr} must be a JSON-encoded list of strings, e.g. ["first", "second"].`, attr);
  }
  return value;
}

/** `a,b,c` → ["a", "b", "c"] (blank items dropped), or null when absent. */
export const commaList = (raw: string | undefined): string[] | null =>
  raw === undefined || raw === '' ? null : raw.split(',').map((item) => item.trim()).filter(Boolean);

// The texts DRF's BooleanField reads as true and false.
const TRUE_TEXTS = new Set(['true', 't', 'yes', 'y', 'on', '1']);
const FALSE_TEXTS = new Set(['false', 'f', 'no', 'n', 'off', '0']);

/**
 * Reads a query string as Django and DRF do, before the route's schema checks it: a repeated
 * parameter counts with its last value (unless the schema takes a list), an empty one as absent
 * when it must be a number or boolean (DRF falls back to the default), and booleans may be
 * written `1`/`yes`/`on`/`t` (and their opposites) in any case.
 */
export function readQueryLikeDrf(query: Record<string, unknown>, properties: Record<string, JsonSchema>): void {
  for (const [name, raw] of Object.entries(query)) {
    const schema = properties[name];
    if (!schema) continue;
    const types = [schema.type ?? []].flat() as string[];
    let value = raw;
    if (Array.isArray(value) && !types.includes('array')) value = value[value.length - 1];
    if (typeof value === 'string' && types.includes('boolean')) {
      const lower = value.toLowerCase();
      if (TRUE_TEXTS.has(lower)) value = 'true';
      else if (FALSE_TEXTS.has(lower)) value = 'false';
    }
    if (value === '' && types.every((type) => type === 'integer' || type === 'number' || type === 'boolean')) {
      delete query[name];
      continue;
    }
    query[name] = value;
  }
}
