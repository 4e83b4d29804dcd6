/** Small checks the kinds' parsers share; each failure is a 400 whose attr names the field. */
import { validationError } from '../kernel/errors.js';

export type Obj = Record<string, unknown>;

export const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An integer in [min, max], or `fallback` when absent. */
export function integerField(v: unknown, fallback: number | null, min: number, max: number, attr: string): number | null {
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw validationError(`${attr} must be an integer from ${min} to ${max}.`, attr);
  return v;
}

/** One of `allowed`, or `fallback` when absent. */
export function choiceField<T extends string>(v: unknown, allowed: readonly T[], fallback: T, attr: string): T {
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) throw validationError(`${attr} must be one of ${allowed.join(', ')}.`, attr, 'invalid_choice');
  return v as T;
}

/** Cohorts of one cohort breakdown: each is one statement of its own. */
const MAX_COHORT_BREAKDOWNS = 25;

/** A cohort breakdown's `breakdown`: a cohort id, `"all"`, or a list of them (0 also means all users, as in PostHog). */
export function cohortBreakdownIds(raw: unknown, attr: string): (number | 'all')[] {
  const items = Array.isArray(raw) ? raw : [raw];
  if (items.length === 0 || items.length > MAX_COHORT_BREAKDOWNS) throw validationError(`A cohort breakdown names 1 to ${MAX_COHORT_BREAKDOWNS} cohorts.`, attr);
  const cohorts = items.map((item): number | 'all' => {
    if (item === 'all' || item === 0 || item === '0') return 'all';
    const id = typeof item === 'string' && /^\d{1,15}$/.test(item) ? Number(item) : item;
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) throw validationError('A cohort breakdown lists cohort ids and/or "all".', attr);
    return id;
  });
  return [...new Set(cohorts)];
}

/** The property filter that keeps one cohort's members (nothing for `all`), AND-ed to a query's own. */
export function withCohort(properties: unknown, cohort: number | 'all'): unknown {
  if (cohort === 'all') return properties;
  return { type: 'AND', values: [properties ?? [], [{ type: 'cohort', key: 'id', value: cohort }]] };
}
