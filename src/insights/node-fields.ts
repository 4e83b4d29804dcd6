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

/**
 * How PostHog shows a cohort breakdown value (funnels' `breakdown`, trends' `label`): the
 * cohort's name, "all users" for everyone; the id when the name is unknown (a deleted cohort).
 */
export function cohortDisplayName(cohort: number | 'all', names: ReadonlyMap<number, string> | null | undefined): string {
  if (cohort === 'all') return 'all users';
  return names?.get(cohort) ?? String(cohort);
}

/** The property filter that keeps one cohort's members (nothing for `all`), AND-ed to a query's own. */
export function withCohort(properties: unknown, cohort: number | 'all'): unknown {
  if (cohort === 'all') return properties;
  return { type: 'AND', values: [properties ?? [], [{ type: 'cohort', key: 'id', value: cohort }]] };
}

export interface BreakdownPart {
  /** `hogql`: `property` is a HogQL expression over the event. */
  type: 'event' | 'person' | 'group' | 'hogql';
  property: string;
  /** The request field naming it, for errors. */
  attr: string;
  /** The group type of a `group` part. */
  groupTypeIndex?: number;
}

export interface PropertyBreakdown {
  parts: BreakdownPart[];
  /** `breakdown_limit`: values kept, the rest merged. */
  limit: number;
  /** A cohort breakdown (no parts): one result per cohort, `all` for everyone. */
  cohorts?: (number | 'all')[];
}

const BREAKDOWN_LIMIT = 25;

/**
 * A `breakdownFilter` of property parts (`breakdown_type` + `breakdown`, or a `breakdowns` list
 * of at most `maxParts`) of the allowed types, or a cohort breakdown; null without a breakdown.
 */
export function parsePropertyBreakdown(raw: Obj | null, types: readonly BreakdownPart['type'][], maxParts: number): PropertyBreakdown | null {
  if (!raw) return null;
  const attr = 'breakdownFilter';
  const limit = integerField(raw.breakdown_limit, BREAKDOWN_LIMIT, 1, 1000, `${attr}.breakdown_limit`)!;
  const partType = (v: unknown, at: string) => choiceField(v, types, 'event', at);
  const groupIndex = (type: BreakdownPart['type'], v: unknown, at: string) => {
    if (type !== 'group') return {};
    const groupTypeIndex = integerField(v, null, 0, 4, at);
    if (groupTypeIndex === null) throw validationError('A group breakdown needs the group type index, 0 to 4.', at);
    return { groupTypeIndex };
  };
  const property = (v: unknown, at: string) => {
    if (typeof v !== 'string' || v === '' || v.length > 4000) throw validationError(`${at} must be a property name${types.includes('hogql') ? ' or HogQL expression' : ''}.`, at);
    return v;
  };
  if (raw.breakdown_type === 'cohort' && raw.breakdown !== undefined && raw.breakdown !== null) {
    return { parts: [], limit, cohorts: cohortBreakdownIds(raw.breakdown, `${attr}.breakdown`) };
  }
  let parts: BreakdownPart[];
  if (Array.isArray(raw.breakdowns) && raw.breakdowns.length > 0) {
    if (raw.breakdowns.length > maxParts) throw validationError(`At most ${maxParts} breakdown${maxParts > 1 ? 's' : ''}.`, `${attr}.breakdowns`);
    parts = raw.breakdowns.map((b, i) => {
      const at = `${attr}.breakdowns.${i}`;
      if (!isObject(b)) throw validationError(`${at} must be an object.`, at);
      const type = partType(b.type, `${at}.type`);
      return { type, property: property(b.property, `${at}.property`), attr: `${at}.property`, ...groupIndex(type, b.group_type_index, `${at}.group_type_index`) };
    });
  } else if (raw.breakdown !== undefined && raw.breakdown !== null) {
    const type = partType(raw.breakdown_type, `${attr}.breakdown_type`);
    const list = Array.isArray(raw.breakdown) ? raw.breakdown : [raw.breakdown];
    if (list.length === 0 || list.length > maxParts) throw validationError(`breakdown must name 1 to ${maxParts} propert${maxParts > 1 ? 'ies' : 'y'}.`, `${attr}.breakdown`);
    const index = groupIndex(type, raw.breakdown_group_type_index, `${attr}.breakdown_group_type_index`);
    parts = list.map((p) => ({ type, property: property(p, `${attr}.breakdown`), attr: `${attr}.breakdown`, ...index }));
  } else {
    return null;
  }
  return { parts, limit };
}
