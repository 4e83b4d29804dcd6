/**
 * Flag-on-flag dependencies (`{type: "flag", operator: "flag_evaluates_to"}`): finding the
 * flag a filter points at, deciding the filter from that flag's value, and the
 * `dependency_chain` SDKs need in `/flags/definitions`.
 */
import type { FeatureFlag, FlagValue, PropertyFilter } from './types.js';

export interface FlagIndex {
  byKey: Map<string, FeatureFlag>;
  byId: Map<string, FeatureFlag>;
}

/** Deleted flags are left out: nothing may depend on them. */
export function indexFlags(flags: readonly FeatureFlag[]): FlagIndex {
  const byKey = new Map<string, FeatureFlag>();
  const byId = new Map<string, FeatureFlag>();
  for (const flag of flags) {
    if (flag.deleted) continue;
    byKey.set(flag.key, flag);
    byId.set(String(flag.id), flag);
  }
  return { byKey, byId };
}

export function isFlagDependency(filter: PropertyFilter): boolean {
  return filter.type === 'flag';
}

/** Stored filters name the flag by id (PostHog's API rule); definitions served to SDKs use its key. */
export function resolveDependency<T>(index: { byKey: Map<string, T>; byId: Map<string, T> }, reference: string): T | undefined {
  return (/^\d+$/.test(reference) ? index.byId.get(reference) : undefined) ?? index.byKey.get(reference);
}

/** `true` holds for any enabled value, `false` only for a disabled flag, a string only for that variant. */
export function dependencyMatches(expected: unknown, value: FlagValue): boolean {
  if (typeof expected === 'boolean') {
    return expected === value || (expected && typeof value === 'string' && value !== '');
  }
  if (typeof expected === 'string') return value === expected;
  return false;
}

function dependencyRefs(flag: FeatureFlag): string[] {
  const refs: string[] = [];
  for (const condition of flag.filters.groups ?? []) {
    for (const filter of condition.properties ?? []) {
      if (isFlagDependency(filter)) refs.push(String(filter.key));
    }
  }
  return refs;
}

/**
 * The keys to evaluate, in order, before `reference` can be read, ending with its own key.
 * Empty when a flag on the way is missing or the dependencies loop (SDKs then defer to the
 * server, which reports the flag as failed).
 */
export function dependencyChain(index: FlagIndex, reference: string): string[] {
  const chain: string[] = [];
  const done = new Set<string>();
  const visiting = new Set<string>();
  const visit = (ref: string): boolean => {
    const flag = resolveDependency(index, ref);
    if (!flag) return false;
    if (done.has(flag.key)) return true;
    if (visiting.has(flag.key)) return false;
    visiting.add(flag.key);
    for (const next of dependencyRefs(flag)) {
      if (!visit(next)) return false;
    }
    visiting.delete(flag.key);
    done.add(flag.key);
    chain.push(flag.key);
    return true;
  };
  return visit(reference) ? chain : [];
}

/**
 * The flag as `/flags/definitions` should serve it: flag filters point at keys and carry
 * their `dependency_chain`, which posthog-node requires to evaluate them locally.
 */
export function withDependencyChains(flag: FeatureFlag, index: FlagIndex): FeatureFlag {
  const groups = (flag.filters.groups ?? []).map((condition) => ({
    ...condition,
    properties: condition.properties?.map((filter) => {
      if (!isFlagDependency(filter)) return filter;
      const reference = String(filter.key);
      const target = resolveDependency(index, reference);
      return { ...filter, key: target?.key ?? reference, dependency_chain: dependencyChain(index, reference) };
    }),
  }));
  return { ...flag, filters: { ...flag.filters, groups } };
}
