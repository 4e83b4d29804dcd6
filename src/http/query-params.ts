/** Query parameters that carry lists: search words, JSON-encoded lists, comma lists. */
import { validationError } from '../kernel/errors.js';

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
    throw validationError(`${attr} must be a JSON-encoded list of strings, e.g. ["$pageview"].`, attr);
  }
  return value;
}

/** `a,b,c` → ["a", "b", "c"] (blank items dropped), or null when absent. */
export const commaList = (raw: string | undefined): string[] | null =>
  raw === undefined || raw === '' ? null : raw.split(',').map((item) => item.trim()).filter(Boolean);
